public import Basics
import Foundation
public import StateStore

/// How long content that no manifest on the main branch derives is kept after it was last submitted
/// (`--prune-grace DAYS`), so that an open pull request's content is not pruned under it: its next
/// push submits it again and restarts the clock.
public struct PruneGrace: Sendable, Hashable {
    public var days: Int

    public init(days: Int) {
        self.days = days
    }

    /// Until when the recorded content is kept; nil when the grace period is over, or the record
    /// does not say when it was submitted (content the tool did not upload).
    public func keptUntil(_ record: ContentRecord?, now: UTCTime) -> UTCTime? {
        guard let record, days > 0 else { return nil }
        let until = record.lastSubmittedAt + Int64(days) * UTCTime.day
        return until > now ? until : nil
    }
}

/// Upload actions for the content of a pull request, submitted before the merge.
public enum Submissions {
    /// Records `by` as a submitter of every identifier it uploaded, or found already uploaded.
    public static func record(_ identifiers: [String], by: String, run: String?, at time: UTCTime, in document: inout StateDocument) {
        for identifier in identifiers.sorted() {
            document.recordSubmission(of: identifier, by: by, at: time, run: run)
        }
    }
}

/// Content a prune keeps because a pull request submitted it within the grace period.
struct GraceKept {
    var until: UTCTime
    /// Who submitted it, sorted.
    var by: [String]
}

extension PlanContext {
    /// Whether the grace period keeps `identifier`: only content a pull request submitted
    /// (`apply --only-uploads`) is kept this way; what the main branch alone uploaded is governed
    /// by the rollback versions, as before. Nil without a time to count to.
    func graceKept(_ identifier: String) -> GraceKept? {
        guard let now = options.now, let record = remote.state?.document?.record(for: identifier),
              let submissions = record.submissions, !submissions.isEmpty,
              let until = PruneGrace(days: options.pruneGraceDays).keptUntil(record, now: now) else { return nil }
        return GraceKept(until: until, by: submissions.map(\.by).sorted())
    }

    /// Content only pull requests submitted: the main branch never derived it.
    func isUnmergedSubmission(_ identifier: String) -> Bool {
        guard let record = remote.state?.document?.record(for: identifier) else { return false }
        return record.submissions != nil && record.mergedAt == nil
    }

    /// Who submitted `identifier` from a pull request, within the grace period or not.
    func submitters(of identifier: String) -> [String] {
        (remote.state?.document?.record(for: identifier)?.submissions ?? []).map(\.by).sorted()
    }
}
