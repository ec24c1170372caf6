public import Basics
public import RetentionMessaging
public import RetentionMessagingModels
import Foundation
import Runtime
public import StateStore

/// What happened to one action during an apply.
public struct ActionResult: Codable, Sendable, Hashable {
    public enum Outcome: String, Codable, Sendable, Hashable {
        /// Performed now.
        case done
        /// The remote already had it (409 on upload, 404 on delete).
        case alreadyDone = "already_done"
        /// Not performed: blocked by review, or not part of a saved plan.
        case blocked
        /// Not performed: the plan marks it as an error.
        case error
        /// Not performed, safely (an image Apple says is still in use).
        case skipped
        /// Not performed: this run performs only some kinds of action (`apply --only-uploads`).
        case notInRun = "not_in_run"
        /// The request failed; the apply stopped here.
        case failed
    }

    /// What a blocked action waits for, when it is something other than App Review.
    public enum Awaiting: String, Codable, Sendable, Hashable {
        /// Apple sets a production realtime URL only after a sandbox performance test passed (403 4030026).
        case performanceTest = "performance_test"
    }

    public var id: String
    public var kind: ActionKind
    public var title: String
    public var outcome: Outcome
    public var detail: String?
    public var awaiting: Awaiting?

    public init(id: String, kind: ActionKind, title: String, outcome: Outcome, detail: String? = nil) {
        self.id = id
        self.kind = kind
        self.title = title
        self.outcome = outcome
        self.detail = detail
    }
}

/// Why apply did not simply perform an action: its outcome, in words, and what it waits for.
struct Refusal {
    var outcome: ActionResult.Outcome
    var detail: String
    var awaiting: ActionResult.Awaiting?

    init(_ outcome: ActionResult.Outcome, _ detail: String, awaiting: ActionResult.Awaiting? = nil) {
        self.outcome = outcome
        self.detail = detail
        self.awaiting = awaiting
    }
}

extension ActionResult {
    /// The detail of a production realtime URL Apple refused (403 4030026): a waiting state, not an error.
    public static let realtimeURLAwaitingTest = """
    waiting for a sandbox performance test to pass: Apple sets a production realtime URL only after one has \
    (403 4030026)
    """

    /// This result is Apple refusing the production realtime URL for want of a passed performance test.
    public var isRealtimeURLAwaitingTest: Bool { kind == .setRealtimeURL && awaiting == .performanceTest }
}

/// The record of an apply (`apply --report FILE`): what succeeded before any failure.
public struct ApplyReport: Codable, Sendable, Hashable {
    public var formatVersion: String
    public var environment: Environment
    /// Every action was attempted and none failed.
    public var completed: Bool
    public var failure: String?
    /// In the order they ran.
    public var results: [ActionResult]
    /// Requests this apply sent, by Apple's rate-limit class.
    public var requests: RequestCounts
    /// The digest of the snapshot in the store after the apply.
    public var publishedSnapshot: String?
    /// Why the apply stopped before the end on purpose (a signal or `--max-duration`); nil otherwise.
    public var stopped: ApplyStop?
    /// Actions not attempted because the apply stopped early; the next apply picks them up.
    public var remaining: Int?

    enum CodingKeys: String, CodingKey {
        case formatVersion = "format_version", environment, completed, failure, results, requests
        case publishedSnapshot = "published_snapshot", stopped, remaining
    }

    public init(environment: Environment, completed: Bool = false, failure: String? = nil, results: [ActionResult] = [],
                requests: RequestCounts = RequestCounts(), publishedSnapshot: String? = nil) {
        formatVersion = Plan.currentFormatVersion
        self.environment = environment
        self.completed = completed
        self.failure = failure
        self.results = results
        self.requests = requests
        self.publishedSnapshot = publishedSnapshot
    }

    public func count(_ outcome: ActionResult.Outcome) -> Int { results.filter { $0.outcome == outcome }.count }

    /// Actions that changed something remotely or in the store.
    public var performed: Int { count(.done) }
}

/// Why an apply stopped before its last action without a failure.
public enum ApplyStop: String, Codable, Sendable, Hashable {
    /// SIGINT (Ctrl-C).
    case interrupted
    /// SIGTERM (a CI runner cancelling the job).
    case terminated
    /// `apply --max-duration` ran out.
    case maxDuration = "max-duration"
}

/// An apply that stopped half-way. The report says what succeeded; running apply again finishes
/// the job, because every action is idempotent by construction.
public struct ApplyFailure: Error, Sendable, CustomStringConvertible {
    public var report: ApplyReport
    public var message: String

    public var description: String { message }
}

extension Applier {
    /// Per content kind, in the kinds' declared order: derived items APPROVED in `remote` that were not when planned.
    static func newlyApproved(_ planned: PlanResult, after remote: RemoteState) -> [(ContentKind, Int)] {
        ContentKind.allCases.map { kind in
            let resource = RemoteResources.resource(of: kind)
            let before = resource.remoteStates(in: planned.remote), after = resource.remoteStates(in: remote)
            let count = resource.derived(in: planned.desired).filter {
                after[$0.identifier] == .approved && before[$0.identifier] != .approved
            }.count
            return (kind, count)
        }
    }
}

/// Progress events for a person watching a long apply.
public enum ApplyEvent: Sendable {
    /// An action finished; `done` of `total` actions are through.
    case finished(ActionResult, done: Int, total: Int)
    /// The apply re-listed (sandbox) and learnt new review states.
    /// `approved`: per content kind (every registered kind), how many derived items became APPROVED since upload.
    case relisted(approved: [(ContentKind, Int)])
}

/// Performs a plan's actions in `ActionKind.applyOrder`, one loop over its steps (the sandbox
/// re-list is one of them) that hands each action to its resource's `perform`. It never runs a blocked or error action, never deletes anything in
/// use, and reports an action it cannot perform as an error instead of dropping it.
public struct Applier: Sendable {
    public var api: any RetentionMessagingAPI
    public var state: StateBinding?
    /// When applying a saved plan: the action ids it allows. Anything else is refused.
    public var allowedActions: Set<ActionID>?
    /// Why an action outside `allowedActions` is not performed, when that is not a saved plan
    /// (`apply --only-uploads`: the run performs only uploads). Such a run is a pull request's, so
    /// it never records content as merged into the main branch.
    public var notAllowedDetail: String?

    /// This apply is the main branch's: what it derives is no longer only a pull request's.
    var merging: Bool { notAllowedDetail == nil }
    public var progress: @Sendable (ApplyEvent) -> Void
    /// Asked before each action: a non-nil answer ends the apply there, cleanly, with a report.
    public var shouldStop: @Sendable () -> ApplyStop?
    public var clock: any RetentionClock

    public init(api: any RetentionMessagingAPI, state: StateBinding?, allowedActions: Set<ActionID>? = nil,
                notAllowedDetail: String? = nil,
                progress: @escaping @Sendable (ApplyEvent) -> Void = { _ in },
                shouldStop: @escaping @Sendable () -> ApplyStop? = { nil },
                clock: any RetentionClock) {
        self.api = api
        self.state = state
        self.allowedActions = allowedActions
        self.notAllowedDetail = notAllowedDetail
        self.progress = progress
        self.shouldStop = shouldStop
        self.clock = clock
    }

    /// Records what a plan's reads showed (review states, content and defaults already in place,
    /// the refresh cursor) when there is nothing to apply; returns whether it wrote.
    public func recordState(_ planned: PlanResult) async throws(StateStoreError) -> Bool {
        guard let state else { return false }
        var recorder = StateRecorder(binding: state, read: planned.remote.state, owner: planned.desired.owner, clock: clock)
        recorder.recordObservations(desired: planned.desired, remote: planned.remote, time: clock.time(), merging: merging)
        guard recorder.hasChanges else { return false }
        try await recorder.write()
        return true
    }

    /// Runs the plan's steps in `ActionKind.applyOrder`: each kind's actions through their resource,
    /// and the sandbox re-list between uploads and the rest.
    public func apply(_ planned: PlanResult) async throws(ApplyFailure) -> ApplyReport {
        var run = ApplyRun(applier: self, planned: planned)
        for step in ActionKind.applyOrder {
            switch step {
            case .relist:
                try await run.relist()
            case .perform(let kind):
                for action in run.current.plan.actions where action.kind == kind {
                    if let stopped = try await run.perform(action) { return stopped }
                }
            }
        }
        return try await run.finish()
    }

    func counts(since start: RequestCounts) -> RequestCounts {
        let now = api.requestCounts
        return RequestCounts(configureDefault: now.configureDefault - start.configureDefault,
                             other: now.other - start.other, retries: now.retries - start.retries)
    }
}
