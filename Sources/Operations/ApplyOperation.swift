import Basics
public import CLIKit
import Foundation
public import Reconciler
import RetentionMessaging
import RetentionMessagingModels
import Runtime
import StateStore
public import Views

/// `apply` as a use case: plans (or checks a saved plan), asks for confirmation, performs the
/// allowed actions with progress, writes the report, records an upload-only submission and tells
/// the webhook. The command reads its options; the demo and the tests call it with theirs.
public enum ApplyOperation {
    public static func apply(_ options: ApplyRequest, context: CommandContext, provider: APIProvider,
                      printPlan: Bool = true, handleSignals: Bool = false) async throws(CommandError) -> ExitCode {
        let saved = try options.planPath.map { path throws(CommandError) in try readSavedPlan(path, context: context) }
        let session = try ReconcileSession.open(options.environment, context: context, provider: provider)
        if options.onlyUploads && session.reconciler.state == nil {
            throw CommandError("--only-uploads records who submitted in the state store, so that a prune on the main branch keeps "
                               + "it for the grace period; configure environments.\(options.environment.environment.rawValue).stateStore in the "
                               + "App manifest (or pass --state-store LOCATION). Nothing was uploaded.")
        }
        // The time counts from here, so that the plan's reads are inside the limit too.
        let view = progressView(session: session, format: options.format, context: context)
        let deadline = options.maxDuration.map { (at: view.clock.now() + $0.seconds, text: $0.text) }
        let planned = try await session.plan(saved?.planOptions ?? options.planOptions)
        if let missing = planned.plan.missingState, !options.firstPublish {
            throw CommandError("refusing to apply: \(missing.explanation) Nothing was changed.")
        }
        var allowed = try savedPlanActions(saved, planned: planned, options: options, context: context)
        if printPlan { show(planned.plan, format: options.format, context: context) }
        var notAllowedDetail: String?
        if options.onlyUploads {
            allowed = try uploadsOnly(planned, within: allowed, options: options)
            notAllowedDetail = "not in this run: --only-uploads performs only uploads; the main branch's apply does the rest"
        }
        if options.leaveDrift {
            (allowed, notAllowedDetail) = leavingDrift(planned, within: allowed, detail: notAllowedDetail, context: context)
        }
        if options.planPath == nil {
            try Confirmation.confirmApply(actions: planned.plan.actions.filter { $0.state == .ready && (allowed?.contains($0.id) ?? true) }.count,
                                          environment: options.environment.environment.rawValue, autoApprove: options.autoApprove,
                                          console: context.console)
        }
        let report = try await perform(planned, session: session, allowed: allowed, notAllowedDetail: notAllowedDetail,
                                       reportPath: options.reportPath, context: context, view: view, handleSignals: handleSignals,
                                       deadline: deadline)
        if options.onlyUploads {
            try await recordSubmission(planned, report: report, submittedBy: options.submittedBy, summaryPath: options.summaryPath,
                                       session: session, context: context)
        }
        for result in report.results where result.isRealtimeURLAwaitingTest {
            // Waiting, not failing: the apply succeeds and says what lets production take the URL.
            let line = "\(result.title): \(ApplyProgressView.detail(result))"
            context.console.print(options.format == .github ? GitHubActions.annotation(.notice, line, title: "realtime URL") : line)
        }
        if let stop = report.stopped { return stop.exitCode }
        return exitCode(planned.plan, report: report, context: context)
    }

    /// Holds back every action that would set back drift — a default or the realtime URL someone changed
    /// at Apple since an apply set it, by the state record — so that a reconcile leaves the vendor's
    /// change in place while a pull request (`import --accept-drift`) proposes keeping it.
    static func leavingDrift(_ planned: PlanResult, within allowed: Set<ActionID>?, detail: String?,
                             context: CommandContext) -> (Set<ActionID>?, String?) {
        let document = planned.remote.state?.document
        let drifted = planned.plan.actions.filter { $0.change.drift(against: document) != nil }
        guard !drifted.isEmpty else { return (allowed, detail) }
        for action in drifted {
            context.console.error("left as Apple holds it (--leave-drift): \(action.title), changed at Apple since an apply set it")
        }
        let all = allowed ?? Set(planned.plan.actions.map(\.id))
        let leaving = "left as Apple holds it (--leave-drift): changed at Apple since an apply set it"
        return (all.subtracting(drifted.map(\.id)), detail.map { $0 + "; or " + leaving } ?? leaving)
    }

    /// 1 when the plan holds errors of this configuration (every other action was applied); 3 when
    /// everything this run could do is done but a remote condition needs a person; 0 otherwise.
    /// A non-zero exit always says why on standard error.
    public static func exitCode(_ plan: Plan, report: ApplyReport, context: CommandContext) -> ExitCode {
        if plan.hasErrors || report.count(.error) > 0 {
            context.console.error("error: " + PlanView.errorLine(plan) + "; every other action was applied")
            return .failure
        }
        let awaitingTest = report.results.filter(\.isRealtimeURLAwaitingTest)
        if plan.needsAttention {
            context.console.error("attention: " + PlanView.attentionLine(plan))
            return .needsAttention
        }
        if let first = awaitingTest.first {
            context.console.error("attention: \(first.title): Apple takes the production realtime URL once a sandbox performance test passes (retention-sync performance-test --env sandbox)")
            return .needsAttention
        }
        return .success
    }

    /// The actions a saved plan allows (nil: every action); a plan that no longer holds is refused,
    /// or with --replan-if-stale announced and replaced by the fresh one.
    public static func savedPlanActions(_ saved: SavedPlan?, planned: PlanResult, options: ApplyRequest,
                                 context: CommandContext) throws(CommandError) -> Set<ActionID>? {
        guard let saved, let planPath = options.planPath else { return nil }
        do {
            let allowed = try SavedPlan.check(saved: saved, fresh: planned.plan)
            context.console.print("Applying the saved plan \(planPath).")
            // What the reviewed plan showed waiting and is ready now is done, and said first.
            for progress in SavedPlan.progress(saved: saved, fresh: planned.plan) {
                let line = PlanView.progressLine(progress)
                context.console.print(line)
                if options.format == .github { context.console.print(GitHubActions.annotation(.notice, line, title: "Review progressed")) }
            }
            // What the reviewed plan deleted and is in use now (a default set since) stays, and is said.
            for item in SavedPlan.kept(saved: saved, fresh: planned.plan) {
                let line = PlanView.keptLine(item)
                context.console.print(line)
                if options.format == .github { context.console.print(GitHubActions.annotation(.warning, line, title: "Not deleted")) }
            }
            return allowed
        } catch {
            guard options.replanIfStale else { throw CommandError("\(planPath): \(PlanWording.describe(error))") }
            // The plan the pull request showed no longer holds: apply what is true now, and say why.
            let why = "the saved plan \(planPath) no longer holds (\(PlanWording.describe(error))); applying a fresh plan instead"
            context.console.print("Re-planned: " + why + ".")
            if options.format == .github { context.console.print(GitHubActions.annotation(.warning, why, title: "Re-planned")) }
            return nil
        }
    }

    /// Prints the plan apply is about to carry out (in a GitHub Actions group, with annotations, when asked).
    public static func show(_ plan: Plan, format: ApplyFormat, context: CommandContext) {
        if format == .github { context.console.print(GitHubActions.group("Plan: " + PlanView.summaryLine(plan))) }
        context.console.write(PlanView.text(plan, for: context.console))
        if format == .github {
            context.console.print(GitHubActions.endGroup)
            for line in plan.problems.map({ GitHubActions.annotation($0.severity == .error ? .error : .warning, $0.message, title: $0.name) }) {
                context.console.print(line)
            }
            for warning in plan.warnings { context.console.print(GitHubActions.annotation(.warning, PlanWording.warning(warning), title: warning.field)) }
        }
        context.console.print("")
    }

    /// --only-uploads: the ready uploads among `allowed`, after the check that Apple's limits keep
    /// the reserve free.
    public static func uploadsOnly(_ planned: PlanResult, within allowed: Set<ActionID>?,
                            options: ApplyRequest) throws(CommandError) -> Set<ActionID> {
        let uploads = planned.plan.actions.filter { $0.kind.effect == .upload && $0.state == .ready }
        let headroom = SubmissionHeadroom(planned, uploads: uploads, reserve: options.reserve ?? SubmissionHeadroom.defaultReserve)
        if let refusal = SubmissionView.refusal(headroom) { throw CommandError(refusal + ". Nothing was uploaded.") }
        return Set(uploads.map(\.id)).intersection(allowed ?? Set(planned.plan.actions.map(\.id)))
    }

    /// The progress view, on the client's clock so that a virtual clock gives deterministic heartbeats.
    public static func progressView(session: ReconcileSession, format: ApplyFormat, context: CommandContext) -> ApplyProgressView {
        return ApplyProgressView(console: context.console, format: format, clock: session.client.clock, manifests: session.manifests,
                                 base: context.currentDirectory.path)
    }

    /// Runs the apply with progress lines, writes the report, and prints the outcome.
    public static func perform(_ planned: PlanResult, session: ReconcileSession, allowed: Set<ActionID>?,
                        notAllowedDetail: String? = nil, reportPath: String?,
                        context: CommandContext, view: ApplyProgressView? = nil, handleSignals: Bool = false,
                        deadline: (at: Double, text: String)? = nil) async throws(CommandError) -> ApplyReport {
        let view = view ?? ApplyProgressView(console: context.console, clock: session.client.clock)
        if !planned.plan.hasReadyActions {
            try await session.recordState(planned, notAllowedDetail: notAllowedDetail)
            view.nothingToApply(planned.plan)
            let report = ApplyReport(environment: planned.desired.environment, completed: true,
                                     publishedSnapshot: planned.remote.publishedSnapshot?.digest)
            if let reportPath { try writeReport(report, to: reportPath, context: context) }
            await notify(report, failure: nil, planned: planned, session: session, context: context)
            return report
        }
        // Taken over only now, so that Ctrl-C still ends the plan and the confirmation prompt at once.
        let interruption = handleSignals ? Interruption.install() : nil
        defer { interruption?.uninstall() }
        view.starting(planned)
        let client = session.client
        client.onWait { seconds, reason in view.waiting(seconds, reason: reason) }
        defer { client.onWait { _, _ in } }
        let clock = view.clock
        let stopAt = deadline?.at
        let shouldStop: @Sendable () -> ApplyStop? = {
            if let received = interruption?.received { return received }
            if let stopAt, clock.now() >= stopAt { return .maxDuration }
            return nil
        }
        let reconciler = session.reconciler
        let task = Task { () async -> Result<ApplyReport, ApplyFailure> in
            do throws(ApplyFailure) {
                return .success(try await reconciler.apply(planned, allowedActions: allowed, notAllowedDetail: notAllowedDetail,
                                                                 progress: view.show, shouldStop: shouldStop))
            } catch {
                return .failure(error)
            }
        }
        // A signal also cuts short a wait on Apple's rate limits; the loop then stops before the next action.
        interruption?.onSignal { task.cancel() }
        let report: ApplyReport
        switch await task.value {
        case .success(let value):
            report = value
        case .failure(let error):
            view.closeGroup()
            if let reportPath { try writeReport(error.report, to: reportPath, context: context) }
            await notify(error.report, failure: error.message, planned: planned, session: session, context: context)
            throw CommandError(error.message)
        }
        if let reportPath { try writeReport(report, to: reportPath, context: context) }
        await notify(report, failure: nil, planned: planned, session: session, context: context)
        if let stop = report.stopped {
            view.stopped(report, plan: planned.plan, reason: stop, maxDuration: deadline?.text)
        } else {
            view.finished(report)
        }
        return report
    }

    /// Who submits: `--submitted-by`, else `pr-N` in a pull request's run, else the branch, else `USER@host`.
    public static func submitter(_ named: String?, environment: [String: String]) -> String {
        if let named { return named.trimmingCharacters(in: .whitespaces) }
        if let pullRequest = ContentSubmission.submitter(environment: environment) { return pullRequest }
        for name in ["GITHUB_HEAD_REF", "GITHUB_REF_NAME"] {
            if let branch = environment[name]?.trimmingCharacters(in: .whitespaces), !branch.isEmpty { return branch }
        }
        return StateWriter.current(environment: environment).run
    }

    /// Records what an upload-only apply submitted in the state, prints the summary line and
    /// writes it as Markdown for the pull request's comment.
    public static func recordSubmission(_ planned: PlanResult, report: ApplyReport, submittedBy: String?, summaryPath: String?,
                                 session: ReconcileSession, context: CommandContext) async throws(CommandError) {
        guard let binding = session.reconciler.state else { return }
        let summary = SubmissionSummary(planned, report: report, by: submitter(submittedBy, environment: context.environment),
                                        run: StateWriter.current(environment: context.environment).url, at: session.reconciler.clock.time())
        do {
            try await Submissions.write(summary, to: binding, clock: session.reconciler.clock)
        } catch {
            throw CommandError("the uploads are done, but recording who submitted them failed: \(error.description); "
                               + "run the same apply again (it uploads nothing twice) so that a prune keeps them for the grace period")
        }
        context.console.print(SubmissionView.line(summary))
        if let summaryPath { try writeFile(SubmissionView.markdown(summary), to: summaryPath, context: context) }
    }

    public static func notify(_ report: ApplyReport, failure: String?, planned: PlanResult, session: ReconcileSession,
                       context: CommandContext) async {
        let events = RunEvents.events(apply: report, failure: failure, planned: planned, now: session.reconciler.clock.time(),
                                             pendingWarnDays: session.reconciler.pendingWarnDays, environment: context.environment)
        await RunNotifications.send(events, store: session.reconciler.state?.store, context: context)
    }

    public static func writeReport(_ report: ApplyReport, to path: String, context: CommandContext) throws(CommandError) {
        let text: String
        do { text = String(decoding: try CanonicalJSON.encodePretty(report), as: UTF8.self) + "\n" } catch {
            throw CommandError("cannot encode the apply report: \(error)")
        }
        try writeFile(text, to: path, context: context)
    }
}

/// `apply`'s options, read from the command line and checked before anything is read or sent.
public struct ApplyRequest: CommandOptions {
    public var environment: ReconcileTarget
    public var planPath: String?
    public var reportPath: String?
    public var pruneSettings: PruneSettings
    public var firstPublish: Bool
    public var replanIfStale: Bool
    public var onlyUploads: Bool
    /// `--leave-drift`: what changed at Apple since an apply set it stays as Apple holds it.
    public var leaveDrift: Bool = false
    /// `--submission-reserve` as given: it goes with `--only-uploads` only.
    public var reserve: Int?
    public var submittedBy: String?
    public var summaryPath: String?
    public var autoApprove: Bool
    public var format: ApplyFormat
    public var maxDuration: TimeSpan?

    public init(environment: ReconcileTarget, planPath: String? = nil, reportPath: String? = nil,
                pruneSettings: PruneSettings = PruneSettings(), firstPublish: Bool = false, replanIfStale: Bool = false,
                onlyUploads: Bool = false, reserve: Int? = nil, submittedBy: String? = nil, summaryPath: String? = nil,
                autoApprove: Bool = false, format: ApplyFormat = .text, maxDuration: TimeSpan? = nil) {
        self.environment = environment
        self.planPath = planPath
        self.reportPath = reportPath
        self.pruneSettings = pruneSettings
        self.firstPublish = firstPublish
        self.replanIfStale = replanIfStale
        self.onlyUploads = onlyUploads
        self.reserve = reserve
        self.submittedBy = submittedBy
        self.summaryPath = summaryPath
        self.autoApprove = autoApprove
        self.format = format
        self.maxDuration = maxDuration
    }

    /// Any flag that allows a deletion: a prune, or `--allow-delete-defaults`.
    public var allowsDeleting: Bool { pruneSettings.deletes || pruneSettings.allowDeleteDefaults }
    public var planOptions: PlanOptions { pruneSettings.planOptions }

    public func validate() throws(CommandError) {
        if onlyUploads && allowsDeleting {
            throw CommandError("--only-uploads does not go with --prune, --prune-force, --prune-id or --allow-delete-defaults: it never deletes",
                               exitCode: .usage)
        }
        if !onlyUploads && (reserve != nil || submittedBy != nil || summaryPath != nil) {
            throw CommandError("--submission-reserve, --submitted-by and --summary go with --only-uploads", exitCode: .usage)
        }
        if let submittedBy, submittedBy.trimmingCharacters(in: .whitespaces).isEmpty {
            throw CommandError("--submitted-by needs a name (pr-12)", exitCode: .usage)
        }
        if planPath != nil && allowsDeleting {
            throw CommandError("--prune, --prune-force, --prune-id and --allow-delete-defaults do not go with --plan: the saved plan "
                               + "decides what is deleted (make it with 'plan --prune --out FILE' or 'plan --allow-delete-defaults --out FILE')",
                               exitCode: .usage)
        }
        if planPath == nil && replanIfStale {
            throw CommandError("--replan-if-stale goes with --plan FILE", exitCode: .usage)
        }
    }
}
