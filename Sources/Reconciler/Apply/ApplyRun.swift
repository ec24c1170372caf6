import Basics
import Foundation
import RetentionMessaging
import RetentionMessagingModels
import Runtime
import StateStore

/// One apply in progress: what it did so far and the plan it works from, with one method per step
/// of `Applier.apply` (gate an action, perform it, re-list, record, stop, fail).
struct ApplyRun {
    let applier: Applier
    let planned: PlanResult
    /// The plan the remaining steps run: `planned`, or its re-plan after a sandbox re-list.
    var current: PlanResult
    var report: ApplyReport
    var recorder: StateRecorder?
    let start: RequestCounts
    /// How many actions the progress counts towards, and how many are through.
    var total: Int
    var done = 0
    var succeeded = Set<ActionID>()
    /// The actions of the plan being run, for dependencies.
    var inPlan: Set<ActionID>
    /// Beside a saved plan's `allowedActions`: after a re-list, only what the plan showed and did not hold as an error.
    var allowed: Set<ActionID>?
    /// Whether a first publish has written its start into the empty store yet.
    var firstPublishRecorded = false

    init(applier: Applier, planned: PlanResult) {
        self.applier = applier
        self.planned = planned
        current = planned
        report = ApplyReport(environment: planned.desired.environment, publishedSnapshot: planned.remote.publishedSnapshot?.digest)
        recorder = applier.state.map {
            StateRecorder(binding: $0, read: planned.remote.state, owner: planned.desired.owner, clock: applier.clock)
        }
        start = applier.api.requestCounts
        total = planned.plan.actions.count
        inPlan = Set(planned.plan.actions.map(\.id))
        allowed = applier.allowedActions
    }

    mutating func record(_ action: PlanAction, _ outcome: ActionResult.Outcome, _ detail: String? = nil,
                         awaiting: ActionResult.Awaiting? = nil) {
        var result = ActionResult(id: action.id.rawValue, kind: action.kind, title: action.title, outcome: outcome, detail: detail)
        result.awaiting = awaiting
        report.results.append(result)
        if outcome == .done || outcome == .alreadyDone { succeeded.insert(action.id) }
        done += 1
        applier.progress(.finished(result, done: done, total: max(total, done)))
    }

    /// Whether an action runs now; when not, its outcome is recorded with why.
    mutating func runnable(_ action: PlanAction) -> Bool {
        // An upload-only run says of every other action that it is not in this run, blocked or not.
        if let notAllowedDetail = applier.notAllowedDetail, let allowedActions = applier.allowedActions, !allowedActions.contains(action.id) {
            record(action, .notInRun, notAllowedDetail)
            return false
        }
        // A URL waiting for a performance test is tried anyway: only Apple knows whether one has passed since.
        if action.state == .blocked && action.reason.wait != .performanceTest {
            record(action, .blocked, action.waitingFor.map(\.description).joined(separator: "; "))
            return false
        }
        if action.state == .error {
            record(action, .error, action.error?.description ?? "the plan holds it as an error")
            return false
        }
        if let allowed, !allowed.contains(action.id) {
            record(action, .blocked, applier.allowedActions == nil ? "not ready or blocked in the plan; the next plan shows it"
                   : applier.notAllowedDetail ?? "not in the saved plan")
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

    /// Performs one action through its resource and records what it did. Returns the report when
    /// the apply stops here (asked to, cleanly); throws when the action failed.
    mutating func perform(_ action: PlanAction) async throws(ApplyFailure) -> ApplyReport? {
        guard runnable(action) else { return nil }
        if let reason = applier.shouldStop() {
            if var recorder { try? await recorder.write() }
            return stop(reason)
        }
        try await recordFirstPublishStart()
        let resource = RemoteResources.resource(of: action.kind)
        let clock = applier.clock
        let time = { clock.time() }
        do {
            if let refusal = try await resource.perform(action, in: current, api: applier.api, report: &report, recorder: &recorder) {
                record(action, refusal.outcome, refusal.detail, awaiting: refusal.awaiting)
                if refusal.outcome == .alreadyDone, recorder != nil {
                    resource.recordDone(action, in: current, recorder: &recorder, at: time())
                }
                if refusal.awaiting != nil { resource.recordRefusal(refusal, of: action, recorder: &recorder, at: time()) }
            } else {
                record(action, .done)
                if recorder != nil { resource.recordDone(action, in: current, recorder: &recorder, at: time()) }
            }
        } catch {
            // What was done before the failure or stop is still recorded, so nothing is lost.
            if var recorder { try? await recorder.write() }
            // A stop that cut a wait short abandons this action; it is idempotent, so the next run redoes it.
            if let reason = applier.shouldStop() { return stop(reason) }
            throw fail(action, error)
        }
        return nil
    }

    /// A first publish writes the state document before it changes anything, so that a run killed
    /// part-way (kill -9, a runner that vanished) leaves the evidence that this store began the
    /// publish: the next apply converges instead of taking Apple's content for a lost or moved store.
    mutating func recordFirstPublishStart() async throws(ApplyFailure) {
        guard !firstPublishRecorded, planned.remote.isFirstPublish, var writer = recorder else { return }
        do {
            try await writer.write()
        } catch where error.kind == .conflict {
            // Another apply began (or finished) a publish into this store first: the store is no
            // longer empty, which is all this write is for. The recorder stays as it was, so this
            // apply's own writes still meet the same check against what the other one published.
            firstPublishRecorded = true
            return
        } catch {
            report.requests = applier.counts(since: start)
            report.failure = "recording the start of the first publish: \(error)"
            throw ApplyFailure(report: report, message: "apply stopped before its first action: it could not write the start of the "
                               + "first publish to the state store \(writer.binding.name): \(error.description); nothing was sent to Apple")
        }
        recorder = writer
        firstPublishRecorded = true
    }

    /// The re-list boundary: only sandbox approves at once, and only after an upload. Re-lists,
    /// re-plans, and lets the re-plan promote blocked actions.
    mutating func relist() async throws(ApplyFailure) {
        let uploaded = report.results.contains { $0.kind.effect == .upload && ($0.outcome == .done || $0.outcome == .alreadyDone) }
        guard planned.desired.environment == .sandbox && uploaded else { return }
        var remote = planned.remote
        do {
            try await RemoteStateReader.readLists(applier.api, into: &remote)
            current = try Planner.plan(desired: planned.desired, remote: remote, options: planned.options,
                                       hasSnapshotStore: applier.state != nil)
        } catch {
            report.requests = applier.counts(since: start)
            report.failure = "re-listing after the uploads: \(error)"
            throw ApplyFailure(report: report, message: "apply stopped re-listing after the uploads: \(error); run apply again to finish")
        }
        // The re-list only teaches review states, so the re-plan may promote a blocked action,
        // never one the plan held as an error (prune protection counted the remote before these
        // uploads) or did not show at all (content someone added meanwhile).
        let shown = Set(planned.plan.actions.filter { $0.state != .error }.map(\.id))
        allowed = allowed?.intersection(shown) ?? shown
        inPlan = Set(current.plan.actions.map(\.id))
        applier.progress(.relisted(approved: Applier.newlyApproved(planned, after: remote)))
        let later = current.plan.actions.filter { $0.kind.effect != .upload }.count
        let earlier = planned.plan.actions.filter { $0.kind.effect == .upload }.count
        total = earlier + later
    }

    /// Records what the reads and actions showed, and closes the report.
    mutating func finish() async throws(ApplyFailure) -> ApplyReport {
        if var recorder {
            recorder.recordObservations(desired: current.desired, remote: current.remote, time: applier.clock.time(),
                                        merging: applier.merging)
            if recorder.hasChanges {
                do {
                    try await recorder.write()
                } catch {
                    report.requests = applier.counts(since: start)
                    report.failure = "\(error)"
                    throw ApplyFailure(report: report, message: "the apply's actions are done, but recording them failed: \(error). "
                                       + "Run apply again: it reads Apple and the store again and records what it finds")
                }
            }
        }
        report.requests = applier.counts(since: start)
        report.completed = true
        return report
    }

    mutating func stop(_ reason: ApplyStop) -> ApplyReport {
        report.requests = applier.counts(since: start)
        report.stopped = reason
        report.remaining = max(0, total - done)
        return report
    }

    mutating func fail(_ action: PlanAction, _ error: any Error) -> ApplyFailure {
        record(action, .failed, "\(error)")
        report.requests = applier.counts(since: start)
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
}
