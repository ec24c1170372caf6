public import Basics
import RetentionMessaging
import Foundation
public import RetentionMessagingModels
import Runtime
import StateStore

/// `retention-sync status` as a value: every remote message and image with its review state, what
/// the manifests say it is, where it is in use, and what the next reconcile would do with it.
public struct StatusReport: Sendable, Hashable {
    public var formatVersion: String
    public var environment: Environment
    public var bundleId: String
    public var converged: Bool
    public var health: Health
    /// Every content kind's entries, in the kinds' declared order: derived content in the manifests'
    /// order, then what the manifests do not derive, by identifier.
    public var content: [ContentKind: [StatusEntry]]
    public var publishedSnapshot: String?
    public var realtimeURL: String?
    /// The production realtime URL that waits for a passed sandbox performance test, if any.
    public var realtimeURLAwaitingTest: String?
    /// Where the state was read, nil without a store.
    public var stateStore: String?
    /// PENDING longer than this many days is flagged.
    public var pendingWarnDays: Int = Status.defaultPendingWarnDays
    /// What the environment held before these manifests that needs a person (`Plan.inherited`).
    public var inherited: [InheritedProblem] = []

    /// Whether anything needs a person: an entry, or an inherited problem.
    public var needsAttention: Bool { !needingAttention.isEmpty || !inherited.isEmpty }

    /// Entries that need a person: REJECTED, or PENDING longer than `pendingWarnDays`.
    public var needingAttention: [StatusEntry] { ContentKind.allCases.flatMap { content[$0] ?? [] }.filter(\.needsAttention) }

    public var messages: [StatusEntry] { content[.message] ?? [] }
    public var images: [StatusEntry] { content[.image] ?? [] }
}

public struct StatusEntry: Sendable, Hashable {
    public enum Use: Sendable, Hashable {
        case defaultMessage(ProductLocale)
        case publishedRule(String, locale: String)
        /// An image shown by a message (its label) that is in use.
        case shownBy(String)
    }

    /// What the next reconcile would do with one piece of content.
    public enum Next: Sendable, Hashable {
        /// The plan deletes it.
        case delete
        /// Not derived by the manifests: what a prune would do.
        case prune(PruneVerdict)
        /// Not derived and not in the inventory.
        case keep
        case upload
        case rejected
        case waitForReview(then: [Upcoming])
        /// Approved: what is next for it (nothing when empty).
        case proceed([Upcoming])
    }

    public enum Upcoming: Sendable, Hashable {
        /// `now`: in this reconcile; otherwise once what it waits for is approved.
        case becomesDefault(ProductLocale, now: Bool)
        case publishedInRule(String, now: Bool)
        /// The rule's content is ready, but its split group waits for the arms `heldBy`: the group goes live whole.
        case publishedWithGroup(String, heldBy: [String])
    }

    public var identifier: String
    /// `NOT_UPLOADED` for content the manifests derive that is not there yet.
    public var state: ReviewState
    /// Whether the current manifests derive this identifier.
    public var derived: Bool
    public var name: String?
    public var locale: String?
    /// Message content version, or the image size.
    public var version: String?
    public var inUse: [Use]
    public var next: Next
    /// When the current review state was first seen, from the state record.
    public var stateSince: UTCTime?
    /// Whole days in the current review state (nil without a record).
    public var stateAgeDays: Int?
    /// Derived by the manifests, and REJECTED or PENDING longer than the warning threshold.
    public var needsAttention: Bool = false
    /// Declared by an `ExternalMessage` or `ExternalImage` manifest: used by identifier, its content unknown.
    public var external: Bool = false
}

public enum Status {
    public static let defaultPendingWarnDays = 7

    public static func report(_ planned: PlanResult, now: UTCTime, pendingWarnDays: Int = defaultPendingWarnDays) -> StatusReport {
        var report = report(planned)
        let document = planned.remote.state?.document
        func age(_ entry: inout StatusEntry) {
            // Content the tool uploaded has its record; external content, its adoption's.
            let observed = document?.record(for: entry.identifier)?.currentReviewState
                ?? (entry.external ? document?.adoption(of: entry.identifier)?.reviewStates.last : nil)
            if let observed, observed.state == entry.state.rawValue {
                entry.stateSince = observed.firstSeenAt
                entry.stateAgeDays = max(0, Int(now.days(since: observed.firstSeenAt)))
            }
            // Content no manifest derives any more (a rejected text since fixed) is history, not a problem.
            entry.needsAttention = entry.derived && (entry.state == .rejected
                || (entry.state == .pending && (entry.stateAgeDays ?? 0) > pendingWarnDays))
        }
        for kind in report.content.keys {
            for index in report.content[kind, default: []].indices { age(&report.content[kind, default: []][index]) }
        }
        report.pendingWarnDays = pendingWarnDays
        report.stateStore = planned.remote.stateStoreName
        report.inherited = planned.plan.inherited
        return report
    }

    static func report(_ planned: PlanResult) -> StatusReport {
        let desired = planned.desired
        let remote = planned.remote
        let plan = planned.plan
        let uses = ContentUses(planned)
        let next = NextSteps(plan: plan, desired: desired)
        var content: [ContentKind: [StatusEntry]] = [:]
        for resource in RemoteResources.content {
            content[resource.contentKind] = entries(of: resource, desired: desired, remote: remote, uses: uses, next: next)
        }
        return StatusReport(formatVersion: Plan.currentFormatVersion, environment: desired.environment,
                            bundleId: desired.bundleId, converged: plan.converged, health: plan.health,
                            content: content, publishedSnapshot: remote.publishedSnapshot?.digest,
                            realtimeURL: remote.realtimeURL,
                            realtimeURLAwaitingTest: plan.actions.lazy.compactMap { action -> String? in
                                guard action.reason.wait == .performanceTest else { return nil }
                                return action.change.as(RealtimeURLChange.self)?.url
                            }.first)
    }

    /// One kind's entries: what the manifests derive, then what else the remote holds.
    private static func entries(of resource: any ContentResource.Type, desired: DesiredState, remote: RemoteState,
                                uses: ContentUses, next: NextSteps) -> [StatusEntry] {
        var entries: [StatusEntry] = []
        var seen = Set<String>()
        let states = resource.remoteStates(in: remote)
        for item in resource.derived(in: desired) {
            seen.insert(item.identifier)
            let state = states[item.identifier] ?? .notUploaded
            entries.append(StatusEntry(identifier: item.identifier, state: state, derived: true, name: item.statusName,
                                       locale: item.locale, version: item.version, inUse: uses.of(item.identifier),
                                       next: next.of(item.identifier, derived: true, state: state)))
        }
        let external = resource.declaredExternal(in: desired)
        for (id, state) in states.sorted(by: { $0.key < $1.key }) where !seen.contains(id) {
            var entry = StatusEntry(identifier: id, state: state, derived: false, name: next.inventory[id]?.name ?? external[id],
                                    locale: nil, version: resource.remoteVersion(of: id, in: remote), inUse: uses.of(id),
                                    next: next.of(id, derived: false, state: state))
            entry.external = external[id] != nil
            entries.append(entry)
        }
        return entries
    }

    /// Where content is in use: as a default, in a published rule, or shown by in-use content.
    private struct ContentUses {
        var inUse: [String: [StatusEntry.Use]] = [:]
        /// What in-use content shows (an in-use message's images) is in use through it.
        var shownBy: [String: Set<StatusEntry.Use>] = [:]

        init(_ planned: PlanResult) {
            for (id, uses) in planned.usage.uses {
                for use in uses {
                    switch use {
                    case .defaultMessage(let pair): inUse[id, default: []].append(.defaultMessage(pair))
                    case .publishedRule(let rule, let locale): inUse[id, default: []].append(.publishedRule(rule, locale: locale))
                    case .ruleToBePublished, .shownByMessage: break
                    }
                }
            }
            for resource in RemoteResources.content {
                for item in resource.derived(in: planned.desired) where inUse[item.identifier] != nil {
                    for reference in item.references { shownBy[reference.identifier, default: []].insert(.shownBy(item.label)) }
                }
            }
        }

        func of(_ identifier: String) -> [StatusEntry.Use] {
            (inUse[identifier] ?? []) + Array(shownBy[identifier] ?? [])
        }
    }

    /// What the plan does next with each piece of content.
    private struct NextSteps {
        var upcoming: [String: [StatusEntry.Upcoming]] = [:]
        var deletes: Set<String>
        var inventory: [String: InventoryItem]

        init(plan: Plan, desired: DesiredState) {
            for action in plan.actions {
                if case .set(let pair, let id, _, _, _)? = action.change.as(DefaultChange.self) {
                    upcoming[id, default: []].append(.becomesDefault(pair, now: action.state == .ready))
                } else if let compiled = action.change.as(SnapshotChange.self)?.compiled {
                    let now = action.state == .ready
                    for rule in compiled.outcomes where [.added, .updated, .held, .leftOut].contains(rule.outcome) {
                        let waits = !now || rule.outcome == .held || rule.outcome == .leftOut
                        if let compiled = desired.rules.first(where: { $0.id == rule.id }) {
                            for id in Set((compiled.response.messageIdentifiers ?? [:]).values) {
                                upcoming[id, default: []].append(rule.heldBy.isEmpty ? .publishedInRule(rule.id, now: !waits)
                                                                                     : .publishedWithGroup(rule.id, heldBy: rule.heldBy))
                            }
                        }
                    }
                }
            }
            deletes = Set(plan.actions.filter { $0.kind.verb == .delete && RemoteResources.byID[$0.kind.resource]?.isContent == true }
                .compactMap(\.identifier))
            inventory = Dictionary(plan.inventory.map { ($0.identifier, $0) }, uniquingKeysWith: { a, _ in a })
        }

        func of(_ identifier: String, derived: Bool, state: ReviewState) -> StatusEntry.Next {
            if deletes.contains(identifier) { return .delete }
            if !derived { return inventory[identifier].map { .prune($0.prune) } ?? .keep }
            switch state {
            case .notUploaded: return .upload
            case .rejected: return .rejected
            case .pending: return .waitForReview(then: upcoming[identifier] ?? [])
            default: return .proceed(upcoming[identifier] ?? [])
            }
        }
    }
}
