public import Basics
import Foundation
public import RetentionMessagingModels
public import StateStore

/// What an upload-only apply (`apply --only-uploads`) submitted for App Review: the line a pull
/// request's comment shows, and the identifiers recorded as submitted by it.
public struct SubmissionSummary: Sendable, Hashable {
    /// `pr-12`.
    public var by: String
    public var at: UTCTime
    /// The run that submitted (a GitHub Actions run URL), when known.
    public var run: String?
    /// Per content kind (every registered kind, in the kinds' declared order): how many this run uploaded.
    public var uploaded: [(kind: ContentKind, count: Int)]
    /// Derived content pull requests had already submitted (an earlier push of this one, or another
    /// open pull request) that the main branch does not use: recorded as submitted by this one too,
    /// so a prune keeps it while any of them is open.
    public var alreadySubmitted: Int
    /// Derived content that was already at Apple as the main branch's (it uploaded or merged it, or
    /// the state does not know it): neither counted nor recorded as this pull request's, so a prune
    /// never labels the main branch's versions as a pull request's.
    public var alreadyOnMain: Int
    /// The derived content this run recorded as submitted by `by`, sorted: what it uploaded now,
    /// and what only pull requests had submitted before.
    public var identifiers: [String]

    /// Counts the upload results of `report` against what `planned` derives and read.
    public init(_ planned: PlanResult, report: ApplyReport, by: String, run: String?, at: UTCTime) {
        self.by = by
        self.at = at
        self.run = run
        let succeeded = Set(report.results.filter { $0.outcome == .done || $0.outcome == .alreadyDone }.map(\.id))
        let uploadedNow = Set(report.results.filter { $0.outcome == .done }.map(\.id))
        let document = planned.remote.state?.document
        var mine: Set<String> = [], shared: Set<String> = [], onMain: Set<String> = []
        var uploaded: [(kind: ContentKind, count: Int)] = []
        for kind in ContentKind.allCases {
            let resource = RemoteResources.resource(of: kind)
            let states = resource.remoteStates(in: planned.remote)
            let upload = { (identifier: String) in ActionID(resource.uploadKind, identifier).rawValue }
            let present = Set(resource.derived(in: planned.desired).map(\.identifier).filter {
                states[$0] != nil || succeeded.contains(upload($0))
            })
            let now = present.filter { uploadedNow.contains(upload($0)) }
            uploaded.append((kind, now.count))
            mine.formUnion(now)
            for identifier in present.subtracting(now) {
                if let record = document?.record(for: identifier), record.isPullRequestsOnly {
                    shared.insert(identifier)
                } else {
                    onMain.insert(identifier)
                }
            }
        }
        self.uploaded = uploaded
        identifiers = mine.union(shared).sorted()
        alreadySubmitted = shared.count
        alreadyOnMain = onMain.count
    }

    public static func == (lhs: SubmissionSummary, rhs: SubmissionSummary) -> Bool {
        (lhs.by, lhs.at, lhs.run, lhs.alreadySubmitted, lhs.alreadyOnMain, lhs.identifiers)
            == (rhs.by, rhs.at, rhs.run, rhs.alreadySubmitted, rhs.alreadyOnMain, rhs.identifiers)
            && lhs.uploaded.elementsEqual(rhs.uploaded) { $0.kind == $1.kind && $0.count == $1.count }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(by)
        hasher.combine(at)
        hasher.combine(identifiers)
        for (kind, count) in uploaded {
            hasher.combine(kind)
            hasher.combine(count)
        }
    }
}

extension Submissions {
    /// Records the submission in the state document: read, note every identifier, write on the
    /// condition of the read; after a conflict (another job wrote meanwhile) once more over theirs.
    public static func write(_ summary: SubmissionSummary, to binding: StateBinding,
                             clock: any RetentionClock) async throws(StateStoreError) {
        var lastError: StateStoreError?
        for _ in 0..<2 {
            let read = try await binding.read()
            var document = read.document ?? StateDocument(owner: binding.store.owner)
            let before = document
            record(summary.identifiers, by: summary.by, run: summary.run, at: summary.at, in: &document)
            guard document != before else { return }
            document.updatedAt = clock.time()
            if let writer = binding.writer {
                document.writtenBy = writer
                document.serial = (before.serial ?? 0) + 1
            }
            do {
                _ = try await binding.store.write(document, condition: read.writeCondition)
                return
            } catch where error.kind == .conflict {
                lastError = error
            }
        }
        throw lastError ?? StateStoreError(.conflict, store: binding.name, "other writers kept changing the state document")
    }
}
