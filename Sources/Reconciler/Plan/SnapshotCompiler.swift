import RetentionMessaging
import RetentionMessagingModels
public import Runtime

/// The runtime snapshot one environment may publish now, and what happens to each rule.
public struct CompiledSnapshot: Sendable, Hashable {
    /// Sealed: its digest is set and it encodes to the same bytes for the same inputs.
    public var snapshot: RuntimeSnapshot
    /// In evaluation order, then removed rules by id.
    public var outcomes: [RuleOutcome]
    /// Live split groups whose arms (or what an arm matches) this snapshot changes, by group name; then
    /// those held back with content in review, as they change when published (`whenPublished`).
    public var groupChanges: [SplitGroupChange] = []
}

/// Compiles the desired rules into a snapshot that holds only rules whose every piece of content
/// (of every registered content kind, with what it references) is APPROVED. A blocked rule keeps its
/// previously published version (same rule id) when that version is still usable; otherwise it is
/// left out until review passes.
///
/// The arms of a split group (rules sharing a split's salt) are published as a whole: while any arm
/// waits for review, every arm of the group stays as it was published (or unpublished), so that no
/// customer's arm changes because of another arm's review state and no comparison runs on a group
/// that is only partly live. A rule outside any group is gated alone.
enum SnapshotCompiler {
    /// One desired rule and what review allows of it on its own.
    private struct Candidate {
        var rule: SnapshotRule
        var before: SnapshotRule?
        var readiness: ReviewGate.Readiness
        var group: String? { rule.match.split?.salt }
    }

    static func compile(desired: DesiredState, remote: RemoteState, gate: ReviewGate) throws -> CompiledSnapshot {
        let published = remote.publishedSnapshot
        let previous = Dictionary((published?.rules ?? []).map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let candidates = desired.rules.map { Candidate(rule: $0, before: previous[$0.id], readiness: gate.readiness(ofRule: $0)) }
        // The arms that hold each split group back, and what they wait for.
        var blockers: [String: [Candidate]] = [:]
        for candidate in candidates where candidate.readiness != .approved {
            if let group = candidate.group { blockers[group, default: []].append(candidate) }
        }
        let kept = Set(desired.rules.map(\.id))
        // Published arms the manifests removed from a group that is held stay with it, right after its
        // last arm, so the group keeps the layout its customers were assigned under.
        var removedArms: [String: [SnapshotRule]] = [:]
        for rule in (published?.rules ?? []) where !kept.contains(rule.id) {
            if let group = rule.match.split?.salt, blockers[group] != nil { removedArms[group, default: []].append(rule) }
        }
        let lastArm = Dictionary(candidates.enumerated().compactMap { index, candidate in candidate.group.map { ($0, index) } },
                                 uniquingKeysWith: { _, last in last })

        var rules: [SnapshotRule] = []
        var outcomes: [RuleOutcome] = []
        for (index, candidate) in candidates.enumerated() {
            let (rule, before) = (candidate.rule, candidate.before)
            if let group = candidate.group, let holding = blockers[group] {
                // An arm that waits itself says what for; a ready arm says which arms hold its group back.
                let ready = candidate.readiness == .approved
                let heldBy = ready ? holding.map(\.rule.id) : []
                let waiting = ready ? Array(Set(holding.flatMap(\.readiness.items))).sorted() : candidate.readiness.items
                if let before, before == rule, ready {
                    rules.append(before)
                    outcomes.append(RuleOutcome(id: rule.id, outcome: .unchanged, version: rule.version, publishedVersion: before.version))
                } else if let before, gate.readiness(ofRule: before) == .approved {
                    rules.append(before)
                    outcomes.append(RuleOutcome(id: rule.id, outcome: .held, version: rule.version, publishedVersion: before.version,
                                                waitingFor: waiting, heldBy: heldBy, changes: RuleChanges.between(before, rule)))
                } else {
                    outcomes.append(RuleOutcome(id: rule.id, outcome: .leftOut, version: rule.version, publishedVersion: before?.version,
                                                waitingFor: waiting, heldBy: heldBy))
                }
                if lastArm[group] == index {
                    for removed in removedArms[group] ?? [] where gate.readiness(ofRule: removed) == .approved {
                        rules.append(removed)
                        outcomes.append(RuleOutcome(id: removed.id, outcome: .held, version: nil, publishedVersion: removed.version,
                                                    waitingFor: waiting, heldBy: holding.map(\.rule.id)))
                    }
                }
            } else if candidate.readiness == .approved {
                rules.append(rule)
                let outcome: RuleOutcome.Outcome = before == nil ? .added : (before == rule ? .unchanged : .updated)
                outcomes.append(RuleOutcome(id: rule.id, outcome: outcome, version: rule.version, publishedVersion: before?.version,
                                            changes: before.map { RuleChanges.between($0, rule) } ?? []))
            } else if let before, gate.readiness(ofRule: before) == .approved {
                rules.append(before)
                outcomes.append(RuleOutcome(id: rule.id, outcome: .held, version: rule.version,
                                            publishedVersion: before.version, waitingFor: candidate.readiness.items,
                                            changes: RuleChanges.between(before, rule)))
            } else {
                outcomes.append(RuleOutcome(id: rule.id, outcome: .leftOut, version: rule.version,
                                            publishedVersion: before?.version, waitingFor: candidate.readiness.items))
            }
        }
        let heldRemoved = Set(outcomes.map(\.id))
        for rule in (published?.rules ?? []).sorted(by: { $0.id < $1.id }) where !kept.contains(rule.id) && !heldRemoved.contains(rule.id) {
            outcomes.append(RuleOutcome(id: rule.id, outcome: .removed, version: nil, publishedVersion: rule.version))
        }
        let snapshot = try RuntimeSnapshot(bundleId: desired.bundleId, appAppleId: desired.appAppleId,
                                           environment: desired.environment, localeFallbacks: desired.localeFallbacks,
                                           rules: rules).sealed()
        // A held group changes nothing now, but the pull request is where people look: say what its
        // publish will do, from the manifests' arms as they will go live.
        let wanted = RuntimeSnapshot(bundleId: desired.bundleId, appAppleId: desired.appAppleId, environment: desired.environment,
                                     localeFallbacks: desired.localeFallbacks, rules: desired.rules)
        var held: [SplitGroupChange] = []
        for var change in blockers.isEmpty ? [] : SplitGroupChange.between(published: published, next: wanted) where blockers[change.group] != nil {
            change.whenPublished = true
            held.append(change)
        }
        return CompiledSnapshot(snapshot: snapshot, outcomes: outcomes,
                                groupChanges: SplitGroupChange.between(published: published, next: snapshot) + held)
    }
}
