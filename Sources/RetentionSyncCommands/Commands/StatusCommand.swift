import Foundation
import Reconciler
import RetentionMessaging
import RetentionMessagingModels

struct StatusCommand: Command {
    static let name = "status"
    static let summary = "Show remote content, review states and use"
    static let format = Option("--format", value: "FORMAT", of: StatusFormat.self, help: ["text (default) or json"])

    static let helpPage = HelpPage(
        usage: "Usage: retention-sync status --env sandbox|production [--format text|json] [options]",
        about: """
        Lists every message and image in the environment with its review state, the logical name,
        locale and version the manifests give it (when they derive it), where it is in use (defaults,
        rules of the published snapshot), and what the next reconcile would do with it. Makes the
        same few read calls as plan.
        """,
        options: EnvironmentOptions.options + [format],
        footer: EnvironmentOptions.credentialsHelp)

    static func run(_ arguments: inout Arguments, context: CommandContext) async throws -> ExitCode {
        try await execute(&arguments, context: context, provider: .live)
    }

    static func execute(_ arguments: inout Arguments, context: CommandContext, provider: APIProvider) async throws(CommandError) -> ExitCode {
        let options = try EnvironmentOptions.parse(&arguments, context: context)
        let format = (try arguments.value(Self.format, as: StatusFormat.self) ?? .text).rawValue
        try arguments.finish()
        let session = try ReconcileSession.open(options, context: context, provider: provider)
        let planned = try await session.plan(PlanOptions())
        let report = Status.report(planned)
        if format == "json" {
            do { context.console.write(try StatusView.json(report)) } catch { throw CommandError("cannot encode the status: \(error)") }
        } else {
            context.console.write(StatusView.text(report, for: context.console))
        }
        return .success
    }
}
