import Basics
import CLIKit
import Foundation
import HTTPClient
import Reconciler
import StateLocations
import StateStore
import RetentionMessaging
import RetentionMessagingModels
import Views
import Operations

struct PerformanceTestCommand: ParsedCommand {
    static let name = "performance-test"
    static let summary = "Run Apple's sandbox performance test against your realtime URL"
    static let originalTransactionId = Option("--original-transaction-id", value: "ID", help: [
        "A sandbox subscription's original transaction id; Apple's requests carry",
        "its product and locale (never printed)",
    ])
    static let requestId = Option("--request-id", value: "ID", help: ["Follow a test already started instead of starting one"])
    static let format = Option("--format", value: "FORMAT", of: StatusFormat.self, default: .text, help: ["How to print the result"])
    static let defaultPollInterval = Seconds(5)
    static let pollInterval = Option("--poll-interval", value: "SECONDS", of: Seconds.self, default: defaultPollInterval,
                                     help: ["Seconds between result calls, at least 2"])

    static let helpPage = HelpPage(
        usage: "Usage: \(PerformanceTestView.invocation) [options]",
        about: """
        Asks Apple to load-test the sandbox realtime URL (POST /performanceTest), shows the test's
        config, polls its result with progress, and prints PASS or FAIL: the success rate against
        the threshold, response-time percentiles against responseTimeThreshold and the failures by
        reason with what each usually means. Apple accepts a production realtime URL only after a
        PASS. Exits 0 on PASS, 1 on FAIL or error. Every poll spends rate-limit budget: polls are
        paced and counted. Sandbox only (Apple runs the test there).
        """,
        options: EnvironmentOptions.connection + [originalTransactionId, requestId, format, pollInterval],
        column: 34,
        footer: EnvironmentOptions.credentialsHelp)

    struct Options: CommandOptions {
        var environment: EnvironmentOptions
        var transaction: String?
        var followed: String?
        var format: StatusFormat
        /// `--poll-interval`, in seconds.
        var interval: Double
        /// The shortest `--poll-interval` allowed: 2 s against Apple; the demo and tests poll an
        /// in-process emulator faster.
        var minimumPoll: Double = 2

        var request: PerformanceTestTask {
            PerformanceTestTask(environment: environment, transaction: transaction, followed: followed, json: format == .json, interval: interval)
        }

        func validate() throws(CommandError) {
            guard environment.environment == .sandbox else {
                throw CommandError("""
                performance-test runs in sandbox only: Apple tests the sandbox realtime URL, and a PASS there is what lets \
                production accept its realtime URL. Run: \(PerformanceTestView.invocation)
                """, exitCode: .usage)
            }
            guard transaction != nil || followed != nil else {
                throw CommandError("give --original-transaction-id ID (a sandbox subscription) to start a test, or --request-id ID to follow one", exitCode: .usage)
            }
            // Checked here rather than while reading: the in-process callers set a lower minimum after parsing.
            guard interval >= minimumPoll, interval <= 600 else {
                throw CommandError("--poll-interval must be a number of seconds from \(Int(minimumPoll)) to 600", exitCode: .usage)
            }
        }
    }

    static func parse(_ arguments: inout Arguments, context: CommandContext) throws(CommandError) -> Options {
        Options(environment: try EnvironmentOptions.parse(&arguments, context: context),
                transaction: try arguments.value(Self.originalTransactionId), followed: try arguments.value(Self.requestId),
                format: try arguments.value(Self.format, as: StatusFormat.self) ?? .text,
                interval: try arguments.value(Self.pollInterval, as: Seconds.self)?.value ?? defaultPollInterval.value)
    }

    static func run(_ options: Options, context: CommandContext) async throws -> ExitCode {
        try await PerformanceTestOperation.test(options.request, context: context, provider: .live)
    }

    /// `minimumPoll` lets the demo and tests poll an in-process emulator quickly.
    static func execute(_ arguments: inout Arguments, context: CommandContext, provider: APIProvider,
                        minimumPoll: Double = 2) async throws(CommandError) -> ExitCode {
        var options = try parse(&arguments, context: context)
        options.minimumPoll = minimumPoll
        try arguments.finish()
        try options.validate()
        return try await PerformanceTestOperation.test(options.request, context: context, provider: provider)
    }
}
