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
                clock: any RetentionClock = SystemClock()) {
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
        recorder.recordObservations(desired: planned.desired, remote: planned.remote, time: clock.date(), merging: merging)
        guard recorder.hasChanges else { return false }
        try await recorder.write()
        return true
    }

    public func apply(_ planned: PlanResult) async throws(ApplyFailure) -> ApplyReport {
        let start = api.requestCounts
        var report = ApplyReport(environment: planned.desired.environment,
                                 publishedSnapshot: planned.remote.publishedSnapshot?.digest)
        var total = planned.plan.actions.count
        var done = 0

        var succeeded = Set<ActionID>()
        var inPlan = Set(planned.plan.actions.map(\.id))
        func record(_ action: PlanAction, _ outcome: ActionResult.Outcome, _ detail: String? = nil,
                    awaiting: ActionResult.Awaiting? = nil) {
            var result = ActionResult(id: action.id.rawValue, kind: action.kind, title: action.title, outcome: outcome, detail: detail)
            result.awaiting = awaiting
            report.results.append(result)
            if outcome == .done || outcome == .alreadyDone { succeeded.insert(action.id) }
            done += 1
            progress(.finished(result, done: done, total: max(total, done)))
        }

        func fail(_ action: PlanAction, _ error: any Error) -> ApplyFailure {
            record(action, .failed, "\(error)")
            report.requests = counts(since: start)
            report.failure = "\(action.title): \(error)"
            let succeededText = "\(report.performed) action\(report.performed == 1 ? "" : "s") succeeded before it"
            // Running apply again cannot grant API access; only the account holder's request can.
            if let error = error as? RetentionMessagingError, error.isNoAPIAccess {
                return ApplyFailure(report: report, message: "apply stopped at '\(action.title)': \(error) \(succeededText); "
                                    + "once Apple grants access, apply finishes the rest")
            }
            return ApplyFailure(report: report, message: "apply stopped at '\(action.title)': \(error). \(succeededText); "
                                + "run apply again to finish (it is safe to repeat)")
        }

        func stop(_ reason: ApplyStop) -> ApplyReport {
            report.requests = counts(since: start)
            report.stopped = reason
            report.remaining = max(0, total - done)
            return report
        }

        var allowed = allowedActions
        func runnable(_ action: PlanAction) -> Bool {
            // An upload-only run says of every other action that it is not in this run, blocked or not.
            if let notAllowedDetail, let allowedActions, !allowedActions.contains(action.id) {
                record(action, .notInRun, notAllowedDetail)
                return false
            }
            // A URL waiting for a performance test is tried anyway: only Apple knows whether one has passed since.
            if action.state == .blocked && action.reason.wait != .performanceTest { record(action, .blocked, action.waitingFor.map(\.description).joined(separator: "; ")); return false }
            if action.state == .error { record(action, .error, action.error?.description ?? "the plan holds it as an error"); return false }
            if let allowed, !allowed.contains(action.id) {
                record(action, .blocked, allowedActions == nil ? "not ready or blocked in the plan; the next plan shows it"
                       : notAllowedDetail ?? "not in the saved plan")
                return false
            }
            // What an action depends on must have succeeded: no message upload without its new
            // picture (over the image cap), no image delete while a message that may show it remains.
            if let unmet = action.dependsOn.first(where: { inPlan.contains($0) && !succeeded.contains($0) }) {
                record(action, .blocked, "needs \(unmet) first, which did not run")
                return false
            }
            return true
        }

        var recorder = state.map { StateRecorder(binding: $0, read: planned.remote.state, owner: planned.desired.owner, clock: clock) }
        var current = planned
        for step in ActionKind.applyOrder {
            guard case .perform(let kind) = step else {
                // The re-list boundary: only sandbox approves at once, and only after an upload.
                let uploaded = report.results.contains { $0.kind.effect == .upload && ($0.outcome == .done || $0.outcome == .alreadyDone) }
                guard planned.desired.environment == .sandbox && uploaded else { continue }
                var remote = planned.remote
                do {
                    try await RemoteStateReader.readLists(api, into: &remote)
                    current = try Planner.plan(desired: planned.desired, remote: remote, options: planned.options,
                                               hasSnapshotStore: state != nil)
                } catch {
                    report.requests = counts(since: start)
                    report.failure = "re-listing after the uploads: \(error)"
                    throw ApplyFailure(report: report, message: "apply stopped re-listing after the uploads: \(error); run apply again to finish")
                }
                // The re-list only teaches review states, so the re-plan may promote a blocked action,
                // never one the plan held as an error (prune protection counted the remote before these
                // uploads) or did not show at all (content someone added meanwhile).
                let shown = Set(planned.plan.actions.filter { $0.state != .error }.map(\.id))
                allowed = allowed?.intersection(shown) ?? shown
                inPlan = Set(current.plan.actions.map(\.id))
                progress(.relisted(approved: Self.newlyApproved(planned, after: remote)))
                let later = current.plan.actions.filter { $0.kind.effect != .upload }.count
                let earlier = planned.plan.actions.filter { $0.kind.effect == .upload }.count
                total = earlier + later
                continue
            }
            for action in current.plan.actions where action.kind == kind {
                guard runnable(action) else { continue }
                if let reason = shouldStop() {
                    if var recorder { try? await recorder.write() }
                    return stop(reason)
                }
                let resource = RemoteResources.resource(of: kind)
                do {
                    if let refusal = try await resource.perform(action, in: current, api: api, report: &report, recorder: &recorder) {
                        record(action, refusal.outcome, refusal.detail, awaiting: refusal.awaiting)
                        if refusal.outcome == .alreadyDone, recorder != nil {
                            resource.recordDone(action, in: current, recorder: &recorder, at: clock.date())
                        }
                        if refusal.awaiting != nil { resource.recordRefusal(refusal, of: action, recorder: &recorder, at: clock.date()) }
                    } else {
                        record(action, .done)
                        if recorder != nil { resource.recordDone(action, in: current, recorder: &recorder, at: clock.date()) }
                    }
                } catch {
                    // What was done before the failure or stop is still recorded, so nothing is lost.
                    if var recorder { try? await recorder.write() }
                    // A stop that cut a wait short abandons this action; it is idempotent, so the next run redoes it.
                    if let reason = shouldStop() { return stop(reason) }
                    throw fail(action, error)
                }
            }
        }

        if var recorder {
            recorder.recordObservations(desired: current.desired, remote: current.remote, time: clock.date(), merging: merging)
            if recorder.hasChanges {
                do {
                    try await recorder.write()
                } catch {
                    report.requests = counts(since: start)
                    report.failure = "\(error)"
                    throw ApplyFailure(report: report, message: "the apply's actions are done, but recording them failed: \(error). "
                                       + "Run apply again: it reads Apple and the store again and records what it finds")
                }
            }
        }
        report.requests = counts(since: start)
        report.completed = true
        return report
    }

    func counts(since start: RequestCounts) -> RequestCounts {
        let now = api.requestCounts
        return RequestCounts(configureDefault: now.configureDefault - start.configureDefault,
                             other: now.other - start.other, retries: now.retries - start.retries)
    }
}
