public import Foundation
public import RetentionMessagingModels

/// A plan saved with `plan --out`, as apply reads it back: what it was made for and which
/// actions it held in which state. It reads only the keys it needs, so a plan file with keys a
/// later minor version adds reads as well as one written by this version.
public struct SavedPlan: Sendable, Hashable, Decodable {
    public struct Action: Sendable, Hashable, Decodable {
        public var id: ActionID
        public var kind: ActionKind
        public var state: ActionState
        /// For a publish: the snapshot the saved plan would have published.
        public var snapshotDigest: String?

        enum CodingKeys: String, CodingKey { case id, kind, state, snapshotDigest = "snapshot_digest" }

        init(id: ActionID, kind: ActionKind, state: ActionState, snapshotDigest: String?) {
            self.id = id
            self.kind = kind
            self.state = state
            self.snapshotDigest = snapshotDigest
        }
    }

    /// An action the saved plan showed waiting that is ready now: App Review progressed since the
    /// plan was made, so apply does what the reviewed plan said it would do once review allowed.
    public struct Progress: Sendable, Hashable {
        public var title: String
        /// For a publish: the digest the saved plan showed, and the one published now.
        public var savedDigest: String?
        public var digest: String?
    }

    public var formatVersion: String
    public var environment: Environment
    public var bundleId: String
    public var prune: Bool
    public var fingerprints: Fingerprints
    public var actions: [Action]
    /// Absent when the plan kept the default number of rollback versions.
    public var rollbackVersions: Int?
    /// Absent when the plan kept the default prune grace period.
    public var pruneGraceDays: Int?

    enum CodingKeys: String, CodingKey {
        case formatVersion = "format_version", environment, bundleId = "bundle_id", prune, fingerprints, actions
        case rollbackVersions = "rollback_versions", pruneGraceDays = "prune_grace_days"
    }

    /// What saving `plan` keeps for apply.
    public init(_ plan: Plan) {
        formatVersion = plan.formatVersion
        environment = plan.environment
        bundleId = plan.bundleId
        prune = plan.prune
        fingerprints = plan.fingerprints
        actions = plan.actions.map { Action(id: $0.id, kind: $0.kind, state: $0.state, snapshotDigest: $0.change.fields.snapshotDigest) }
        rollbackVersions = plan.rollbackVersions
        pruneGraceDays = plan.pruneGraceDays
    }

    /// The options to re-plan with: the saved plan's prune, and its ready deletions allowed even
    /// past prune protection (content) or defaults protection (defaults), as they were planned;
    /// deletions it refused stay refused.
    public var planOptions: PlanOptions {
        let readyDeletes = actions.filter { $0.state == .ready && $0.kind.verb == .delete }
        let deletes = readyDeletes.contains { RemoteResources.byID[$0.kind.resource]?.isContent == true }
        let deletesDefaults = readyDeletes.contains { $0.kind == .deleteDefault }
        // Rollback targets the plan deleted were named when it was made; the re-plan names them again.
        let prefix = ActionKind.deleteMessage.rawValue + ":"
        let named = Set(actions.compactMap { action -> String? in
            guard action.state == .ready, action.kind == .deleteMessage else { return nil }
            return String(action.id.rawValue.dropFirst(prefix.count))
        })
        return PlanOptions(prune: prune || deletes, pruneForce: deletes, allowDeleteDefaults: deletesDefaults, pruneNamed: named,
                           rollbackVersions: rollbackVersions ?? PlanOptions.defaultRollbackVersions,
                           pruneGraceDays: pruneGraceDays ?? PlanOptions.defaultPruneGraceDays)
    }

    public static func load(_ data: Data) throws(ReconcilerError) -> SavedPlan {
        let plan: SavedPlan
        do {
            plan = try JSONDecoder().decode(SavedPlan.self, from: data)
        } catch {
            throw .invalidPlan("not a retention-sync plan file (\(error))")
        }
        guard plan.formatVersion.split(separator: ".").first == Plan.currentFormatVersion.split(separator: ".").first else {
            throw .invalidPlan("format_version \(plan.formatVersion) is not supported (this version reads \(Plan.currentFormatVersion))")
        }
        return plan
    }

    /// Checks a saved plan against a fresh one made now, and returns the action ids apply may run.
    /// Refuses when the manifests changed, or when the remote changed so that the fresh plan needs
    /// an action the saved plan did not contain. Saved actions the fresh plan no longer needs are
    /// already done and are skipped.
    public static func check(saved: SavedPlan, fresh: Plan) throws(ReconcilerError) -> Set<ActionID> {
        guard saved.environment == fresh.environment else {
            throw .stalePlan("it was made for \(saved.environment.rawValue), not \(fresh.environment.rawValue)")
        }
        guard saved.bundleId == fresh.bundleId else {
            throw .stalePlan("it was made for \(saved.bundleId), not \(fresh.bundleId)")
        }
        guard saved.fingerprints.manifests == fresh.fingerprints.manifests else {
            throw .stalePlan("the manifests changed since the plan was made (fingerprint \(saved.fingerprints.manifests) → \(fresh.fingerprints.manifests))")
        }
        // Actions the saved plan held as errors are never run, whatever the remote says now.
        let allowed = Set(saved.actions.filter { $0.state != .error }.map(\.id))
        let unexpected = fresh.actions.filter { $0.state == .ready && !allowed.contains($0.id) }
        if !unexpected.isEmpty {
            throw .stalePlan("the remote changed since the plan was made; it would now also need: "
                             + unexpected.map(\.title).joined(separator: "; "))
        }
        return allowed
    }

    /// Content the saved plan would delete that is still at Apple and that the fresh plan keeps: it
    /// came into use since (a default someone set), or is kept for another reason the fresh plan
    /// says. Apply does not delete it, and says so.
    public static func kept(saved: SavedPlan, fresh: Plan) -> [InventoryItem] {
        let planned = Set(fresh.actions.map(\.id))
        let deleting = Set(saved.actions.filter { $0.state == .ready && $0.kind.verb == .delete && !planned.contains($0.id) }.map(\.id))
        return fresh.inventory.filter {
            $0.prune != .deletable && deleting.contains(ActionID(RemoteResources.resource(of: $0.kind).deleteKind, $0.identifier))
        }
    }

    /// The actions the saved plan held as blocked that the fresh plan finds ready: what apply now
    /// does beyond what the saved plan showed as ready, to be said before it does it.
    public static func progress(saved: SavedPlan, fresh: Plan) -> [Progress] {
        let waiting = Dictionary(saved.actions.filter { $0.state == .blocked }.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        return fresh.actions.filter { $0.state == .ready }.compactMap { action in
            guard let before = waiting[action.id] else { return nil }
            return Progress(title: action.title, savedDigest: before.snapshotDigest, digest: action.change.fields.snapshotDigest)
        }
    }
}
