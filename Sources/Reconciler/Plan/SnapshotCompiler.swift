import RetentionMessaging
import RetentionMessagingModels
public import Runtime

/// The runtime snapshot one environment may publish now, and what happens to each rule.
public struct CompiledSnapshot: Sendable, Hashable {
    /// Sealed: its digest is set and it encodes to the same bytes for the same inputs.
    public var snapshot: RuntimeSnapshot
    /// In evaluation order, then removed rules by id.
    public var outcomes: [RuleOutcome]
}

/// Compiles the desired rules into a snapshot that holds only rules whose every piece of content
/// (of every registered content kind, with what it references) is APPROVED. A blocked rule keeps its previously published version (same rule id) when that
/// version is still usable; otherwise it is left out until review passes.
enum SnapshotCompiler {
    static func compile(desired: DesiredState, remote: RemoteState, gate: ReviewGate) throws -> CompiledSnapshot {
        let published = remote.publishedSnapshot
        let previous = Dictionary((published?.rules ?? []).map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var rules: [SnapshotRule] = []
        var outcomes: [RuleOutcome] = []
        for rule in desired.rules {
            let before = previous[rule.id]
            let readiness = gate.readiness(ofRule: rule)
            if readiness == .approved {
                rules.append(rule)
                let outcome: RuleOutcome.Outcome = before == nil ? .added : (before == rule ? .unchanged : .updated)
                outcomes.append(RuleOutcome(id: rule.id, outcome: outcome, version: rule.version,
                                            publishedVersion: before?.version))
            } else if let before, gate.readiness(ofRule: before) == .approved {
                rules.append(before)
                outcomes.append(RuleOutcome(id: rule.id, outcome: .held, version: rule.version,
                                            publishedVersion: before.version, waitingFor: readiness.items))
            } else {
                outcomes.append(RuleOutcome(id: rule.id, outcome: .leftOut, version: rule.version,
                                            publishedVersion: before?.version, waitingFor: readiness.items))
            }
        }
        let kept = Set(desired.rules.map(\.id))
        for rule in (published?.rules ?? []).sorted(by: { $0.id < $1.id }) where !kept.contains(rule.id) {
            outcomes.append(RuleOutcome(id: rule.id, outcome: .removed, version: nil, publishedVersion: rule.version))
        }
        let snapshot = try RuntimeSnapshot(bundleId: desired.bundleId, appAppleId: desired.appAppleId,
                                           environment: desired.environment, localeFallbacks: desired.localeFallbacks,
                                           rules: rules).sealed()
        return CompiledSnapshot(snapshot: snapshot, outcomes: outcomes)
    }
}
