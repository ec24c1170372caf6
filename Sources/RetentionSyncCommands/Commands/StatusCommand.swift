import Basics
import CLIKit
import Foundation
import Reconciler
import StateStore
import RetentionMessaging
import RetentionMessagingModels
import Views
import Operations

struct StatusCommand: ParsedCommand {
    static let name = "status"
    static let summary = "Show remote content, review states and use"
    static let format = Option("--format", value: "FORMAT", of: StatusReportFormat.self, default: .text,
                               help: ["How to print it: markdown for a job summary or comment"])
    static let detailedExitcode = Option("--detailed-exitcode", help: [
        "Exit 3 when something needs attention (REJECTED, or PENDING too", "long), else 0",
    ])

    static let helpPage = HelpPage(
        about: """
        Lists every message and image in the environment with its review state, the logical name,
        locale and version the manifests give it (when they derive it), where it is in use (defaults,
        rules of the published snapshot), and what the next reconcile would do with it. Makes the
        same few read calls as plan. With a state store, shows how long each item has been in its
        review state (PENDING for how many days) from the state record.
        """,
        options: EnvironmentOptions.options + [format, PendingWarnDaysOption.option, detailedExitcode],
        column: 25,
        footer: EnvironmentOptions.credentialsHelp)

    struct Options: CommandOptions {
        var environment: EnvironmentOptions
        var format: StatusReportFormat
        var warnDays: Int
        var detailed: Bool

        func validate() throws(CommandError) {}
    }

    static func parse(_ arguments: inout Arguments, context: CommandContext) throws(CommandError) -> Options {
        Options(environment: try EnvironmentOptions.parse(&arguments, context: context),
                format: try arguments.value(Self.format, as: StatusReportFormat.self) ?? .text,
                warnDays: try PendingWarnDaysOption.read(&arguments), detailed: arguments.flag(Self.detailedExitcode))
    }

    static func run(_ options: Options, context: CommandContext) async throws -> ExitCode {
        try await report(options, context: context, provider: .live)
    }

    /// Parses, checks and reports against the API the caller chose (the tests': the emulator).
    static func execute(_ arguments: inout Arguments, context: CommandContext, provider: APIProvider) async throws(CommandError) -> ExitCode {
        return try await report(parsed(&arguments, context: context), context: context, provider: provider)
    }

    static func report(_ options: Options, context: CommandContext, provider: APIProvider) async throws(CommandError) -> ExitCode {
        var session = try ReconcileSession.open(options.environment, context: context, provider: provider)
        session.reconciler.pendingWarnDays = options.warnDays
        let planned = try await session.plan(PlanOptions())
        let report = Status.report(planned, now: session.reconciler.clock.time(), pendingWarnDays: options.warnDays)
        // How long App Review takes for this app, from the review states the state record observed.
        let reviewTimes = planned.remote.state?.document.map { ReviewTimes.measure($0, now: session.reconciler.clock.time(), observed: planned.reviewStates) }
        switch options.format {
        case .json:
            do { context.console.write(try StatusView.json(report)) } catch { throw CommandError("cannot encode the status: \(error)") }
        case .markdown:
            context.console.write(StatusView.markdown(report))
            if let times = ReviewTimeView.markdown(reviewTimes) { context.console.write("\n" + times + "\n") }
        case .text:
            context.console.write(StatusView.text(report, for: context.console))
            let lines = ReviewTimeView.textLines(reviewTimes)
            if !lines.isEmpty { context.console.write("\n" + lines.joined(separator: "\n") + "\n") }
        }
        await RunNotifications.send(RunEvents.events(report, planned: planned), store: session.reconciler.state?.store,
                                    context: context)
        return options.detailed && report.needsAttention ? .needsAttention : .success
    }
}

/// `--pending-warn-days N`, which `status` and `plan` read alike.
enum PendingWarnDaysOption {
    static let option = Option("--pending-warn-days", value: "N", of: Int.self, default: Status.defaultPendingWarnDays, help: [
        "Flag every REJECTED item, and items PENDING in App Review for longer",
        "than N days",
    ])

    static func read(_ arguments: inout Arguments) throws(CommandError) -> Int {
        try arguments.value(option, as: Int.self, in: 0..., expected: "a number of days, 0 or more") ?? Status.defaultPendingWarnDays
    }
}
