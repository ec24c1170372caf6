public import Basics
import Foundation
import RetentionMessaging
public import RetentionMessagingModels

// The plan as a value: what the views print and the plan encoder saves.

public struct Plan: Sendable, Hashable {
    public static let currentFormatVersion = "1.0"
    /// The version of a plan that carries text changes or review ages (additive keys).
    public static let textChangesFormatVersion = "1.1"

    public var formatVersion: String
    public var environment: Environment
    public var bundleId: String
    /// Whether deletions of unused content were considered.
    public var prune: Bool
    /// Sync: the remote matches the manifests (no action of any state is left).
    public var converged: Bool
    /// Health: Apple's review states of the content the manifests derive.
    public var health: Health
    public var summary: PlanSummary
    /// In the order apply performs them.
    public var actions: [PlanAction]
    /// Content that needs a change in the manifests (REJECTED by review), sorted.
    public var problems: [PlanProblem]
    /// Remote content the current manifests do not derive, sorted by kind then identifier.
    public var inventory: [InventoryItem]
    public var estimate: Estimate
    /// The API calls reading the remote state took.
    public var apiCalls: Int
    public var fingerprints: Fingerprints
    /// With a state record: derived content PENDING or REJECTED and for how long (format 1.1).
    public var reviewAges: [ReviewAge] = []
    /// The rollback versions a prune kept, when not the default (format 1.2; absent otherwise).
    public var rollbackVersions: Int?
    /// The prune grace period in days, when not the default (absent otherwise).
    public var pruneGraceDays: Int?
    /// The state store holds nothing although Apple already holds content these manifests derive:
    /// the state was lost or moved, not a first publish. Apply refuses until it is brought over or
    /// the operator confirms a first publish.
    public var missingState: MissingState?
    /// A plan that prunes read every default first: how many pairs, and the calls that cost beyond
    /// what `--refresh-defaults` reads (absent when the plan does not prune).
    public var pruneRead: PruneRead?
    /// What these manifests stopped declaring that no action changes at Apple, sorted.
    public var warnings: [PlanWarning] = []
    /// What the environment held before these manifests that a person should fix and no action of
    /// this plan changes (a default on REJECTED content, declared pairs with no default).
    public var inherited: [InheritedProblem] = []

    public init(formatVersion: String = Plan.currentFormatVersion, environment: Environment, bundleId: String,
                prune: Bool, converged: Bool, health: Health, summary: PlanSummary, actions: [PlanAction],
                problems: [PlanProblem], inventory: [InventoryItem], estimate: Estimate, apiCalls: Int,
                fingerprints: Fingerprints) {
        self.formatVersion = formatVersion
        self.environment = environment
        self.bundleId = bundleId
        self.prune = prune
        self.converged = converged
        self.health = health
        self.summary = summary
        self.actions = actions
        self.problems = problems
        self.inventory = inventory
        self.estimate = estimate
        self.apiCalls = apiCalls
        self.fingerprints = fingerprints
    }

    /// What this configuration got wrong or this run cannot do: exit 1.
    public var hasErrors: Bool { problems.contains { $0.severity == .error } || actions.contains { $0.state == .error } }
    /// Remote conditions a person must act on that this configuration did not cause (exit 3 where
    /// the exit code reports them): content App Review rejected after the main branch used it,
    /// and a production realtime URL Apple holds back until a sandbox performance test passes.
    public var attention: [Attention] {
        problems.filter { $0.severity == .attention }.map(Attention.rejected)
            + actions.filter { $0.state == .blocked && $0.reason.wait == .performanceTest }.map { Attention.performanceTest($0.title) }
            + inherited.map(Attention.inherited)
    }
    public var needsAttention: Bool { !attention.isEmpty }
    public var hasReadyActions: Bool { actions.contains { $0.state == .ready } }
    public func action(_ id: ActionID) -> PlanAction? { actions.first { $0.id == id } }

    /// Blocked actions that only wait for this apply's own uploads, which sandbox approves at
    /// once: the same apply performs them after its re-list.
    public func runsAfterRelist(_ action: PlanAction) -> Bool {
        action.state == .blocked && action.reason.wait == .sameApply
    }

    /// Sandbox: the snapshot apply publishes is compiled again after the re-list, so the digest
    /// this plan shows changes when a rule waits only for this apply's uploads.
    public var snapshotDigestChangesInApply: Bool {
        guard environment == .sandbox, summary.toUpload > 0,
              let publish = actions.first(where: { $0.kind == .publishSnapshot }),
              let compiled = publish.change.as(SnapshotChange.self)?.compiled else { return false }
        return compiled.outcomes.contains {
            ($0.outcome == .held || $0.outcome == .leftOut) && !$0.waitingFor.isEmpty
                && $0.waitingFor.allSatisfy { $0.state == .notUploaded }
        }
    }
}

/// A remote condition a person must act on, not caused by the configuration planned.
public enum Attention: Sendable, Hashable, CustomStringConvertible {
    /// App Review rejected content the main branch already used.
    case rejected(PlanProblem)
    /// Apple refused the production realtime URL until a sandbox performance test passes.
    case performanceTest(String)
    /// What the environment held before these manifests.
    case inherited(InheritedProblem)

    public var description: String {
        switch self {
        case .rejected(let problem): problem.message
        case .performanceTest(let title): "\(title): Apple takes the production realtime URL once a sandbox performance test passes (retention-sync performance-test --env sandbox)"
        case .inherited(let problem): problem.description
        }
    }
}

/// A condition the environment was in before these manifests — set up by hand or by a vendor — that
/// leaves customers without the answer a team means to give, and that no action of the plan changes.
public enum InheritedProblem: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Apple's default for the pair is a message App Review REJECTED: the pair shows no default message.
    case defaultShowsRejected(ProductLocale, identifier: String)
    /// Declared pairs that have no default at Apple, and that the manifests assign none.
    case noDefault([ProductLocale])

    /// The JSON `kind`.
    public var kind: String {
        switch self {
        case .defaultShowsRejected: "default_shows_rejected"
        case .noDefault: "no_default"
        }
    }

    public var description: String {
        switch self {
        case .defaultShowsRejected(let pair, let identifier):
            "the default of \(pair) is message \(identifier), which App Review REJECTED: customers there see no default message "
                + "(assign an approved message in a Defaults document)"
        case .noDefault(let pairs):
            "\(pairs.count) declared pair\(pairs.count == 1 ? " has" : "s have") no default message at Apple and none in the manifests ("
                + pairs.prefix(5).map(\.description).joined(separator: ", ") + (pairs.count > 5 ? ", …" : "")
                + "): assign one in a Defaults document, or remove the locale from the product in the App"
        }
    }

    public static func < (lhs: InheritedProblem, rhs: InheritedProblem) -> Bool { lhs.description < rhs.description }
}

/// A change in the manifests that no action carries out at Apple: neither an error (the plan is
/// valid) nor a remote condition (this change made it), but a reviewer must see it, because the
/// plan alone would read as "No changes".
public enum PlanWarning: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The state records `recorded` as the environment's realtime URL; the manifests declare none
    /// now, and retention-sync never unsets one, so Apple keeps calling `held`.
    case realtimeURLRemoved(environment: Environment, recorded: String, held: String)

    /// The JSON `kind`.
    public var kind: String {
        switch self {
        case .realtimeURLRemoved: "realtime_url_removed"
        }
    }

    /// The setting, as the manifests spell it.
    public var field: String {
        switch self {
        case .realtimeURLRemoved(let environment, _, _): "environments.\(environment.rawValue).realtimeURL"
        }
    }

    public var description: String {
        switch self {
        case .realtimeURLRemoved(_, let recorded, let held):
            let was = recorded == held ? "" : " (it was \(recorded))"
            return "\(field) was removed from the manifests\(was); Apple keeps \(held), and nothing will change it"
        }
    }

    public static func < (lhs: PlanWarning, rhs: PlanWarning) -> Bool { (lhs.kind, lhs.field) < (rhs.kind, rhs.field) }
}

/// Review health, the second axis beside sync.
public enum Health: String, Codable, Sendable, Hashable {
    /// Every piece of content the manifests derive and the remote holds is APPROVED.
    case healthy
    /// Some of it waits for review (PENDING).
    case progressing
    /// Some of it was REJECTED: a content change is needed.
    case degraded
}

public struct PlanSummary: Codable, Sendable, Hashable {
    public var toUpload: Int
    public var toSet: Int
    public var toDelete: Int
    /// Held back past this apply: waiting for App Review, a performance test or a new version.
    public var blocked: Int
    /// Sandbox: actions this apply performs once sandbox has approved its own uploads (after the
    /// re-list); not blocked, since the same run does them.
    public var afterUploads: Int
    public var errors: Int
    /// Remote conditions a person must act on (see `Plan.attention`).
    public var attention: Int

    enum CodingKeys: String, CodingKey {
        case toUpload = "to_upload", toSet = "to_set", toDelete = "to_delete", blocked, afterUploads = "after_uploads", errors, attention
    }

    public init(toUpload: Int, toSet: Int, toDelete: Int, blocked: Int, afterUploads: Int = 0, errors: Int, attention: Int = 0) {
        self.toUpload = toUpload
        self.toSet = toSet
        self.toDelete = toDelete
        self.blocked = blocked
        self.afterUploads = afterUploads
        self.errors = errors
        self.attention = attention
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        toUpload = try c.decode(Int.self, forKey: .toUpload)
        toSet = try c.decode(Int.self, forKey: .toSet)
        toDelete = try c.decode(Int.self, forKey: .toDelete)
        blocked = try c.decode(Int.self, forKey: .blocked)
        afterUploads = try c.decodeIfPresent(Int.self, forKey: .afterUploads) ?? 0
        errors = try c.decode(Int.self, forKey: .errors)
        // Saved before attention was counted apart.
        attention = try c.decodeIfPresent(Int.self, forKey: .attention) ?? 0
    }
}

/// What publishing does to one rule.
public struct RuleOutcome: Codable, Sendable, Hashable {
    public enum Outcome: String, Codable, Sendable, Hashable {
        /// New rule, published now.
        case added
        /// A new version, published now.
        case updated
        /// Already published at this version.
        case unchanged
        /// The new version is blocked; the previously published version keeps serving.
        case held
        /// Blocked and never published before: not in the snapshot yet.
        case leftOut = "left_out"
        /// No longer in the manifests: removed from the snapshot.
        case removed
    }

    public var id: String
    public var outcome: Outcome
    public var version: String?
    public var publishedVersion: String?
    public var waitingFor: [ReviewItem]
    /// For an arm of a split group held (or left out) with its group: the arms that hold the group
    /// back, by rule id; `waitingFor` then says what they wait for. Empty otherwise.
    public var heldBy: [String] = []
    /// For a new version of a published rule (updated, or held): what it changes, attribute by
    /// attribute (`split.percent`, `response.message`, …). Empty otherwise.
    public var changes: [FieldChange] = []

    enum CodingKeys: String, CodingKey {
        case id, outcome, version, publishedVersion = "published_version", waitingFor = "waiting_for", heldBy = "held_by", changes
    }

    public init(id: String, outcome: Outcome, version: String?, publishedVersion: String?, waitingFor: [ReviewItem] = [],
                heldBy: [String] = [], changes: [FieldChange] = []) {
        self.id = id
        self.outcome = outcome
        self.version = version
        self.publishedVersion = publishedVersion
        self.waitingFor = waitingFor
        self.heldBy = heldBy
        self.changes = changes
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        outcome = try c.decode(Outcome.self, forKey: .outcome)
        version = try c.decodeIfPresent(String.self, forKey: .version)
        publishedVersion = try c.decodeIfPresent(String.self, forKey: .publishedVersion)
        waitingFor = try c.decodeIfPresent([ReviewItem].self, forKey: .waitingFor) ?? []
        heldBy = try c.decodeIfPresent([String].self, forKey: .heldBy) ?? []
        changes = try c.decodeIfPresent([FieldChange].self, forKey: .changes) ?? []
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(outcome, forKey: .outcome)
        try c.encodeIfPresent(version, forKey: .version)
        try c.encodeIfPresent(publishedVersion, forKey: .publishedVersion)
        if !waitingFor.isEmpty { try c.encode(waitingFor, forKey: .waitingFor) }
        if !heldBy.isEmpty { try c.encode(heldBy, forKey: .heldBy) }
        if !changes.isEmpty { try c.encode(changes, forKey: .changes) }
    }
}

/// Content that needs a change in the manifests.
public struct PlanProblem: Codable, Sendable, Hashable {
    /// What is wrong: `rejected_<kind>` (the content of that kind was REJECTED by App Review).
    public struct Kind: Codable, Sendable, Hashable {
        public var rejected: ContentKind

        public init(rejected: ContentKind) { self.rejected = rejected }

        public static let rejectedMessage = Kind(rejected: .message)
        public static let rejectedImage = Kind(rejected: .image)

        public var rawValue: String { "rejected_\(rejected.rawValue)" }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard text.hasPrefix("rejected_"), let kind = ContentKind(rawValue: String(text.dropFirst(9))) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "unknown problem kind '\(text)'")
            }
            rejected = kind
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(rawValue)
        }
    }

    /// Whose doing it is: these manifests' (an error, exit 1) or the remote's (attention, exit 3).
    public enum Severity: String, Codable, Sendable, Hashable {
        /// These manifests take up content App Review had already REJECTED (a pull request that
        /// introduces it, or text changed back to a rejected version): the configuration is wrong.
        case error
        /// App Review rejected content the main branch already used: a remote condition a person
        /// must act on (write a new version), not something this change did.
        case attention
    }

    public var kind: Kind
    public var identifier: String
    public var name: String
    public var locale: String?
    public var message: String
    public var severity: Severity

    public init(kind: Kind, identifier: String, name: String, locale: String?, message: String, severity: Severity = .error) {
        self.kind = kind
        self.identifier = identifier
        self.name = name
        self.locale = locale
        self.message = message
        self.severity = severity
    }

    /// How a problem names a REJECTED item: whose doing the rejection is, by severity.
    public static func rejectedWording(_ item: String, severity: Severity) -> String {
        switch severity {
        case .attention: "\(item) was REJECTED by App Review after the main branch began using it (not caused by this change)"
        case .error: "\(item) was already REJECTED by App Review, and these manifests take it up"
        }
    }

    enum CodingKeys: String, CodingKey { case kind, identifier, name, locale, message, severity }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        kind = try c.decode(Kind.self, forKey: .kind)
        identifier = try c.decode(String.self, forKey: .identifier)
        name = try c.decode(String.self, forKey: .name)
        locale = try c.decodeIfPresent(String.self, forKey: .locale)
        message = try c.decode(String.self, forKey: .message)
        // Plans saved before severities existed held every problem as an error.
        severity = try c.decodeIfPresent(Severity.self, forKey: .severity) ?? .error
    }
}

/// Remote content the current manifests do not derive.
public struct InventoryItem: Sendable, Hashable {
    public typealias Kind = ContentKind
    public enum Label: String, Codable, Sendable, Hashable {
        /// Nothing known about it: uploaded by hand or by other manifests.
        case unmanaged
        /// An earlier version of a message the manifests still have (named by the published snapshot).
        case olderVersion = "older_version"
        /// A version uploaded after the one the manifests derive now (the manifests were reverted).
        case newerVersion = "newer_version"
        /// An approved earlier (or later) version the state recorded, kept so that reverting to it
        /// needs no upload and no review.
        case rollbackTarget = "rollback_target"
        /// Submitted for review from a pull request (`apply --only-uploads`) that the main branch
        /// does not derive (yet): an open pull request's content, or an abandoned one's.
        case submitted
        /// Declared by an `ExternalMessage` manifest: used by identifier, its content unknown.
        case external
    }

    public var kind: Kind
    public var identifier: String
    public var state: ReviewState
    public var label: Label
    /// For older versions: the message name the published snapshot gives it.
    public var name: String?
    /// For submitted content: who submitted it (`pr-12`), sorted.
    public var submittedBy: [String] = []
    /// Where it is in use: `default <product>/<locale>`, `rule <flow>/<rule>`.
    public var usedBy: [UsageIndex.Use]
    /// Whether a prune would delete it, and if not, why.
    public var prune: PruneVerdict

    public init(kind: Kind, identifier: String, state: ReviewState, label: Label, name: String?, usedBy: [UsageIndex.Use], prune: PruneVerdict) {
        self.kind = kind
        self.identifier = identifier
        self.state = state
        self.label = label
        self.name = name
        self.usedBy = usedBy
        self.prune = prune
    }
}

/// What a prune does with remote content the manifests do not derive.
public enum PruneVerdict: Sendable, Hashable {
    /// Nothing refers to it: a prune deletes it.
    case deletable
    /// A default or a rule uses it.
    case inUse
    /// An image that messages of unknown content may show (the list calls never say which).
    case mayBeShownByUnknownMessages(Int)
    /// A rollback target: deleted only when named (`--prune-id`) or once newer approved versions push
    /// it out of the kept window.
    case rollbackTarget
    /// Submitted from a pull request within the grace period (`--prune-grace`): kept until then.
    case withinGrace(until: UTCTime)
    /// Declared by an `ExternalMessage` manifest: deleted only when named (`--prune-id`).
    case external
}

/// What the apply will cost in requests and time under Apple's rate limits.
public struct Estimate: Codable, Sendable, Hashable {
    /// `PUT /default/...` requests.
    public var configureDefaultRequests: Int
    /// Every other request (uploads, deletes, the realtime URL, the sandbox re-list).
    public var otherRequests: Int
    /// Apple's rates for this environment, requests per second.
    public var configureDefaultRate: Double
    public var otherRate: Double
    /// The least time Apple's limits allow, in seconds: per class, the requests beyond one
    /// hour's budget (3600 × rate) divided by the rate, counting the plan's own reads as already
    /// spent (an apply right after its plan).
    public var minimumSeconds: Double
    /// Per content kind: how many the environment holds after apply, and Apple's cap.
    public var content: [ContentKind: ContentCount]

    public struct ContentCount: Sendable, Hashable {
        public var after: Int
        public var cap: Int

        public init(after: Int, cap: Int) {
            self.after = after
            self.cap = cap
        }
    }

    enum CodingKeys: String, CodingKey {
        case configureDefaultRequests = "configure_default_requests", otherRequests = "other_requests"
        case configureDefaultRate = "configure_default_rate", otherRate = "other_rate"
        case minimumSeconds = "minimum_seconds"
    }

    public init(configureDefaultRequests: Int, otherRequests: Int, configureDefaultRate: Double, otherRate: Double,
                minimumSeconds: Double, content: [ContentKind: ContentCount]) {
        self.configureDefaultRequests = configureDefaultRequests
        self.otherRequests = otherRequests
        self.configureDefaultRate = configureDefaultRate
        self.otherRate = otherRate
        self.minimumSeconds = minimumSeconds
        self.content = content
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        configureDefaultRequests = try container.decode(Int.self, forKey: .configureDefaultRequests)
        otherRequests = try container.decode(Int.self, forKey: .otherRequests)
        configureDefaultRate = try container.decode(Double.self, forKey: .configureDefaultRate)
        otherRate = try container.decode(Double.self, forKey: .otherRate)
        minimumSeconds = try container.decode(Double.self, forKey: .minimumSeconds)
        let counts = try decoder.container(keyedBy: ContentKindKey.self)
        var content: [ContentKind: ContentCount] = [:]
        for kind in ContentKind.allCases {
            guard let after = try counts.decodeIfPresent(Int.self, forKey: ContentKindKey(kind, suffix: "_after")) else { continue }
            content[kind] = ContentCount(after: after, cap: try counts.decodeIfPresent(Int.self, forKey: ContentKindKey(kind, suffix: "_cap")) ?? kind.cap)
        }
        self.content = content
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(configureDefaultRequests, forKey: .configureDefaultRequests)
        try container.encode(otherRequests, forKey: .otherRequests)
        try container.encode(configureDefaultRate, forKey: .configureDefaultRate)
        try container.encode(otherRate, forKey: .otherRate)
        try container.encode(minimumSeconds, forKey: .minimumSeconds)
        // `<kind>s_after` and `<kind>s_cap` for every content kind.
        var counts = encoder.container(keyedBy: ContentKindKey.self)
        for (kind, count) in content {
            try counts.encode(count.after, forKey: ContentKindKey(kind, suffix: "_after"))
            try counts.encode(count.cap, forKey: ContentKindKey(kind, suffix: "_cap"))
        }
    }

    public var totalRequests: Int { configureDefaultRequests + otherRequests }

    /// Seconds the requests take at Apple's sustained rates, one class after the other as apply
    /// sends them: what an apply costs once the hour's budget is spent (by earlier runs, or by a
    /// large first sync), where `minimumSeconds` assumes a fresh budget.
    public var sustainedSeconds: Double {
        func time(_ requests: Int, _ rate: Double) -> Double { rate > 0 ? Double(requests) / rate : 0 }
        return time(configureDefaultRequests, configureDefaultRate) + time(otherRequests, otherRate)
    }

    /// Apple's rates for an environment, from the one table the client and the emulator use too.
    public static func rates(for environment: Environment) -> (configureDefault: Double, other: Double) {
        (RateLimits.apple.perSecond(.configureDefault, in: environment), RateLimits.apple.perSecond(.other, in: environment))
    }

    /// The floor Apple's hourly budgets impose on `n` requests at `rate` per second.
    public static func floorSeconds(requests: Int, rate: Double) -> Double {
        max(0, (Double(requests) - RateLimits.apple.window * rate) / rate)
    }
}

public struct Fingerprints: Codable, Sendable, Hashable {
    /// Over the desired state the manifests derive for this environment.
    public var manifests: String
    /// Over the remote state the plan read.
    public var remote: String

    public init(manifests: String, remote: String) {
        self.manifests = manifests
        self.remote = remote
    }
}

/// What a plan that prunes read so that "in use" rests on what it saw: every default pair the
/// manifests name, the state record's trust and the refresh window notwithstanding.
public struct PruneRead: Codable, Sendable, Hashable {
    /// Default pairs read.
    public var pairs: Int
    /// Calls beyond what the plan would read without pruning (the record vouched for those pairs,
    /// or the environment leaves them alone).
    public var extraCalls: Int

    public init(pairs: Int, extraCalls: Int) {
        self.pairs = pairs
        self.extraCalls = extraCalls
    }

    enum CodingKeys: String, CodingKey { case pairs, extraCalls = "extra_calls" }
}

/// Why a plan reads as a lost or moved state rather than a first publish.
public struct MissingState: Codable, Sendable, Hashable {
    /// The store that holds nothing.
    public var store: String
    /// Content the manifests derive that Apple already holds, of all they derive.
    public var contentAtApple: Int
    public var contentDerived: Int

    public init(store: String, contentAtApple: Int, contentDerived: Int) {
        self.store = store
        self.contentAtApple = contentAtApple
        self.contentDerived = contentDerived
    }

    /// One paragraph, the same in every rendering.
    public var explanation: String {
        "The state store \(store) holds nothing, but Apple already holds \(contentAtApple) of the \(contentDerived) messages and "
            + "images these manifests derive: the state was lost or moved (a fresh runner with the default file store, or a changed "
            + "stateStore), so this is not a first publish. Publishing now would start a new snapshot without the rules the old "
            + "state held at their previous version. Bring the state over with 'retention-sync state migrate --from OLD_LOCATION', "
            + "or, if this really is a first publish, confirm it with 'apply --first-publish'."
    }

    enum CodingKeys: String, CodingKey {
        case store, contentAtApple = "content_at_apple", contentDerived = "content_derived"
    }
}
