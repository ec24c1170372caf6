import RetentionMessaging
public import Foundation
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
    /// Sorted by name, locale, then identifier (content the manifests do not derive last).
    public var messages: [StatusEntry]
    /// Sorted the same way.
    public var images: [StatusEntry]
    public var publishedSnapshot: String?
    public var realtimeURL: String?
    /// The production realtime URL that waits for a passed sandbox performance test, if any.
    public var realtimeURLAwaitingTest: String?
    /// Where the state was read, nil without a store.
    public var stateStore: String?
    /// PENDING longer than this many days is flagged.
    public var pendingWarnDays: Int = Status.defaultPendingWarnDays

    /// Entries that need a person: REJECTED, or PENDING longer than `pendingWarnDays`.
    public var needingAttention: [StatusEntry] { (messages + images).filter(\.needsAttention) }
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
    public var stateSince: Date?
    /// Whole days in the current review state (nil without a record).
    public var stateAgeDays: Int?
    /// Derived by the manifests, and REJECTED or PENDING longer than the warning threshold.
    public var needsAttention: Bool = false
}

public enum Status {
    public static let defaultPendingWarnDays = 7

    public static func report(_ planned: PlanResult, now: Date, pendingWarnDays: Int = defaultPendingWarnDays) -> StatusReport {
        var report = report(planned)
        let document = planned.remote.state?.document
        func age(_ entry: inout StatusEntry) {
            if let observed = document?.record(for: entry.identifier)?.currentReviewState, observed.state == entry.state.rawValue {
                entry.stateSince = observed.firstSeenAt
                entry.stateAgeDays = max(0, Int(now.timeIntervalSince(observed.firstSeenAt) / 86_400))
            }
            // Content no manifest derives any more (a rejected text since fixed) is history, not a problem.
            entry.needsAttention = entry.derived && (entry.state == .rejected
                || (entry.state == .pending && (entry.stateAgeDays ?? 0) > pendingWarnDays))
        }
        for index in report.messages.indices { age(&report.messages[index]) }
        for index in report.images.indices { age(&report.images[index]) }
        report.pendingWarnDays = pendingWarnDays
        report.stateStore = planned.remote.stateStoreName
        return report
    }

    static func report(_ planned: PlanResult) -> StatusReport {
        let desired = planned.desired
        let remote = planned.remote
        let plan = planned.plan

        var inUse: [String: [StatusEntry.Use]] = [:]
        for (id, uses) in planned.usage.uses {
            for use in uses {
                switch use {
                case .defaultMessage(let pair): inUse[id, default: []].append(.defaultMessage(pair))
                case .publishedRule(let rule, let locale): inUse[id, default: []].append(.publishedRule(rule, locale: locale))
                case .ruleToBePublished: break
                }
            }
        }
        var imageUsers: [String: Set<StatusEntry.Use>] = [:]
        for message in desired.messages where inUse[message.identifier] != nil {
            for image in message.imageIdentifiers { imageUsers[image, default: []].insert(.shownBy(message.label)) }
        }
        var upcoming: [String: [StatusEntry.Upcoming]] = [:]
        for action in plan.actions {
            switch action.change {
            case .setDefault(let pair, let id, _, _):
                upcoming[id, default: []].append(.becomesDefault(pair, now: action.state == .ready))
            case .publishSnapshot(let compiled, _):
                let now = action.state == .ready
                for rule in compiled.outcomes where [.added, .updated, .held, .leftOut].contains(rule.outcome) {
                    let waits = !now || rule.outcome == .held || rule.outcome == .leftOut
                    if let compiled = desired.rules.first(where: { $0.id == rule.id }) {
                        for id in Set((compiled.response.messageIdentifiers ?? [:]).values) {
                            upcoming[id, default: []].append(.publishedInRule(rule.id, now: !waits))
                        }
                    }
                }
            case .uploadImage, .uploadMessage, .deleteDefault, .setRealtimeURL, .deleteMessage, .deleteImage:
                break
            }
        }
        let deletes = Set(plan.actions.filter { $0.kind == .deleteMessage || $0.kind == .deleteImage }.compactMap(\.identifier))
        let inventory = Dictionary(plan.inventory.map { ($0.identifier, $0) }, uniquingKeysWith: { a, _ in a })

        func next(derived: Bool, state: ReviewState, identifier: String) -> StatusEntry.Next {
            if deletes.contains(identifier) { return .delete }
            if !derived { return inventory[identifier].map { .prune($0.prune) } ?? .keep }
            switch state {
            case .notUploaded: return .upload
            case .rejected: return .rejected
            case .pending: return .waitForReview(then: upcoming[identifier] ?? [])
            default: return .proceed(upcoming[identifier] ?? [])
            }
        }

        var messages: [StatusEntry] = []
        var seen = Set<String>()
        for message in desired.messages {
            seen.insert(message.identifier)
            let state = ReviewState(remote.messages[message.identifier])
            messages.append(StatusEntry(identifier: message.identifier, state: state, derived: true, name: message.name,
                                        locale: message.locale, version: message.contentVersion,
                                        inUse: inUse[message.identifier] ?? [],
                                        next: next(derived: true, state: state, identifier: message.identifier)))
        }
        for (id, state) in remote.messages.sorted(by: { $0.key < $1.key }) where !seen.contains(id) {
            let state = ReviewState(state)
            messages.append(StatusEntry(identifier: id, state: state, derived: false, name: inventory[id]?.name,
                                        locale: nil, version: nil, inUse: inUse[id] ?? [],
                                        next: next(derived: false, state: state, identifier: id)))
        }

        var images: [StatusEntry] = []
        seen = []
        for image in desired.images {
            seen.insert(image.identifier)
            let state = ReviewState(remote.images[image.identifier]?.state)
            images.append(StatusEntry(identifier: image.identifier, state: state, derived: true,
                                      name: image.names.joined(separator: ", "), locale: nil, version: image.size.rawValue,
                                      inUse: Array(imageUsers[image.identifier] ?? []),
                                      next: next(derived: true, state: state, identifier: image.identifier)))
        }
        for (id, image) in remote.images.sorted(by: { $0.key < $1.key }) where !seen.contains(id) {
            let state = ReviewState(image.state)
            images.append(StatusEntry(identifier: id, state: state, derived: false, name: nil, locale: nil,
                                      version: image.size?.rawValue, inUse: [],
                                      next: next(derived: false, state: state, identifier: id)))
        }

        return StatusReport(formatVersion: Plan.currentFormatVersion, environment: desired.environment,
                            bundleId: desired.bundleId, converged: plan.converged, health: plan.health,
                            messages: messages, images: images, publishedSnapshot: remote.publishedSnapshot?.digest,
                            realtimeURL: remote.realtimeURL,
                            realtimeURLAwaitingTest: plan.actions.lazy.compactMap { action -> String? in
                                guard action.reason.wait == .performanceTest, case .setRealtimeURL(let url, _) = action.change else { return nil }
                                return url
                            }.first)
    }
}
