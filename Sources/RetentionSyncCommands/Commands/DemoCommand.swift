import CLIKit
import Demo
import Experiments
import Foundation
import Reconciler
import RetentionMessagingModels
import Views
import Operations

struct DemoCommand: ParsedCommand {
    static let name = "demo"
    static let summary = "Run the whole story on the embedded emulator"
    static let manifests = Option.manifests(help: ["The manifests to copy"])
    static let keep = Option("--keep", help: ["Keep the temporary directory and print where it is"])

    static let helpPage = HelpPage(
        usage: "Usage: retention-sync demo [--manifests DIR] [--keep]",
        about: """
        Runs the whole story against the in-process emulator of Apple's API, with a key generated
        for the run: no Apple account, no network. It works on a temporary copy of the manifests
        (default: ./manifests) kept in a temporary git repository, and prints each step as you
        would see it:

          validate → sandbox plan and apply (approved at once, published) → serve on loopback
          passes the emulator's sandbox performance test → production plan and apply (the
          realtime URL is accepted; uploads wait for review, defaults and rules blocked) →
          App Review approves → a
          reconcile publishes → an edited message gets a new version that waits for review while
          the old one keeps serving → reverting the edit rolls back with zero uploads → serve
          records its decisions while 2,000 simulated customers ask it, their notifications come
          back over 35 simulated days, and results names the split's better answer.

        Apple's rate limits are honoured on a virtual clock, so waits take no real time. Exits 1
        if anything in the story does not happen as told.
        """,
        options: [manifests, keep], column: 18)

    struct Options: CommandOptions {
        var source: String
        var keep: Bool

        func validate() throws(CommandError) {}
    }

    static func parse(_ arguments: inout Arguments, context: CommandContext) throws(CommandError) -> Options {
        Options(source: try arguments.value(Self.manifests, as: String.self) ?? Option.defaultManifests, keep: arguments.flag(Self.keep))
    }

    static func run(_ options: Options, context: CommandContext) async throws -> ExitCode {
        let (source, keep) = (options.source, options.keep)
        let demo = try DemoStory(source: source, context: context, host: CommandLineDemoHost())
        defer { if !keep { try? FileManager.default.removeItem(at: demo.root) } }
        try await demo.run()
        if keep { context.console.print("The demo's files are in \(demo.root.path).") }
        return .success
    }
}

/// The commands as the demo's story plays them: each requirement is the command it names, run
/// in-process with the emulator's client in place of `APIProvider.live`.
struct CommandLineDemoHost: DemoHost {
    func run(_ arguments: [String], context: CommandContext) async -> ExitCode {
        await CLI.run(arguments, context: context)
    }

    func plan(_ environment: Environment, api: @escaping DemoAPI, context: CommandContext) async throws(CommandError) -> Plan {
        var arguments = Arguments(["--env", environment.rawValue])
        let options = try EnvironmentOptions.parse(&arguments, context: context)
        return try await ReconcileSession.open(options, context: context, provider: Self.provider(api)).plan(PlanOptions()).plan
    }

    func show(_ plan: Plan, context: CommandContext) throws(CommandError) {
        try PlanCommand.render(plan, format: .text, context: context)
    }

    func exitCode(of plan: Plan, detailed: Bool) -> ExitCode {
        PlanCommand.exitCode(plan, detailed: detailed)
    }

    func apply(_ environment: Environment, api: @escaping DemoAPI, context: CommandContext) async throws(CommandError) -> ExitCode {
        var arguments = Arguments(["--env", environment.rawValue])
        return try await ApplyCommand.execute(&arguments, context: context, provider: Self.provider(api), printPlan: false)
    }

    func performanceTest(_ arguments: [String], api: @escaping DemoAPI, minimumPoll: TimeInterval,
                         context: CommandContext) async throws(CommandError) -> ExitCode {
        var arguments = Arguments(arguments)
        return try await PerformanceTestCommand.execute(&arguments, context: context, provider: Self.provider(api), minimumPoll: minimumPoll)
    }

    static func provider(_ api: @escaping DemoAPI) -> APIProvider {
        APIProvider { environment, _, _, _ in api(environment) }
    }
}
