public import Basics
public import CLIKit
import Foundation
public import Manifests
public import Reconciler
public import RetentionMessaging
import RetentionMessagingModels
import StateStore
import HTTPClient
import Synchronization
import Views

/// Manifests loaded and derived for one environment, with a reconciler bound to its API client
/// and snapshot store: the one service `plan`, `apply` and `status` call.
public struct ReconcileSession: Sendable {
    public var options: ReconcileTarget
    public var console: Console
    public var workspace: Workspace
    public var reconciler: Reconciler
    /// The client behind the reconciler's API (which a command may wrap): its clock and its waits.
    public var client: RetentionMessagingClient

    public var manifests: ManifestSet { workspace.manifests }
    public var desired: DesiredState { workspace.desired }

    public static func open(_ options: ReconcileTarget, context: CommandContext, provider: APIProvider) throws(CommandError) -> ReconcileSession {
        let workspace = try options.openWorkspace(context: context)
        let client = try provider.make(options.environment, workspace.desired.bundleId, options, context)
        if workspace.flowsUnpublished {
            context.console.error(DiagnosticsView.flowsUnpublished(options.environment.rawValue))
        }
        var reconciler: Reconciler
        let configuration = try ReconcileTarget.transportConfiguration(context)
        do throws(StateStoreError) {
            reconciler = try Reconciler.open(workspace, api: client, refresh: options.refreshDefaults, environment: context.environment, clock: SystemClock(),
                                             transport: CurlHTTPClient(configuration: configuration))
        } catch {
            throw CommandError("\(error.description); nothing was read or sent")
        }
        // A long read is announced with its cost before the first call, as import announces its own.
        let environment = options.environment, console = context.console
        reconciler.onReadPlanned = { defaults in
            let estimate = ReadEstimate(environment: environment, pairs: defaults)
            guard estimate.calls >= CallProgress.minimumCalls else { return }
            console.error("Reading \(environment.rawValue): \(estimate.text(before: "the plan"))")
        }
        let heartbeat = ReadHeartbeat(console: context.console, clock: client.clock, environment: options.environment.rawValue)
        client.onWait { seconds, reason in heartbeat.waiting(seconds, reason: reason) }
        return ReconcileSession(options: options, console: context.console, workspace: workspace, reconciler: reconciler, client: client)
    }

    public func plan(_ planOptions: PlanOptions) async throws(CommandError) -> PlanResult {
        do {
            let planned = try await reconciler.plan(desired, options: planOptions)
            if let name = planned.remote.stateStoreName, let read = planned.remote.state {
                if read.isEmpty && planned.plan.missingState == nil {
                    let messages = (desired.externalMessages ?? []).filter { planned.remote.messages[$0.identifier] != nil }.count
                    let images = (desired.externalImages ?? []).filter { planned.remote.images[$0.identifier] != nil }.count
                    let adopting = [(messages, "message"), (images, "image")].filter { $0.0 > 0 }
                        .map { "\($0.0) external \($0.1)\($0.0 == 1 ? "" : "s")" }.joined(separator: " and ")
                    let adoption = adopting.isEmpty ? ""
                        : " and records the \(adopting) Apple holds as adopted (content retention-sync did not upload is no sign of a lost store)"
                    console.error("First publish: the state store \(name) is reachable and holds nothing yet; apply writes the first state document\(adoption).")
                } else if let legacy = read.migratedFrom {
                    console.error("Migrating: the runtime snapshot file \(legacy) is read as the published snapshot; apply writes it into the state store \(name).")
                }
            }
            return planned
        } catch let error as StateStoreError {
            throw CommandError("cannot read the state: \(error.description); nothing was planned or sent (fix the store, or its AWS_* variables, and run again)")
        } catch let error as ReconcilerError {
            throw CommandError(PlanWording.describe(error))
        } catch {
            throw CommandError("reading \(options.environment.rawValue) failed: \(error)")
        }
    }
}

extension ReconcileSession {
    /// Records what a plan's reads showed when an apply has nothing to do (review states, the
    /// refresh cursor), so the next plan reads the next window of defaults.
    public func recordState(_ planned: PlanResult, notAllowedDetail: String? = nil) async throws(CommandError) {
        do {
            _ = try await Applier(api: reconciler.api, state: reconciler.state, notAllowedDetail: notAllowedDetail,
                                  clock: reconciler.clock).recordState(planned)
        } catch {
            throw CommandError("nothing needed applying, but recording the state failed: \(error.description)")
        }
    }
}

/// Waits on Apple's rate limits while a plan reads, on standard error (standard output is the
/// plan): every noticeable wait on a terminal, and in a log a heartbeat at most every
/// `ApplyProgressView.heartbeatInterval` seconds, the first at once, so a CI job never looks hung.
/// Apply replaces it with its own progress view once it starts performing.
public final class ReadHeartbeat: Sendable {
    public let console: Console
    public let clock: any RetentionClock
    public let environment: String
    private let last = Mutex<Double?>(nil)

    public init(console: Console, clock: any RetentionClock, environment: String) {
        self.console = console
        self.clock = clock
        self.environment = environment
    }

    public func waiting(_ seconds: Double, reason: String) {
        let now = clock.now()
        let show: Bool = last.withLock { last in
            if console.isTerminal { return seconds >= 1 }
            if let previous = last, now - previous < ApplyProgressView.heartbeatInterval { return false }
            last = now
            return true
        }
        if show { console.error("  … reading \(environment): waiting \(PlanView.seconds(seconds)) (\(reason))") }
    }
}

/// What reading an environment costs before it starts (an import, a plan, an apply's plan): the two
/// list calls, one `GET /default` per pair read and the realtime URL — all in Apple's "every other
/// endpoint" class — against the hourly budget Apple gives that class in the environment.
struct ReadEstimate {
    var environment: Environment
    var pairs: Int

    var calls: Int { 2 + pairs + 1 }
    var budget: Int { RateLimits.apple.perWindow(.other, in: environment) }
    var rate: Double { RateLimits.apple.perSecond(.other, in: environment) }
    /// The least time Apple's budget allows, starting with a full hour's budget.
    var floorSeconds: Double { Estimate.floorSeconds(requests: calls, rate: rate) }

    var text: String { text(before: "anything is written") }

    /// `before`: what waits for the read (`anything is written`, `the plan`).
    func text(before: String) -> String {
        let what = "about \(calls) calls (the message and image lists, \(pairs) default\(pairs == 1 ? "" : "s"), the realtime URL) before \(before)"
        let limit = "Apple allows \(budget) an hour in \(environment.rawValue)"
        guard calls > budget else { return "\(what); \(limit), so they fit in one hour's budget." }
        let rateText = rate < 1 ? String(format: "%.1f", rate) : String(Int(rate))
        return "\(what); \(limit), so after the first \(budget) it paces itself at \(rateText) a second: at least \(PlanView.seconds(floorSeconds))."
    }
}
