import Basics
import Foundation
import RetentionMessaging
import RetentionMessagingModels
import Runtime
import StateStore

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
    /// What this resource's actions change: its own type, so `perform` handles only its own changes.
    associatedtype Change: ResourceChange

    static var id: ResourceID { get }
    /// Content is immutable and uploaded before anything refers to it; pruned after everything
    /// else ran. Configuration (defaults, the snapshot, the realtime URL) is set in between.
    static var isContent: Bool { get }
    /// The verbs this resource's actions use, in the order apply runs them.
    static var verbs: [PlanVerb] { get }

    /// Reads this resource's remote value into `state` (what `plan` compares the desired state
    /// with), in registry order. Apple lists no defaults, so `pairs` says which to read.
    static func read(_ api: any RetentionMessagingAPI, pairs: [ProductLocale], into state: inout RemoteState) async throws
    /// Adds the actions that bring the remote to the desired state; runs in dependency order.
    static func plan(_ context: inout PlanContext) throws
    /// Runs once every resource planned, when the usage of remote content is known.
    static func annotate(_ context: inout PlanContext)
    /// Adds inventory and deletions of remote content nothing derives or uses; runs in reverse
    /// dependency order, so what refers to content is deleted before the content.
    static func prune(_ context: inout PlanContext)

    /// Performs one action. Returns nil when it was done, or the outcome when Apple's answer means
    /// it needs no doing (already there, already gone) or cannot be done now; throws when it failed.
    static func perform(_ change: Change, in planned: PlanResult, api: any RetentionMessagingAPI,
                        report: inout ApplyReport, recorder: inout StateRecorder?) async throws -> Refusal?
    /// Adds what a successful (or already done) action changed to the state record.
    static func recordDone(_ change: Change, in planned: PlanResult, recorder: inout StateRecorder?, at time: UTCTime)
    /// Records a refusal that later plans must know of.
    static func recordRefusal(_ refusal: Refusal, of change: Change, recorder: inout StateRecorder?, at time: UTCTime)
}

extension ContentResource {
    /// Content is read by its kind's list call.
    static func read(_ api: any RetentionMessagingAPI, pairs: [ProductLocale], into state: inout RemoteState) async throws {
        try await list(api, into: &state)
    }
}

extension RemoteResource {
    static func annotate(_ context: inout PlanContext) {}
    static func prune(_ context: inout PlanContext) {}
    static func recordDone(_ change: Change, in planned: PlanResult, recorder: inout StateRecorder?, at time: UTCTime) {}
    static func recordRefusal(_ refusal: Refusal, of change: Change, recorder: inout StateRecorder?, at time: UTCTime) {}

    /// Performs an action of this resource: the one place a type-erased change meets its type. The
    /// registry hands each action to the resource of its kind, so the mismatch cannot happen in a plan.
    static func perform(_ action: PlanAction, in planned: PlanResult, api: any RetentionMessagingAPI,
                        report: inout ApplyReport, recorder: inout StateRecorder?) async throws -> Refusal? {
        guard let change = action.change.as(Change.self) else { return Refusal(.error, "\(action.kind) is not an action on \(id)") }
        return try await perform(change, in: planned, api: api, report: &report, recorder: &recorder)
    }

    static func recordDone(_ action: PlanAction, in planned: PlanResult, recorder: inout StateRecorder?, at time: UTCTime) {
        guard let change = action.change.as(Change.self) else { return }
        recordDone(change, in: planned, recorder: &recorder, at: time)
    }

    static func recordRefusal(_ refusal: Refusal, of action: PlanAction, recorder: inout StateRecorder?, at time: UTCTime) {
        guard let change = action.change.as(Change.self) else { return }
        recordRefusal(refusal, of: change, recorder: &recorder, at: time)
    }

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
    /// What the manifests stopped declaring that no action changes at Apple.
    var warnings: [PlanWarning] = []
    /// The snapshot apply would publish, once the snapshot resource planned it.
    var compiled: CompiledSnapshot?
    /// Where remote content is in use; complete from `annotate` on.
    var usage: UsageIndex
    var inventory: [InventoryItem] = []
    /// REJECTED content the main branch used before App Review rejected it (by the state record):
    /// a remote condition, reported for attention; other REJECTED content these manifests take up
    /// is an error of the configuration.
    let remoteRejections: Set<String>

    init(desired: DesiredState, remote: RemoteState, options: PlanOptions, hasSnapshotStore: Bool) {
        self.desired = desired
        self.remote = remote
        self.options = options
        self.hasSnapshotStore = hasSnapshotStore
        gate = ReviewGate(desired: desired, remote: remote)
        usage = UsageIndex(remote: remote)
        let document = remote.state?.document
        remoteRejections = Set(ContentKind.allCases.flatMap { kind in
            RemoteResources.resource(of: kind).remoteStates(in: remote).filter { $0.value == .rejected }.map(\.key)
        }.filter { document?.record(for: $0)?.usedByMainBeforeRejection == true })
    }

    var environment: Environment { desired.environment }

    /// Holds `action` back, or marks it an error, by the review state of what it shows.
    func applyGate(_ readiness: ReviewGate.Readiness, to action: inout PlanAction, serving: ActionReason.Serving) {
        Planner.applyGate(readiness, to: &action, serving: serving, environment: environment, remoteRejections: remoteRejections)
    }

    /// The severity of a REJECTED derived item's problem: attention when the main branch used it first.
    func rejectionSeverity(of identifier: String) -> PlanProblem.Severity {
        remoteRejections.contains(identifier) ? .attention : .error
    }
}

/// A resource whose items Apple reviews before they may be shown (messages, images): everything
/// the planner's health, caps, review gate, prune protection, estimate and missing-state check,
/// review ages and the state record need, declared by the kind itself. Each `ContentKind` has
/// exactly one registered content resource (a test holds the registry to it).
protocol ContentResource: RemoteResource {
    static var contentKind: ContentKind { get }
    /// The content of this kind the manifests derive, in the desired state's order.
    static func derived(in desired: DesiredState) -> [DerivedContent]
    /// Every item of this kind the remote holds, with its review state.
    static func remoteStates(in remote: RemoteState) -> [String: ReviewState]
    /// The items of this kind a snapshot rule shows directly.
    static func used(byRule rule: SnapshotRule) -> [String]
    /// Reads this kind's list call into the remote state: what a plan reads, and what a sandbox
    /// apply re-lists to learn the review states its uploads got.
    static func list(_ api: any RetentionMessagingAPI, into state: inout RemoteState) async throws
    /// What the remote fingerprint holds of this kind (under `<kind>s`).
    static func fingerprinted(_ remote: RemoteState) -> any Encodable & Sendable
    /// For `status`: the version a remote item shows when the manifests do not derive it (an image's size).
    static func remoteVersion(of identifier: String, in remote: RemoteState) -> String?
    /// Content of this kind the manifests declare by identifier (`ExternalMessage`, `ExternalImage`),
    /// identifier → name: never uploaded, gated by its listed state, adopted in the state record.
    static func declaredExternal(in desired: DesiredState) -> [String: String]
}

/// One piece of content the manifests derive, as plans name it.
struct DerivedContent: Sendable, Hashable {
    var identifier: String
    var name: String?
    var locale: String?
    /// `name (locale)` for a message, the image's names for an image.
    var label: String
    /// How `status` names it: a message's name, an image's names.
    var statusName: String
    /// A message's content version, an image's size.
    var version: String
    /// What else must be usable for this item to be usable (a message's images).
    var references: [ContentReference] = []
}

/// A piece of content of some kind, by identifier.
struct ContentReference: Sendable, Hashable {
    var kind: ContentKind
    var identifier: String
}

extension ContentResource {
    /// Apple's cap counts what is already there, and uploads come before deletions in apply: over
    /// the cap, every upload of the kind is an error.
    static func capUploads(_ uploads: inout [PlanAction], existing: Int, environment: Environment) {
        guard existing + uploads.count > contentKind.cap else { return }
        for index in uploads.indices {
            uploads[index].state = .error
            uploads[index].error = .overCap(contentKind, existing: existing, uploading: uploads.count, environment: environment)
        }
    }

    /// The action kinds of this content: its upload and its deletion.
    static var uploadKind: ActionKind { ActionKind(.upload, id) }
    static var deleteKind: ActionKind { ActionKind(.delete, id) }
}
