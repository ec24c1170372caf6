import Basics
import CLIKit
import Foundation
import Notify
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
        try await test(options, context: context, provider: .live)
    }

    /// `minimumPoll` lets the demo and tests poll an in-process emulator quickly.
    static func execute(_ arguments: inout Arguments, context: CommandContext, provider: APIProvider,
                        minimumPoll: Double = 2) async throws(CommandError) -> ExitCode {
        var options = try parse(&arguments, context: context)
        options.minimumPoll = minimumPoll
        try arguments.finish()
        try options.validate()
        return try await test(options, context: context, provider: provider)
    }

    static func test(_ parsed: Options, context: CommandContext, provider: APIProvider) async throws(CommandError) -> ExitCode {
        let (options, environment, stateStore) = (parsed.environment, parsed.environment.environment, parsed.environment.stateStore)
        let (transaction, followed, interval) = (parsed.transaction, parsed.followed, parsed.interval)
        let json = parsed.format == .json
        let workspace = try options.openWorkspace(context: context)
        let client = try provider.make(environment, workspace.desired.bundleId, options, context)
        let console = context.console
        let run = PerformanceTestRun(client: client, interval: interval)
        let outcome: PerformanceTestRun.Outcome
        do {
            outcome = try await run.perform(originalTransactionId: transaction, requestId: followed) { event in
                guard !json else { return }
                switch event {
                case .started(let requestId, let config):
                    console.print("performance test \(requestId) (follow it with --request-id \(requestId))")
                    console.print(PerformanceTestView.config(config))
                case .progress(let line):
                    console.print("  " + line)
                }
            }
        } catch {
            throw CommandError(PerformanceTestView.describe(error))
        }
        await record(outcome, workspace: workspace, context: context, quiet: json)
        if outcome.result.result == .pass {
            // A --state-store folder or prefix holds production's document too; a single document does not.
            let shared = stateStore == nil ? nil : workspace.stateLocation.flatMap { $0.namesDocument ? nil : $0 }
            await clearProductionWait(workspace: workspace, store: shared, context: context, quiet: json)
        }
        if json {
            console.write(PerformanceTestView.json(outcome))
        } else {
            console.write(PerformanceTestView.text(outcome))
        }
        return outcome.result.result == .pass ? .success : .failure
    }
}

extension PerformanceTestCommand {
    /// Keeps the result in the sandbox state document (`performance_test`) when the App has a state
    /// store that already holds one; the test's outcome, not this bookkeeping, decides the exit code.
    static func record(_ outcome: PerformanceTestRun.Outcome, workspace: Workspace, context: CommandContext, quiet: Bool) async {
        guard let location = workspace.stateLocation else { return }
        do {
            let configuration = try EnvironmentOptions.transportConfiguration(context)
            let store = try StateStores.open(location, owner: workspace.desired.owner, environment: context.environment,
                                             transport: CurlHTTPClient(configuration: configuration))
            let read = try await store.read()
            guard var document = read.document, read.migratedFrom == nil else {
                if !quiet { context.console.print("  (not recorded in the state store \(location): it holds no sandbox state yet; apply --env sandbox writes it)") }
                return
            }
            document.performanceTest = PerformanceTestRecord(requestId: outcome.requestId, result: outcome.result, observedAt: SystemClock().date())
            _ = try await store.write(document, condition: read.writeCondition)
            if !quiet { context.console.print("  recorded in the state store \(location)") }
            await RunNotifications.send(RunEvents.events(performanceTest: document.performanceTest, owner: store.owner),
                                        store: store, context: context)
        } catch {
            context.console.error("warning: the result was not recorded in the state store \(location): \(error)")
        }
    }
}

extension PerformanceTestCommand {
    /// After a pass, production's state no longer records its realtime URL as waiting for one, so the
    /// next production plan, on any runner that shares the store, shows setting it ready.
    static func clearProductionWait(workspace: Workspace, store shared: StateLocation?, context: CommandContext, quiet: Bool) async {
        guard let production = try? Workspace.open(workspace.validated, environment: .production, stateStore: shared),
              let location = production.stateLocation else { return }
        do {
            let configuration = try EnvironmentOptions.transportConfiguration(context)
            let store = try StateStores.open(location, owner: production.desired.owner, environment: context.environment,
                                             transport: CurlHTTPClient(configuration: configuration))
            let read = try await store.read()
            guard var document = read.document, read.migratedFrom == nil,
                  let waiting = document.realtimeURLAwaitingPerformanceTest else { return }
            document.realtimeURLAwaitingPerformanceTest = nil
            document.updatedAt = SystemClock().date()
            _ = try await store.write(document, condition: read.writeCondition)
            if !quiet {
                context.console.print("  production's realtime URL \(waiting.url) no longer waits for a performance test (cleared in the state store \(location)); apply --env production sets it")
            }
        } catch {
            context.console.error("warning: production's state store \(location) still records its realtime URL as waiting for a performance test: \(error); the next production apply tries it anyway")
        }
    }
}

/// Starts or follows one performance test and polls it to the end, at a pace that leaves the
/// rest of the hour's budget to other commands.
struct PerformanceTestRun: Sendable {
    enum Event: Sendable {
        case started(requestId: String, config: PerformanceTestConfig?)
        case progress(String)
    }

    typealias Outcome = PerformanceTestOutcome

    let client: RetentionMessagingClient
    let interval: Double

    func perform(originalTransactionId: String?, requestId: String?,
                 onEvent: (Event) -> Void) async throws -> Outcome {
        let before = client.requestCounts.total
        let started = ContinuousClock.now
        let id: String
        var config: PerformanceTestConfig?
        if let requestId {
            id = requestId
        } else {
            let response = try await client.initiatePerformanceTest(originalTransactionId: originalTransactionId ?? "")
            id = response.requestId
            config = response.config
        }
        var result = try await client.getPerformanceTestResult(requestId: id)
        config = config ?? result.config
        onEvent(.started(requestId: id, config: config))
        // Bounded: the test's own duration plus a generous margin for Apple's queue.
        let limit = Double(config?.totalDuration ?? 600_000) / 1000 + 600
        while result.result == nil || result.result == .pending {
            let elapsed = Self.seconds(since: started)
            onEvent(.progress(PerformanceTestView.progress(result, config: config, elapsed: elapsed)))
            if elapsed > limit {
                throw CommandError("the test \(id) is still pending after \(Int(elapsed)) s; follow it later with --request-id \(id)")
            }
            try? await Task.sleep(nanoseconds: UInt64(interval * 1_000_000_000))
            result = try await client.getPerformanceTestResult(requestId: id)
        }
        return Outcome(requestId: id, result: result, seconds: Self.seconds(since: started),
                       calls: client.requestCounts.total - before)
    }

    private static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }
}
