import Foundation
import RetentionMessaging
import RetentionMessagingModels
import Runtime

/// What a plan action does to its resource: the small verb set every action is spelt with.
public enum PlanVerb: String, Codable, Sendable, Hashable, CaseIterable {
    case upload, set, delete, publish
}

/// The name of a remote resource as plans spell it (`image`, `message`, `default`, …).
public struct ResourceID: RawRepresentable, Codable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }
}

/// One kind of thing an environment holds remotely (in Apple's API or in the state store), and
/// everything the reconciler does with it: diff the desired state against the remote state into
/// actions (through the review gate), and perform one of those actions. Each resource lives in its
/// own folder under `Resources/` and is listed once in `RemoteResources.all`.
protocol RemoteResource: Sendable {
    static var id: ResourceID { get }
    /// Content is immutable and uploaded before anything refers to it; pruned after everything
    /// else ran. Configuration (defaults, the snapshot, the realtime URL) is set in between.
    static var isContent: Bool { get }
    /// The verbs this resource's actions use, in the order apply runs them.
    static var verbs: [PlanVerb] { get }

    /// Adds the actions that bring the remote to the desired state; runs in dependency order.
    static func plan(_ context: inout PlanContext) throws
    /// Runs once every resource planned, when the usage of remote content is known.
    static func annotate(_ context: inout PlanContext)
    /// Adds inventory and deletions of remote content nothing derives or uses; runs in reverse
    /// dependency order, so what refers to content is deleted before the content.
    static func prune(_ context: inout PlanContext)

    /// Performs one action. Returns nil when it was done, or the outcome when Apple's answer means
    /// it needs no doing (already there, already gone) or cannot be done now; throws when it failed.
    static func perform(_ action: PlanAction, in planned: PlanResult, api: any RetentionMessagingAPI,
                        report: inout ApplyReport, recorder: inout StateRecorder?) async throws -> Refusal?
    /// Adds what a successful (or already done) action changed to the state record.
    static func recordDone(_ action: PlanAction, in planned: PlanResult, recorder: inout StateRecorder?, at time: Date)
    /// Records a refusal that later plans must know of.
    static func recordRefusal(_ refusal: Refusal, of action: PlanAction, recorder: inout StateRecorder?, at time: Date)
}

extension RemoteResource {
    static func annotate(_ context: inout PlanContext) {}
    static func prune(_ context: inout PlanContext) {}
    static func recordDone(_ action: PlanAction, in planned: PlanResult, recorder: inout StateRecorder?, at time: Date) {}
    static func recordRefusal(_ refusal: Refusal, of action: PlanAction, recorder: inout StateRecorder?, at time: Date) {}

    /// The action kinds of this resource.
    static var actionKinds: [ActionKind] { verbs.map { ActionKind($0, id) } }
}

/// What the planner's fold carries from one resource to the next.
struct PlanContext {
    let desired: DesiredState
    let remote: RemoteState
    let options: PlanOptions
    let hasSnapshotStore: Bool
    let gate: ReviewGate
    var actions: [PlanAction] = []
    var problems: [PlanProblem] = []
    /// The snapshot apply would publish, once the snapshot resource planned it.
    var compiled: CompiledSnapshot?
    /// Where remote content is in use; complete from `annotate` on.
    var usage: UsageIndex
    var inventory: [InventoryItem] = []

    init(desired: DesiredState, remote: RemoteState, options: PlanOptions, hasSnapshotStore: Bool) {
        self.desired = desired
        self.remote = remote
        self.options = options
        self.hasSnapshotStore = hasSnapshotStore
        gate = ReviewGate(desired: desired, remote: remote)
        usage = UsageIndex(remote: remote)
    }

    var environment: Environment { desired.environment }
}
