public import RetentionMessaging
public import RetentionMessagingModels

// The plan as a value: what `plan` prints in three renderings and `--out` saves. Its JSON keys
// are snake_case and documented in the README; `format_version` follows semver.

public struct Plan: Codable, Sendable, Hashable {
    public static let currentFormatVersion = "1.0"

    public var formatVersion: String
    public var environment: Environment
    public var bundleId: String
    /// Whether deletions of unused content were considered (`--prune`).
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

    enum CodingKeys: String, CodingKey {
        case formatVersion = "format_version", environment, bundleId = "bundle_id", prune, converged, health
        case summary, actions, problems, inventory, estimate, apiCalls = "api_calls", fingerprints
    }

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

    public var hasErrors: Bool { !problems.isEmpty || actions.contains { $0.state == .error } }
    public var hasReadyActions: Bool { actions.contains { $0.state == .ready } }
    public func action(_ id: String) -> PlanAction? { actions.first { $0.id == id } }
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
    public var blocked: Int
    public var errors: Int

    enum CodingKeys: String, CodingKey {
        case toUpload = "to_upload", toSet = "to_set", toDelete = "to_delete", blocked, errors
    }

    public init(toUpload: Int, toSet: Int, toDelete: Int, blocked: Int, errors: Int) {
        self.toUpload = toUpload
        self.toSet = toSet
        self.toDelete = toDelete
        self.blocked = blocked
        self.errors = errors
    }
}

public enum ActionKind: String, Codable, Sendable, Hashable, CaseIterable {
    case uploadImage = "upload_image"
    case uploadMessage = "upload_message"
    case setDefault = "set_default"
    case deleteDefault = "delete_default"
    case publishSnapshot = "publish_snapshot"
    case setRealtimeURL = "set_realtime_url"
    case deleteMessage = "delete_message"
    case deleteImage = "delete_image"
}

public enum ActionState: String, Codable, Sendable, Hashable {
    case ready, blocked, error
}

/// One thing apply would do. Fields that do not apply to a kind are absent from the JSON.
public struct PlanAction: Codable, Sendable, Hashable {
    /// Stable across runs: derived from the kind and its target, e.g. `upload_message:<uuid>`.
    public var id: String
    public var kind: ActionKind
    public var state: ActionState
    /// Why the action is in the plan.
    public var reason: String
    /// For `blocked` and `error`: the content whose review state holds the action back.
    public var waitingFor: [ReviewItem]
    /// For `error`: what is wrong and what to do.
    public var error: String?
    /// The message or image identifier the action uploads or deletes.
    public var identifier: String?
    /// The manifest name (message purpose, image name).
    public var name: String?
    public var locale: String?
    public var imageSize: ImageSize?
    public var productId: String?
    /// `set_default`: the message to configure; `delete_default`: nil.
    public var messageIdentifier: String?
    /// `set_default` / `delete_default`: what is configured now (keeps serving while blocked).
    public var currentMessageIdentifier: String?
    public var url: String?
    public var currentURL: String?
    /// `publish_snapshot`: the digest of the snapshot to publish and of the one in the store.
    public var snapshotDigest: String?
    public var currentSnapshotDigest: String?
    /// `publish_snapshot`: what happens to each rule.
    public var rules: [RuleOutcome]
    /// Actions that must succeed first (ids).
    public var dependsOn: [String]

    enum CodingKeys: String, CodingKey {
        case id, kind, state, reason, waitingFor = "waiting_for", error, identifier, name, locale
        case imageSize = "image_size", productId = "product_id", messageIdentifier = "message_identifier"
        case currentMessageIdentifier = "current_message_identifier", url, currentURL = "current_url"
        case snapshotDigest = "snapshot_digest", currentSnapshotDigest = "current_snapshot_digest", rules
        case dependsOn = "depends_on"
    }

    public init(id: String, kind: ActionKind, state: ActionState, reason: String, waitingFor: [ReviewItem] = [],
                error: String? = nil, identifier: String? = nil, name: String? = nil, locale: String? = nil,
                imageSize: ImageSize? = nil, productId: String? = nil, messageIdentifier: String? = nil,
                currentMessageIdentifier: String? = nil, url: String? = nil, currentURL: String? = nil,
                snapshotDigest: String? = nil, currentSnapshotDigest: String? = nil, rules: [RuleOutcome] = [],
                dependsOn: [String] = []) {
        self.id = id
        self.kind = kind
        self.state = state
        self.reason = reason
        self.waitingFor = waitingFor
        self.error = error
        self.identifier = identifier
        self.name = name
        self.locale = locale
        self.imageSize = imageSize
        self.productId = productId
        self.messageIdentifier = messageIdentifier
        self.currentMessageIdentifier = currentMessageIdentifier
        self.url = url
        self.currentURL = currentURL
        self.snapshotDigest = snapshotDigest
        self.currentSnapshotDigest = currentSnapshotDigest
        self.rules = rules
        self.dependsOn = dependsOn
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        kind = try c.decode(ActionKind.self, forKey: .kind)
        state = try c.decode(ActionState.self, forKey: .state)
        reason = try c.decode(String.self, forKey: .reason)
        waitingFor = try c.decodeIfPresent([ReviewItem].self, forKey: .waitingFor) ?? []
        error = try c.decodeIfPresent(String.self, forKey: .error)
        identifier = try c.decodeIfPresent(String.self, forKey: .identifier)
        name = try c.decodeIfPresent(String.self, forKey: .name)
        locale = try c.decodeIfPresent(String.self, forKey: .locale)
        imageSize = try c.decodeIfPresent(ImageSize.self, forKey: .imageSize)
        productId = try c.decodeIfPresent(String.self, forKey: .productId)
        messageIdentifier = try c.decodeIfPresent(String.self, forKey: .messageIdentifier)
        currentMessageIdentifier = try c.decodeIfPresent(String.self, forKey: .currentMessageIdentifier)
        url = try c.decodeIfPresent(String.self, forKey: .url)
        currentURL = try c.decodeIfPresent(String.self, forKey: .currentURL)
        snapshotDigest = try c.decodeIfPresent(String.self, forKey: .snapshotDigest)
        currentSnapshotDigest = try c.decodeIfPresent(String.self, forKey: .currentSnapshotDigest)
        rules = try c.decodeIfPresent([RuleOutcome].self, forKey: .rules) ?? []
        dependsOn = try c.decodeIfPresent([String].self, forKey: .dependsOn) ?? []
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(kind, forKey: .kind)
        try c.encode(state, forKey: .state)
        try c.encode(reason, forKey: .reason)
        if !waitingFor.isEmpty { try c.encode(waitingFor, forKey: .waitingFor) }
        try c.encodeIfPresent(error, forKey: .error)
        try c.encodeIfPresent(identifier, forKey: .identifier)
        try c.encodeIfPresent(name, forKey: .name)
        try c.encodeIfPresent(locale, forKey: .locale)
        try c.encodeIfPresent(imageSize, forKey: .imageSize)
        try c.encodeIfPresent(productId, forKey: .productId)
        try c.encodeIfPresent(messageIdentifier, forKey: .messageIdentifier)
        try c.encodeIfPresent(currentMessageIdentifier, forKey: .currentMessageIdentifier)
        try c.encodeIfPresent(url, forKey: .url)
        try c.encodeIfPresent(currentURL, forKey: .currentURL)
        try c.encodeIfPresent(snapshotDigest, forKey: .snapshotDigest)
        try c.encodeIfPresent(currentSnapshotDigest, forKey: .currentSnapshotDigest)
        if !rules.isEmpty { try c.encode(rules, forKey: .rules) }
        if !dependsOn.isEmpty { try c.encode(dependsOn, forKey: .dependsOn) }
    }

    /// A short description of the target, as the renderings print it.
    public var title: String {
        switch kind {
        case .uploadImage: "upload image \(name ?? "?") (\(imageSize?.rawValue ?? "?")) \(identifier ?? "")"
        case .uploadMessage: "upload message \(name ?? "?") (\(locale ?? "?")) \(identifier ?? "")"
        case .setDefault: "set default \(productId ?? "?")/\(locale ?? "?") → \(name ?? "?") \(messageIdentifier ?? "")"
        case .deleteDefault: "delete default \(productId ?? "?")/\(locale ?? "?")"
        case .publishSnapshot: "publish snapshot \(snapshotDigest.map(Self.shortDigest) ?? "")"
        case .setRealtimeURL: "set realtime URL \(url ?? "")"
        case .deleteMessage: "delete message \(identifier ?? "")" + (name.map { " (\($0))" } ?? "")
        case .deleteImage: "delete image \(identifier ?? "")"
        }
    }

    static func shortDigest(_ digest: String) -> String {
        digest.hasPrefix("sha256:") ? "sha256:" + digest.dropFirst(7).prefix(12) : digest
    }
}

/// A message or image whose review state matters to an action.
public struct ReviewItem: Codable, Sendable, Hashable, Comparable, CustomStringConvertible {
    public enum Kind: String, Codable, Sendable, Hashable { case message, image }

    public var kind: Kind
    public var identifier: String
    public var name: String?
    public var locale: String?
    /// `PENDING`, `REJECTED`, or `NOT_UPLOADED` (uploaded by this apply first).
    public var state: String

    public init(kind: Kind, identifier: String, name: String?, locale: String?, state: String) {
        self.kind = kind
        self.identifier = identifier
        self.name = name
        self.locale = locale
        self.state = state
    }

    public static func < (lhs: ReviewItem, rhs: ReviewItem) -> Bool {
        (lhs.kind.rawValue, lhs.name ?? "", lhs.locale ?? "", lhs.identifier) < (rhs.kind.rawValue, rhs.name ?? "", rhs.locale ?? "", rhs.identifier)
    }

    public var description: String {
        let label = "\(kind.rawValue) \(name.map { "'\($0)'" } ?? identifier)" + (locale.map { " (\($0))" } ?? "")
        switch state {
        case "NOT_UPLOADED": return "\(label): not uploaded yet, then review"
        case "PENDING": return "\(label): PENDING review"
        default: return "\(label): \(state)"
        }
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

    enum CodingKeys: String, CodingKey {
        case id, outcome, version, publishedVersion = "published_version", waitingFor = "waiting_for"
    }

    public init(id: String, outcome: Outcome, version: String?, publishedVersion: String?, waitingFor: [ReviewItem] = []) {
        self.id = id
        self.outcome = outcome
        self.version = version
        self.publishedVersion = publishedVersion
        self.waitingFor = waitingFor
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        outcome = try c.decode(Outcome.self, forKey: .outcome)
        version = try c.decodeIfPresent(String.self, forKey: .version)
        publishedVersion = try c.decodeIfPresent(String.self, forKey: .publishedVersion)
        waitingFor = try c.decodeIfPresent([ReviewItem].self, forKey: .waitingFor) ?? []
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(outcome, forKey: .outcome)
        try c.encodeIfPresent(version, forKey: .version)
        try c.encodeIfPresent(publishedVersion, forKey: .publishedVersion)
        if !waitingFor.isEmpty { try c.encode(waitingFor, forKey: .waitingFor) }
    }
}

/// Content that needs a change in the manifests.
public struct PlanProblem: Codable, Sendable, Hashable {
    public enum Kind: String, Codable, Sendable, Hashable {
        case rejectedMessage = "rejected_message"
        case rejectedImage = "rejected_image"
    }

    public var kind: Kind
    public var identifier: String
    public var name: String
    public var locale: String?
    public var message: String

    public init(kind: Kind, identifier: String, name: String, locale: String?, message: String) {
        self.kind = kind
        self.identifier = identifier
        self.name = name
        self.locale = locale
        self.message = message
    }
}

/// Remote content the current manifests do not derive.
public struct InventoryItem: Codable, Sendable, Hashable {
    public enum Kind: String, Codable, Sendable, Hashable { case message, image }
    public enum Label: String, Codable, Sendable, Hashable {
        /// Nothing known about it: uploaded by hand or by other manifests.
        case unmanaged
        /// An earlier version of a message the manifests still have (named by the published snapshot).
        case olderVersion = "older_version"
    }

    public var kind: Kind
    public var identifier: String
    public var state: String
    public var label: Label
    /// For older versions: the message name the published snapshot gives it.
    public var name: String?
    /// Where it is in use: `default <product>/<locale>`, `rule <flow>/<rule>`.
    public var usedBy: [String]
    /// Whether `--prune` would delete it, and if not, why.
    public var prune: String

    enum CodingKeys: String, CodingKey {
        case kind, identifier, state, label, name, usedBy = "used_by", prune
    }

    public init(kind: Kind, identifier: String, state: String, label: Label, name: String?, usedBy: [String], prune: String) {
        self.kind = kind
        self.identifier = identifier
        self.state = state
        self.label = label
        self.name = name
        self.usedBy = usedBy
        self.prune = prune
    }
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
    public var messagesAfter: Int
    public var messagesCap: Int
    public var imagesAfter: Int
    public var imagesCap: Int

    enum CodingKeys: String, CodingKey {
        case configureDefaultRequests = "configure_default_requests", otherRequests = "other_requests"
        case configureDefaultRate = "configure_default_rate", otherRate = "other_rate"
        case minimumSeconds = "minimum_seconds", messagesAfter = "messages_after", messagesCap = "messages_cap"
        case imagesAfter = "images_after", imagesCap = "images_cap"
    }

    public init(configureDefaultRequests: Int, otherRequests: Int, configureDefaultRate: Double, otherRate: Double,
                minimumSeconds: Double, messagesAfter: Int, messagesCap: Int, imagesAfter: Int, imagesCap: Int) {
        self.configureDefaultRequests = configureDefaultRequests
        self.otherRequests = otherRequests
        self.configureDefaultRate = configureDefaultRate
        self.otherRate = otherRate
        self.minimumSeconds = minimumSeconds
        self.messagesAfter = messagesAfter
        self.messagesCap = messagesCap
        self.imagesAfter = imagesAfter
        self.imagesCap = imagesCap
    }

    public var totalRequests: Int { configureDefaultRequests + otherRequests }

    /// Apple's rates: production 1/s (10/s for configure default); sandbox a tenth of that.
    public static func rates(for environment: Environment) -> (configureDefault: Double, other: Double) {
        environment == .production ? (10, 1) : (1, 0.1)
    }

    /// The floor Apple's hourly budgets impose on `n` requests at `rate` per second.
    public static func floorSeconds(requests: Int, rate: Double) -> Double {
        max(0, (Double(requests) - 3600 * rate) / rate)
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
