public import Foundation
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
    public func keptUntil(_ record: ContentRecord?, now: Date) -> Date? {
        guard let record, days > 0 else { return nil }
        let until = record.lastSubmittedAt.addingTimeInterval(Double(days) * 86_400)
        return until > now ? until : nil
    }
}

/// Upload actions for the content of a pull request, submitted before the merge.
public enum Submissions {
    /// Records `by` as a submitter of every identifier it uploaded, or found already uploaded.
    public static func record(_ identifiers: [String], by: String, run: String?, at time: Date, in document: inout StateDocument) {
        for identifier in identifiers.sorted() {
            document.recordSubmission(of: identifier, by: by, at: time, run: run)
        }
    }
}
