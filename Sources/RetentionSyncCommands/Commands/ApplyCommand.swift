import Basics
import CLIKit
import Foundation
import Notify
import Reconciler
import RetentionMessaging
import RetentionMessagingModels
import Runtime
import StateStore
import Views

struct ApplyCommand: ParsedCommand {
    static let name = "apply"
    static let summary = "Make the environment match the manifests"
    static let planOption = Option("--plan", value: "FILE", completion: .file, help: ["Apply this saved plan"])
    static let replanIfStale = Option("--replan-if-stale", help: [
        "With --plan: when the saved plan no longer holds, say why, plan again and",
        "apply the fresh plan (the merge job's fallback) instead of refusing",
    ])
    static let prune = PruneOptions.prune(help: ["Delete remote content that nothing derives or uses"])
    static let firstPublish = Option("--first-publish", help: [
        "Confirm that an empty state store starts this environment afresh although",
        "Apple already holds content these manifests derive (else apply refuses)",
    ])
    static let report = Option("--report", value: "FILE", completion: .file,
                               help: ["Write a JSON report of what was done (also after a failure)"])
    static let autoApprove = Option("--auto-approve", help: [
        "Do not ask for confirmation (only a terminal is asked; CI never is)",
    ])
    static let format = Option("--format", value: "FORMAT", of: ApplyFormat.self, default: .text, help: [
        "How to print progress: github for GitHub Actions groups around the plan",
        "and the apply log, with annotations on errors and blocked actions",
    ])
    static let onlyUploads = Option("--only-uploads", help: [
        "Perform only the plan's uploads (images, messages): submit a pull request's",
        "content for App Review before the merge; never defaults, the snapshot, the",
        "realtime URL or deletions. Records the submission in the state",
    ])
    static let submissionReserve = Option("--submission-reserve", value: "N", of: Int.self, default: SubmissionHeadroom.defaultReserve, help: [
        "With --only-uploads: refuse (nothing uploaded) when the uploads would leave",
        "fewer than N of Apple's 2,000 messages or images free",
    ])
    static let submittedBy = Option("--submitted-by", value: "NAME", help: [
        "With --only-uploads: who submits, as recorded in the state (default: pr-N",
        "from GITHUB_REF in a pull request's run, else the branch, else USER@host)",
    ])
    static let summaryFile = Option("--summary", value: "FILE", completion: .file, help: [
        "With --only-uploads: also write the summary line as Markdown to FILE (for",
        "the pull request's comment)",
    ])
    static let maxDuration = Option("--max-duration", value: "TIME", of: TimeSpan.self, help: [
        "Stop cleanly before the next action once TIME (90s, 320m, 2h) has",
        "passed; exit 0 and leave the rest to the next apply",
    ])

    static let helpPage = HelpPage(
        usage: "Usage: retention-sync apply --env sandbox|production [--plan FILE] [options]",
        about: """
        Without --plan, plans and applies in one go (the plan is printed first). With --plan, applies
        a plan saved by 'plan --out FILE', and refuses when the manifests changed since, or when the
        remote changed so that the plan no longer holds; actions already done are skipped.
        Order: images, messages, (sandbox: re-list to use auto-approved content at once), defaults,
        the runtime snapshot, the realtime URL, then deletions (only with --prune). Blocked actions
        wait for App Review and are retried by the next run. A run that stops half-way is finished
        by running apply again. SIGINT or SIGTERM lets the action in flight end, writes the report
        and exits 130 or 143. With --only-uploads (a pull request's job), only the uploads run, after
        a check that the environment keeps room below Apple's limits; the state records who
        submitted, so that --prune keeps that content for the --prune-grace period.
        """,
        options: EnvironmentOptions.options + [planOption, replanIfStale, prune] + PruneOptions.following
            + [onlyUploads, submissionReserve, submittedBy, summaryFile, firstPublish, report, autoApprove, format, maxDuration],
        column: 25,
        footer: EnvironmentOptions.credentialsHelp)

    static func parse(_ arguments: inout Arguments, context: CommandContext) throws(CommandError) -> ApplyOptions {
        ApplyOptions(
            environment: try EnvironmentOptions.parse(&arguments, context: context),
            planPath: try arguments.value(Self.planOption), reportPath: try arguments.value(Self.report),
            pruneSettings: try PruneSettings.parse(&arguments, prune: Self.prune),
            firstPublish: arguments.flag(Self.firstPublish),
            replanIfStale: arguments.flag(Self.replanIfStale), onlyUploads: arguments.flag(Self.onlyUploads),
            // Read without its default, so that giving it without --only-uploads is noticed.
            reserve: try arguments.given(Self.submissionReserve, as: Int.self, in: 0..., expected: "a whole number, 0 or more"),
            submittedBy: try arguments.value(Self.submittedBy), summaryPath: try arguments.value(Self.summaryFile),
            autoApprove: arguments.flag(Self.autoApprove), format: try arguments.value(Self.format, as: ApplyFormat.self) ?? .text,
            maxDuration: try arguments.value(Self.maxDuration, as: TimeSpan.self))
    }

    static func run(_ options: ApplyOptions, context: CommandContext) async throws -> ExitCode {
        // Only the real process takes over its signals; tests run apply in-process beside others.
        try await apply(options, context: context, provider: .live, handleSignals: true)
    }

    /// Parses, checks and applies, with the API (and whether to print the plan) chosen by the
    /// caller: the demo and the tests run apply in-process against the emulator.
    static func execute(_ arguments: inout Arguments, context: CommandContext, provider: APIProvider,
                        printPlan: Bool = true, handleSignals: Bool = false) async throws(CommandError) -> ExitCode {
        return try await apply(parsed(&arguments, context: context), context: context, provider: provider, printPlan: printPlan, handleSignals: handleSignals)
    }

    static func apply(_ options: ApplyOptions, context: CommandContext, provider: APIProvider,
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

    /// 1 when the plan holds errors of this configuration (every other action was applied); 3 when
    /// everything this run could do is done but a remote condition needs a person; 0 otherwise.
    /// A non-zero exit always says why on standard error.
    static func exitCode(_ plan: Plan, report: ApplyReport, context: CommandContext) -> ExitCode {
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
    static func savedPlanActions(_ saved: SavedPlan?, planned: PlanResult, options: ApplyOptions,
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
    static func show(_ plan: Plan, format: ApplyFormat, context: CommandContext) {
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
    static func uploadsOnly(_ planned: PlanResult, within allowed: Set<ActionID>?,
                            options: ApplyOptions) throws(CommandError) -> Set<ActionID> {
        let uploads = planned.plan.actions.filter { $0.kind.effect == .upload && $0.state == .ready }
        let headroom = SubmissionHeadroom(planned, uploads: uploads, reserve: options.reserve ?? SubmissionHeadroom.defaultReserve)
        if let refusal = SubmissionView.refusal(headroom) { throw CommandError(refusal + ". Nothing was uploaded.") }
        return Set(uploads.map(\.id)).intersection(allowed ?? Set(planned.plan.actions.map(\.id)))
    }

    /// The progress view, on the client's clock so that a virtual clock gives deterministic heartbeats.
    static func progressView(session: ReconcileSession, format: ApplyFormat, context: CommandContext) -> ApplyProgressView {
        return ApplyProgressView(console: context.console, format: format, clock: session.client.clock, manifests: session.manifests,
                                 base: context.currentDirectory.path)
    }

    /// Runs the apply with progress lines, writes the report, and prints the outcome.
    static func perform(_ planned: PlanResult, session: ReconcileSession, allowed: Set<ActionID>?,
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
    static func submitter(_ named: String?, environment: [String: String]) -> String {
        if let named { return named.trimmingCharacters(in: .whitespaces) }
        if let pullRequest = ContentSubmission.submitter(environment: environment) { return pullRequest }
        for name in ["GITHUB_HEAD_REF", "GITHUB_REF_NAME"] {
            if let branch = environment[name]?.trimmingCharacters(in: .whitespaces), !branch.isEmpty { return branch }
        }
        return StateWriter.current(environment: environment).run
    }

    /// Records what an upload-only apply submitted in the state, prints the summary line and
    /// writes it as Markdown for the pull request's comment.
    static func recordSubmission(_ planned: PlanResult, report: ApplyReport, submittedBy: String?, summaryPath: String?,
                                 session: ReconcileSession, context: CommandContext) async throws(CommandError) {
        guard let binding = session.reconciler.state else { return }
        let summary = SubmissionSummary(planned, report: report, by: submitter(submittedBy, environment: context.environment),
                                        run: StateWriter.current(environment: context.environment).url, at: session.reconciler.clock.date())
        do {
            try await Submissions.write(summary, to: binding, clock: session.reconciler.clock)
        } catch {
            throw CommandError("the uploads are done, but recording who submitted them failed: \(error.description); "
                               + "run the same apply again (it uploads nothing twice) so that a prune keeps them for the grace period")
        }
        context.console.print(SubmissionView.line(summary))
        if let summaryPath { try writeFile(SubmissionView.markdown(summary), to: summaryPath, context: context) }
    }

    static func notify(_ report: ApplyReport, failure: String?, planned: PlanResult, session: ReconcileSession,
                       context: CommandContext) async {
        let events = RunEvents.events(apply: report, failure: failure, planned: planned, now: session.reconciler.clock.date(),
                                             pendingWarnDays: session.reconciler.pendingWarnDays, environment: context.environment)
        await RunNotifications.send(events, store: session.reconciler.state?.store, context: context)
    }

    static func writeReport(_ report: ApplyReport, to path: String, context: CommandContext) throws(CommandError) {
        let text: String
        do { text = String(decoding: try CanonicalJSON.encodePretty(report), as: UTF8.self) + "\n" } catch {
            throw CommandError("cannot encode the apply report: \(error)")
        }
        try writeFile(text, to: path, context: context)
    }
}

/// `apply`'s options, read from the command line and checked before anything is read or sent.
struct ApplyOptions: CommandOptions {
    var environment: EnvironmentOptions
    var planPath: String?
    var reportPath: String?
    var pruneSettings: PruneSettings
    var firstPublish: Bool
    var replanIfStale: Bool
    var onlyUploads: Bool
    /// `--submission-reserve` as given: it goes with `--only-uploads` only.
    var reserve: Int?
    var submittedBy: String?
    var summaryPath: String?
    var autoApprove: Bool
    var format: ApplyFormat
    var maxDuration: TimeSpan?

    /// Any flag that allows a deletion: a prune, or `--allow-delete-defaults`.
    var allowsDeleting: Bool { pruneSettings.deletes || pruneSettings.allowDeleteDefaults }
    var planOptions: PlanOptions { pruneSettings.planOptions }

    func validate() throws(CommandError) {
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
