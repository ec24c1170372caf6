import RetentionMessaging
public import RetentionMessagingModels
import Runtime

/// Stable across runs: derived from the kind and its target, e.g. `upload_message:<uuid>`. Built
/// only by the factories each resource declares beside itself, so every kind spells its id one way.
public struct ActionID: Sendable, Hashable, Comparable, Codable, CustomStringConvertible, ExpressibleByStringInterpolation {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { rawValue = value }

    init(_ kind: ActionKind, _ target: String) { rawValue = "\(kind.rawValue):\(target)" }

    public static func < (lhs: ActionID, rhs: ActionID) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { rawValue }

    public init(from decoder: any Decoder) throws { rawValue = try decoder.singleValueContainer().decode(String.self) }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// What an action does: a verb and the resource it acts on, spelt `verb_resource` in plans
/// (`upload_image`, `set_default`, `publish_snapshot`). Every kind comes from a registered
/// resource (`RemoteResources.all`), in the order apply performs them. `relist` is not an action
/// but the boundary where a sandbox apply learns the review states its uploads got.
public struct ActionKind: Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    public let verb: PlanVerb
    public let resource: ResourceID

    public init(_ verb: PlanVerb, _ resource: ResourceID) {
        self.verb = verb
        self.resource = resource
    }

    /// The spelling in plan and report JSON.
    public var rawValue: String { "\(verb.rawValue)_\(resource.rawValue)" }
    public var description: String { rawValue }

    /// A registered kind by its spelling, or nil.
    public init?(rawValue: String) {
        guard let kind = Self.allCases.first(where: { $0.rawValue == rawValue }) else { return nil }
        self = kind
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let kind = ActionKind(rawValue: text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "unknown action kind '\(text)'")
        }
        self = kind
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public enum Step: Sendable, Hashable {
        case perform(ActionKind)
        /// Sandbox: re-list and re-plan, so auto-approved uploads are used in the same run.
        case relist
    }

    /// Every registered kind, in apply order.
    public static var allCases: [ActionKind] { RemoteResources.actionKinds }

    /// Where a kind runs in an apply (its position in `applyOrder`).
    public var applyRank: Int { Self.allCases.firstIndex(of: self) ?? Self.allCases.count }

    /// Content uploads, the re-list, configuration, then content deletions, each in the
    /// resources' dependency order (deletions reversed): what apply loops over.
    public static var applyOrder: [Step] { RemoteResources.applyOrder }

    /// What an action of this kind does to the remote: the one place the summary, the views and
    /// the estimate learn which kinds upload, set or delete. Publishing counts as setting.
    public enum Effect: Sendable, Hashable { case upload, set, delete }

    public var effect: Effect {
        switch verb {
        case .upload: .upload
        case .set, .publish: .set
        case .delete: .delete
        }
    }
}

public enum ActionState: String, Codable, Sendable, Hashable {
    case ready, blocked, error
}

/// What an action changes, with everything apply needs to do it.
public enum Change: Sendable, Hashable {
    case uploadImage(DesiredImage)
    case uploadMessage(DesiredMessage)
    /// `name` is the assigned message's manifest name; `current` what is configured now (keeps serving while blocked).
    case setDefault(ProductLocale, to: String, name: String, current: String?)
    case deleteDefault(ProductLocale, current: String)
    case publishSnapshot(CompiledSnapshot, current: String?)
    case setRealtimeURL(String, current: String?)
    /// `name`: the message name the published snapshot gives it, if any.
    case deleteMessage(String, name: String?)
    case deleteImage(String, size: ImageSize?)

    public var kind: ActionKind {
        switch self {
        case .uploadImage: .uploadImage
        case .uploadMessage: .uploadMessage
        case .setDefault: .setDefault
        case .deleteDefault: .deleteDefault
        case .publishSnapshot: .publishSnapshot
        case .setRealtimeURL: .setRealtimeURL
        case .deleteMessage: .deleteMessage
        case .deleteImage: .deleteImage
        }
    }
}

/// Why an action is in the plan. The views word it.
public struct ActionReason: Sendable, Hashable {
    public enum Cause: Sendable, Hashable {
        case imageNotUploaded(name: String, environment: Environment)
        case messageNotUploaded(name: String, locale: String, version: String, environment: Environment)
        case noDefault(ProductLocale, assigned: String)
        case otherDefault(ProductLocale, assigned: String)
        case defaultNoLongerAssigned(ProductLocale)
        case noSnapshotPublished(waitingRules: Int)
        case rulesChanged(Int, waitingRules: Int)
        /// Nothing publishable changed, but rules wait for review.
        case rulesWaiting(Int)
        case noRealtimeURL
        case otherRealtimeURL
        case unusedMessage
        case unusedImage
    }

    /// Why a blocked action waits.
    public enum Wait: Sendable, Hashable {
        /// Only for this apply's uploads, which sandbox approves at once: the same apply does it.
        case sameApply
        /// For App Review; `serving` says what customers see meanwhile.
        case review(serving: Serving)
        /// For a passed sandbox performance test: Apple refused the production realtime URL until then.
        case performanceTest
    }

    public enum Serving: Sendable, Hashable {
        case nothingYet, currentDefault, publishedSnapshot
    }

    public var cause: Cause
    public var wait: Wait?

    public init(_ cause: Cause, wait: Wait? = nil) {
        self.cause = cause
        self.wait = wait
    }
}

/// Why an action cannot be done as planned. `description` says what is wrong; the views add
/// what to do, with the flags that do it.
public enum ActionError: Sendable, Hashable, CustomStringConvertible {
    /// Apple's cap would be exceeded: `existing` remote + `uploading`.
    case overCap(ReviewItem.Kind, existing: Int, uploading: Int, environment: Environment)
    /// The message's picture is over the image cap.
    case pictureOverCap(imageName: String)
    /// The action would use REJECTED content.
    case usesRejected([ReviewItem])
    /// The prune would delete more than `PlanOptions.pruneProtectionShare` of the remote content.
    case pruneProtection(deleting: Int, of: Int)

    public var description: String {
        switch self {
        case .overCap(let kind, let existing, let uploading, let environment):
            let cap = kind == .message ? RetentionLimits.messages : RetentionLimits.images
            return "over Apple's cap of \(cap) \(kind.rawValue)s: \(existing) in \(environment.rawValue) + \(uploading) to upload = \(existing + uploading)"
        case .pictureOverCap(let name):
            return "its picture '\(name)' cannot be uploaded: over Apple's cap of \(RetentionLimits.images) images"
        case .usesRejected(let items):
            return "uses REJECTED content: " + items.map(\.description).joined(separator: ", ")
        case .pruneProtection(let deleting, let total):
            return "prune protection: this would delete \(deleting) of \(total) remote messages and images (more than \(Int(PlanOptions.pruneProtectionShare * 100))%)"
        }
    }
}

/// One thing apply would do.
public struct PlanAction: Sendable, Hashable {
    public var id: ActionID
    public var state: ActionState
    public var reason: ActionReason
    public var change: Change
    /// For `blocked` and `error`: the content whose review state holds the action back.
    public var waitingFor: [ReviewItem]
    /// For `error`: what is wrong.
    public var error: ActionError?
    /// Actions that must succeed first.
    public var dependsOn: [ActionID]
    /// A message upload that replaces a recorded version: what changes in its text.
    public var textChanges: TextChanges?

    public init(id: ActionID, state: ActionState = .ready, reason: ActionReason, change: Change,
                waitingFor: [ReviewItem] = [], error: ActionError? = nil, dependsOn: [ActionID] = []) {
        self.id = id
        self.state = state
        self.reason = reason
        self.change = change
        self.waitingFor = waitingFor
        self.error = error
        self.dependsOn = dependsOn
    }

    public var kind: ActionKind { change.kind }

    /// The message or image identifier the action uploads or deletes.
    public var identifier: String? {
        switch change {
        case .uploadImage(let image): image.identifier
        case .uploadMessage(let message): message.identifier
        case .deleteMessage(let id, _), .deleteImage(let id, _): id
        case .setDefault, .deleteDefault, .publishSnapshot, .setRealtimeURL: nil
        }
    }

    /// `publish_snapshot`: what happens to each rule; empty for every other kind.
    public var rules: [RuleOutcome] {
        if case .publishSnapshot(let compiled, _) = change { return compiled.outcomes }
        return []
    }

    /// A short description of the target, as the views and the apply report name it.
    public var title: String {
        switch change {
        case .uploadImage(let image): "upload image \(image.name) (\(image.size.rawValue)) \(image.identifier)"
        case .uploadMessage(let message): "upload message \(message.name) (\(message.locale)) \(message.identifier)"
        case .setDefault(let pair, let id, let name, _): "set default \(pair) → \(name) \(id)"
        case .deleteDefault(let pair, _): "delete default \(pair)"
        case .publishSnapshot(let compiled, _): "publish snapshot \(Self.shortDigest(compiled.snapshot.digest))"
        case .setRealtimeURL(let url, _): "set realtime URL \(url)"
        case .deleteMessage(let id, let name): "delete message \(id)" + (name.map { " (\($0))" } ?? "")
        case .deleteImage(let id, _): "delete image \(id)"
        }
    }

    public static func shortDigest(_ digest: String) -> String {
        digest.hasPrefix("sha256:") ? "sha256:" + digest.dropFirst(7).prefix(12) : digest
    }
}
