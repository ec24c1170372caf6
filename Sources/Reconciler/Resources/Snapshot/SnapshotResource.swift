import RetentionMessaging
import RetentionMessagingModels
import Runtime
public import StateStore

extension ResourceID {
    /// The runtime snapshot in the state store, which `serve` answers from.
    public static let snapshot = ResourceID(rawValue: "snapshot")
}

extension ActionKind {
    public static let publishSnapshot = ActionKind(.publish, .snapshot)
}

extension ActionID {
    public static let publishSnapshot = ActionID(rawValue: ActionKind.publishSnapshot.rawValue)
}

/// What publishing changes: the compiled snapshot replaces the one published (`current`, its digest).
public struct SnapshotChange: ResourceChange {
    public var compiled: CompiledSnapshot
    public var current: String?

    public init(_ compiled: CompiledSnapshot, current: String?) {
        self.compiled = compiled
        self.current = current
    }

    public var kind: ActionKind { .publishSnapshot }
    public var title: String { "publish snapshot \(PlanAction.shortDigest(compiled.snapshot.digest))" }

    public var identifier: String? { nil }
    public var source: ManifestSource? { nil }
    /// The snapshot lives in the state store itself: nobody else changes it.
    public func drift(against document: StateDocument?) -> Drift? { nil }

    public var fields: ChangeFields {
        var fields = ChangeFields()
        fields.snapshotDigest = compiled.snapshot.digest
        fields.currentSnapshotDigest = current
        fields.rules = compiled.outcomes.isEmpty ? nil : compiled.outcomes
        fields.splitGroups = compiled.groupChanges.isEmpty ? nil : compiled.groupChanges
        return fields
    }
}

/// The published runtime snapshot: compiled from the flows with only approved content, each rule
/// held at its previous version while its new content waits for review.
enum SnapshotResource: RemoteResource {
    static let id = ResourceID.snapshot
    static let isContent = false
    static let verbs: [PlanVerb] = [.publish]

    /// The published snapshot is read from the state store, before Apple (see `RemoteStateReader`).
    static func read(_ api: any RetentionMessagingAPI, pairs: [ProductLocale], into state: inout RemoteState) async throws {}

    static func plan(_ context: inout PlanContext) throws {
        let desired = context.desired, remote = context.remote
        guard context.hasSnapshotStore, !(desired.rules.isEmpty && remote.publishedSnapshot == nil) else { return }
        let snapshot = try SnapshotCompiler.compile(desired: desired, remote: remote, gate: context.gate)
        context.compiled = snapshot
        let publishedDigest = remote.publishedSnapshot?.digest
        let pending = snapshot.outcomes.filter { $0.outcome == .held || $0.outcome == .leftOut }
        let waiting = Array(Set(pending.flatMap(\.waitingFor))).sorted()
        // An empty snapshot where none is published changes nothing a customer sees.
        let changes = snapshot.snapshot.digest != publishedDigest
            && !(publishedDigest == nil && snapshot.snapshot.rules.isEmpty)
        let change = SnapshotChange(snapshot, current: publishedDigest)
        if changes {
            let changed = snapshot.outcomes.filter { [.added, .updated, .removed].contains($0.outcome) }.count
            context.actions.append(PlanAction(
                id: .publishSnapshot,
                reason: ActionReason(publishedDigest == nil ? .noSnapshotPublished(waitingRules: pending.count)
                                                            : .rulesChanged(changed, waitingRules: pending.count)),
                change: change, waitingFor: pending.isEmpty ? [] : waiting))
        } else if !pending.isEmpty {
            var action = PlanAction(id: .publishSnapshot, reason: ActionReason(.rulesWaiting(pending.count)), change: change)
            context.applyGate(waiting.contains { $0.state == .rejected } ? .rejected(waiting) : .waiting(waiting),
                              to: &action, serving: .publishedSnapshot)
            context.actions.append(action)
        }
    }

    static func perform(_ change: SnapshotChange, in planned: PlanResult, api: any RetentionMessagingAPI,
                        report: inout ApplyReport, recorder: inout StateRecorder?) async throws -> Refusal? {
        let compiled = change.compiled
        guard var writer = recorder else {
            return Refusal(.error, "there is no state store to publish to; nothing was written")
        }
        // The snapshot goes live here, before the realtime URL and deletions, with the record so far.
        writer.publishing = compiled.snapshot
        try await writer.write()
        recorder = writer
        report.publishedSnapshot = compiled.snapshot.digest
        return nil
    }
}
