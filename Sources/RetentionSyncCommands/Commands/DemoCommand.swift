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
        let demo = try DemoStory(source: source, context: context)
        defer { if !keep { try? FileManager.default.removeItem(at: demo.root) } }
        try await demo.run()
        if keep { context.console.print("The demo's files are in \(demo.root.path).") }
        return .success
    }
}
