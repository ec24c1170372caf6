public import Reconciler

/// What `plan` and `apply` were told about deleting: `--prune`, `--prune-force`, the rollback
/// options and `--allow-delete-defaults`, read the same way for both.
public struct PruneSettings: Sendable {
    public var prune: Bool
    public var force: Bool
    /// `--allow-delete-defaults`: lifts the defaults' delete protection only; it implies no prune.
    public var allowDeleteDefaults: Bool = false
    public var named: Set<String>
    public var rollbackVersions: Int
    public var graceDays: Int

    /// Whether unused content may be deleted (`--prune-force` and `--prune-id` imply `--prune`).
    public var deletes: Bool { prune || force || !named.isEmpty }

    public var planOptions: PlanOptions {
        PlanOptions(prune: deletes, pruneForce: force, allowDeleteDefaults: allowDeleteDefaults, pruneNamed: named,
                    rollbackVersions: rollbackVersions, pruneGraceDays: graceDays)
    }

    public init(prune: Bool = false, force: Bool = false, allowDeleteDefaults: Bool = false, named: Set<String> = [],
                rollbackVersions: Int = PlanOptions.defaultRollbackVersions, graceDays: Int = PlanOptions.defaultPruneGraceDays) {
        self.prune = prune
        self.force = force
        self.allowDeleteDefaults = allowDeleteDefaults
        self.named = named
        self.rollbackVersions = rollbackVersions
        self.graceDays = graceDays
    }
}
