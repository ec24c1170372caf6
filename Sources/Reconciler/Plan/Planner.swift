public import Basics
import Foundation
import RetentionMessaging
import RetentionMessagingModels
import Runtime
import StateStore

public struct PlanOptions: Sendable, Hashable {
    /// Consider deleting remote content that nothing derives or uses.
    public var prune: Bool
    /// Allow a prune to delete more than `pruneProtectionShare` of the remote content (`--prune-force`).
    public var pruneForce: Bool
    /// Allow deleting more than `pruneProtectionShare` of the defaults Apple holds for the declared
    /// pairs (`--allow-delete-defaults`); unlike `pruneForce`, it prunes nothing.
    public var allowDeleteDefaults: Bool
    /// Rollback targets a prune deletes anyway, because the operator named them.
    public var pruneNamed: Set<String>
    /// How many approved earlier versions of each message localization the state recorded are kept
    /// as rollback targets (a revert then needs no upload and no review).
    public var rollbackVersions: Int
    /// Content submitted from a pull request (`apply --only-uploads`) that the manifests no longer
    /// derive is kept this many days after its last submission, so an open pull request's content
    /// is not pruned under it.
    public var pruneGraceDays: Int
    /// The time the grace period counts to. The planner never reads a clock: `Reconciler.plan`
    /// sets it from its own clock when nil, so the same inputs give the same plan.
    public var now: UTCTime?
    /// Also read the defaults of the pairs this environment leaves alone (an external message without
    /// an identifier here): `import` pairs such a message with what those pairs show in this environment.
    public var readEveryNamedPair = false

    public init(prune: Bool = false, pruneForce: Bool = false, allowDeleteDefaults: Bool = false, pruneNamed: Set<String> = [],
                rollbackVersions: Int = PlanOptions.defaultRollbackVersions,
                pruneGraceDays: Int = PlanOptions.defaultPruneGraceDays, now: UTCTime? = nil) {
        self.prune = prune
        self.pruneForce = pruneForce
        self.allowDeleteDefaults = allowDeleteDefaults
        self.pruneNamed = pruneNamed
        self.rollbackVersions = rollbackVersions
        self.pruneGraceDays = pruneGraceDays
        self.now = now
    }

    /// Kept per message localization by default: enough to revert the last few changes of a message.
    public static let defaultRollbackVersions = 3

    /// Two weeks: long enough for a pull request to wait through App Review and code review.
    public static let defaultPruneGraceDays = 14

    /// A prune that would delete more than this share of remote content is refused without
    /// `pruneForce`; a plan that would delete more than this share of the defaults Apple holds, without
    /// `allowDeleteDefaults`.
    public static let pruneProtectionShare = 0.25
}

/// A plan with everything apply needs to carry it out.
public struct PlanResult: Sendable {
    public var plan: Plan
    public var desired: DesiredState
    public var remote: RemoteState
    /// The snapshot apply would publish (nil when the environment has no snapshot store).
    public var snapshot: CompiledSnapshot?
    public var options: PlanOptions
    /// Where remote content is in use (defaults, the published snapshot's rules).
    public var usage: UsageIndex

    /// The review state of every item the remote holds, of every content kind, as this plan read it.
    public var reviewStates: [String: ReviewState] {
        var states: [String: ReviewState] = [:]
        for kind in ContentKind.allCases {
            states.merge(RemoteResources.resource(of: kind).remoteStates(in: remote)) { first, _ in first }
        }
        return states
    }
}

/// Computes the plan: a pure function of the desired state, the remote state and the options,
/// so the same inputs always give a byte-identical plan.
public enum Planner {
    public static func plan(desired: DesiredState, remote: RemoteState, options: PlanOptions = PlanOptions(),
                            hasSnapshotStore: Bool) throws -> PlanResult {
        let environment = desired.environment
        // A fold over the registered resources: each diffs its part in dependency order, then,
        // once usage is known, annotates its actions and prunes in reverse order.
        var context = PlanContext(desired: desired, remote: remote, options: options, hasSnapshotStore: hasSnapshotStore)
        for resource in RemoteResources.all { try resource.plan(&context) }
        context.usage.add(context.compiled, derived: Set(desired.messages.map(\.identifier)))
        for resource in RemoteResources.all { resource.annotate(&context) }
        let pruneStart = context.actions.count
        for resource in RemoteResources.all.reversed() { resource.prune(&context) }
        // The gate already read every kind's derived items and remote states once: the checks below reuse it.
        let content = context.gate
        protectFromMassPrune(&context.actions[pruneStart...], remoteCount: content.remoteCount, options: options)
        protectDefaultsFromMassDelete(&context.actions, desired: desired, remote: remote, options: options)
        let actions = context.actions, problems = context.problems, compiled = context.compiled, usage = context.usage
        let inventory = context.inventory.sorted { ($0.kind.rawValue, $0.identifier) < ($1.kind.rawValue, $1.identifier) }

        var plan = Plan(
            // 1.1 adds `replaces` and `text_changes`; a plan without them reads as 1.0.
            formatVersion: actions.contains { $0.textChanges != nil } ? Plan.textChangesFormatVersion : Plan.currentFormatVersion,
            environment: environment, bundleId: desired.bundleId, prune: options.prune,
            converged: actions.isEmpty, health: health(content),
            summary: summary(actions, problems: problems), actions: actions,
            problems: problems.sorted { ($0.name, $0.locale ?? "", $0.identifier) < ($1.name, $1.locale ?? "", $1.identifier) },
            inventory: inventory,
            estimate: estimate(actions, desired: desired, remote: remote, content: content),
            apiCalls: remote.apiCalls,
            fingerprints: Fingerprints(manifests: try desired.fingerprint(), remote: try remote.fingerprint()))
        plan.rollbackVersions = options.rollbackVersions == PlanOptions.defaultRollbackVersions ? nil : options.rollbackVersions
        plan.pruneGraceDays = options.pruneGraceDays == PlanOptions.defaultPruneGraceDays ? nil : options.pruneGraceDays
        plan.warnings = context.warnings.sorted()
        plan.inherited = inheritedProblems(actions: actions, problems: problems, desired: desired, remote: remote)
        // What needs a person is said once, by `Plan.attention`; the summary counts it.
        plan.summary.attention = plan.attention.count
        if remote.isFirstPublish, let store = remote.stateStoreName {
            let derived = content.derivedStates
            let atApple = derived.filter { $0 != .notUploaded }.count
            if atApple > 0 {
                plan.missingState = MissingState(store: store, contentAtApple: atApple, contentDerived: derived.count)
            }
        }
        return PlanResult(plan: plan, desired: desired, remote: remote, snapshot: compiled, options: options, usage: usage)
    }

    /// The declared pairs Apple leaves without a working default that no action of this plan sets:
    /// a default on a message App Review REJECTED (unless a problem of the plan already names it),
    /// and pairs with no default at all.
    static func inheritedProblems(actions: [PlanAction], problems: [PlanProblem], desired: DesiredState,
                                  remote: RemoteState) -> [InheritedProblem] {
        let setByPlan = Set(actions.compactMap { action -> ProductLocale? in
            guard case .set(let pair, _, _, _, _)? = action.change.as(DefaultChange.self) else { return nil }
            return pair
        })
        let named = Set(problems.map(\.identifier))
        var found: [InheritedProblem] = [], missing: [ProductLocale] = []
        for pair in desired.declaredPairs.sorted() where !setByPlan.contains(pair) {
            guard let current = remote.defaults[pair] else { missing.append(pair); continue }
            if ReviewState(remote.messages[current]) == .rejected, !named.contains(current) {
                found.append(.defaultShowsRejected(pair, identifier: current))
            }
        }
        if !missing.isEmpty { found.append(.noDefault(missing)) }
        return found
    }

    static func applyGate(_ readiness: ReviewGate.Readiness, to action: inout PlanAction, serving: ActionReason.Serving,
                          environment: Environment, remoteRejections: Set<String>) {
        switch readiness {
        case .approved:
            return
        case .waiting(let items):
            action.state = .blocked
            action.waitingFor = items
            action.reason.wait = environment == .sandbox && items.allSatisfy({ $0.state == .notUploaded })
                ? .sameApply : .review(serving: serving)
        case .rejected(let items):
            action.waitingFor = items
            let rejected = items.filter { $0.state == .rejected }
            if rejected.allSatisfy({ remoteRejections.contains($0.identifier) }) {
                // Rejected after the main branch used it: held until a new version is written.
                action.state = .blocked
                action.reason.wait = .newVersion(serving: serving)
            } else {
                action.state = .error
                action.error = .usesRejected(rejected)
            }
        }
    }

    /// A prune that deletes more than `PlanOptions.pruneProtectionShare` of the remote content is
    /// refused without `pruneForce`.
    static func protectFromMassPrune(_ deletes: inout ArraySlice<PlanAction>, remoteCount remoteTotal: Int, options: PlanOptions) {
        guard !deletes.isEmpty, !options.pruneForce,
              Double(deletes.count) > PlanOptions.pruneProtectionShare * Double(remoteTotal) else { return }
        for index in deletes.indices {
            deletes[index].state = .error
            deletes[index].error = .pruneProtection(deleting: deletes.count, of: remoteTotal)
        }
    }

    static func health(_ content: ReviewGate) -> Health {
        let states = content.derivedStates
        if states.contains(.rejected) { return .degraded }
        if states.contains(.pending) { return .progressing }
        return .healthy
    }

    static func summary(_ actions: [PlanAction], problems: [PlanProblem]) -> PlanSummary {
        func count(_ effect: ActionKind.Effect) -> Int { actions.filter { $0.state == .ready && $0.kind.effect == effect }.count }
        return PlanSummary(
            toUpload: count(.upload),
            toSet: count(.set),
            toDelete: count(.delete),
            blocked: actions.filter { $0.state == .blocked && $0.reason.wait != .sameApply }.count,
            afterUploads: actions.filter { $0.state == .blocked && $0.reason.wait == .sameApply }.count,
            errors: actions.filter { $0.state == .error }.count + problems.filter { $0.severity == .error }.count)
    }

    static func estimate(_ actions: [PlanAction], desired: DesiredState, remote: RemoteState, content: ReviewGate) -> Estimate {
        let sandbox = desired.environment == .sandbox
        // In sandbox, uploads are approved at once and the apply re-lists, so blocked actions
        // waiting only on this apply's uploads are expected to run in the same apply.
        func runs(_ action: PlanAction) -> Bool {
            action.state == .ready || (sandbox && action.state == .blocked
                && action.waitingFor.allSatisfy { $0.state == .notUploaded || $0.state == .pending })
        }
        let running = actions.filter(runs)
        let defaults = running.filter { $0.kind == .setDefault }.count
        var other = running.filter { $0.kind != .setDefault && $0.kind != .publishSnapshot }.count
        let uploads = running.filter { $0.kind.effect == .upload }.count
        if sandbox && uploads > 0 { other += 2 }
        let rates = Estimate.rates(for: desired.environment)
        var counts: [ContentKind: Estimate.ContentCount] = [:]
        for resource in RemoteResources.content {
            let uploaded = running.filter { $0.kind == resource.uploadKind }.count
            let deleted = running.filter { $0.kind == resource.deleteKind }.count
            counts[resource.contentKind] = Estimate.ContentCount(
                after: (content.states[resource.contentKind]?.count ?? 0) + uploaded - deleted, cap: resource.contentKind.cap)
        }
        return Estimate(
            configureDefaultRequests: defaults, otherRequests: other,
            configureDefaultRate: rates.configureDefault, otherRate: rates.other,
            // The plan's own reads already spent part of the hour's budget for the other class.
            minimumSeconds: Estimate.floorSeconds(requests: defaults, rate: rates.configureDefault)
                + max(0, Estimate.floorSeconds(requests: other + remote.apiCalls, rate: rates.other)
                         - Estimate.floorSeconds(requests: remote.apiCalls, rate: rates.other)),
            content: counts)
    }
}
