import Basics
public import CLIKit
import Foundation
import HTTPClient
import Reconciler
public import RetentionMessaging
public import RetentionMessagingModels
import StateLocations
import StateStore
public import Views

/// What `performance-test` is asked: start a test for a sandbox transaction, or follow one.
public struct PerformanceTestTask: Sendable {
    public var environment: ReconcileTarget
    public var transaction: String?
    public var followed: String?
    /// Print the outcome as JSON (and no progress).
    public var json: Bool
    /// Seconds between polls.
    public var interval: Double

    public init(environment: ReconcileTarget, transaction: String?, followed: String? = nil, json: Bool = false, interval: Double) {
        self.environment = environment
        self.transaction = transaction
        self.followed = followed
        self.json = json
        self.interval = interval
    }
}

/// `performance-test` as a use case: runs Apple's test of the sandbox realtime URL to its end,
/// records the result in the state and, after a pass, lets production take its realtime URL.
public enum PerformanceTestOperation {
    public static func test(_ parsed: PerformanceTestTask, context: CommandContext, provider: APIProvider) async throws(CommandError) -> ExitCode {
        let (options, environment, stateStore) = (parsed.environment, parsed.environment.environment, parsed.environment.stateStore)
        let (transaction, followed, interval) = (parsed.transaction, parsed.followed, parsed.interval)
        let json = parsed.json
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

extension PerformanceTestOperation {
    /// Keeps the result in the sandbox state document (`performance_test`) when the App has a state
    /// store that already holds one; the test's outcome, not this bookkeeping, decides the exit code.
    static func record(_ outcome: PerformanceTestRun.Outcome, workspace: Workspace, context: CommandContext, quiet: Bool) async {
        guard let location = workspace.stateLocation else { return }
        do {
            let configuration = try ReconcileTarget.transportConfiguration(context)
            let store = try StateStores.open(location, owner: workspace.desired.owner, environment: context.environment,
                                             transport: CurlHTTPClient(configuration: configuration))
            let read = try await store.read()
            guard var document = read.document, read.migratedFrom == nil else {
                if !quiet { context.console.print("  (not recorded in the state store \(location): it holds no sandbox state yet; apply --env sandbox writes it)") }
                return
            }
            document.performanceTest = PerformanceTestRecord(requestId: outcome.requestId, result: outcome.result, observedAt: SystemClock().time())
            _ = try await store.write(document, condition: read.writeCondition)
            if !quiet { context.console.print("  recorded in the state store \(location)") }
            await RunNotifications.send(RunEvents.events(performanceTest: document.performanceTest, owner: store.owner),
                                        store: store, context: context)
        } catch {
            context.console.error("warning: the result was not recorded in the state store \(location): \(error)")
        }
    }
}

extension PerformanceTestOperation {
    /// After a pass, production's state no longer records its realtime URL as waiting for one, so the
    /// next production plan, on any runner that shares the store, shows setting it ready.
    static func clearProductionWait(workspace: Workspace, store shared: StateLocation?, context: CommandContext, quiet: Bool) async {
        guard let production = try? Workspace.open(workspace.validated, environment: .production, stateStore: shared),
              let location = production.stateLocation else { return }
        do {
            let configuration = try ReconcileTarget.transportConfiguration(context)
            let store = try StateStores.open(location, owner: production.desired.owner, environment: context.environment,
                                             transport: CurlHTTPClient(configuration: configuration))
            let read = try await store.read()
            guard var document = read.document, read.migratedFrom == nil,
                  let waiting = document.realtimeURLAwaitingPerformanceTest else { return }
            document.realtimeURLAwaitingPerformanceTest = nil
            document.updatedAt = SystemClock().time()
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
public struct PerformanceTestRun: Sendable {
    public enum Event: Sendable {
        case started(requestId: String, config: PerformanceTestConfig?)
        case progress(String)
    }

    public typealias Outcome = PerformanceTestOutcome

    public let client: RetentionMessagingClient
    public let interval: Double

    public init(client: RetentionMessagingClient, interval: Double) {
        self.client = client
        self.interval = interval
    }

    public func perform(originalTransactionId: String?, requestId: String?,
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
