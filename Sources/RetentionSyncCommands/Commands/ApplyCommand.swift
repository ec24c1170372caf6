import Basics
import CLIKit
import Foundation
import Reconciler
import RetentionMessaging
import RetentionMessagingModels
import Runtime
import StateStore
import Views
import Operations

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
    static let leaveDrift = Option("--leave-drift", help: [
        "Leave what changed at Apple since an apply set it (a default, the realtime URL) as Apple",
        "holds it, instead of setting it back; import --accept-drift proposes keeping it",
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
            + [leaveDrift, onlyUploads, submissionReserve, submittedBy, summaryFile, firstPublish, report, autoApprove, format, maxDuration],
        column: 25,
        footer: EnvironmentOptions.credentialsHelp)

    static func parse(_ arguments: inout Arguments, context: CommandContext) throws(CommandError) -> ApplyOptions {
        let leaveDrift = arguments.flag(Self.leaveDrift)
        var options = ApplyOptions(
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
        options.leaveDrift = leaveDrift
        return options
    }

    static func run(_ options: ApplyOptions, context: CommandContext) async throws -> ExitCode {
        // Only the real process takes over its signals; tests run apply in-process beside others.
        try await ApplyOperation.apply(options, context: context, provider: .live, handleSignals: true)
    }

    /// Parses, checks and applies, with the API (and whether to print the plan) chosen by the
    /// caller: the demo and the tests run apply in-process against the emulator.
    static func execute(_ arguments: inout Arguments, context: CommandContext, provider: APIProvider,
                        printPlan: Bool = true, handleSignals: Bool = false) async throws(CommandError) -> ExitCode {
        return try await ApplyOperation.apply(parsed(&arguments, context: context), context: context, provider: provider, printPlan: printPlan, handleSignals: handleSignals)
    }
}

/// `ApplyRequest` as the command line reads it.
typealias ApplyOptions = ApplyRequest
