import Basics
import RetentionMessaging
public import RetentionMessagingModels
import Runtime
public import StateStore

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

/// What an action of one resource changes, with everything apply needs to do it. Each resource
/// declares its own change type beside itself (`MessageChange`, `DefaultChange`, …), so its
/// `perform` handles exactly its own changes; the planner, the plan and the views see them through
/// `AnyChange`.
public protocol ResourceChange: Sendable, Hashable {
    var kind: ActionKind { get }
    /// The content identifier the action uploads or deletes; nil for configuration.
    var identifier: String? { get }
    /// A short description of the target, as the views and the apply report name it.
    var title: String { get }
    /// What plan JSON shows of it, besides the action's id, kind, state and reason.
    var fields: ChangeFields { get }
    /// The manifest an action comes from, so annotations can point at it.
    var source: ManifestSource? { get }
    /// When done: the drift it set back — what the state record says an earlier apply set, which
    /// someone changed since. Nil for changes that never correct drift (content is immutable).
    func drift(against document: StateDocument?) -> Drift?
}

/// Drift an apply set back: `what` was found as `found` and set back to `correctedTo`.
public struct Drift: Sendable, Hashable {
    public var what: String
    public var found: String
    public var correctedTo: String

    public init(what: String, found: String, correctedTo: String) {
        self.what = what
        self.found = found
        self.correctedTo = correctedTo
    }
}

/// The fields of one change in plan JSON; what does not apply to its kind stays nil (absent).
public struct ChangeFields: Sendable, Hashable {
    public var identifier: String?
    public var name: String?
    public var locale: String?
    public var imageSize: ImageSize?
    public var productId: String?
    public var messageIdentifier: String?
    public var currentMessageIdentifier: String?
    public var url: String?
    public var currentURL: String?
    public var snapshotDigest: String?
    public var currentSnapshotDigest: String?
    public var rules: [RuleOutcome]?
    /// Live split groups whose customers the publish moves between arms.
    public var splitGroups: [SplitGroupChange]?

    public init() {}
}

/// The manifest place an action comes from. The GitHub view resolves each case against the loaded
/// manifests, with an exhaustive switch: a new source cannot be forgotten there.
public enum ManifestSource: Sendable, Hashable {
    case message(name: String, locale: String)
    case image(names: [String])
    case defaultAssignment(ProductLocale)
    case app
}

/// Any resource's change: what a `PlanAction` carries. `as(_:)` gives the resource its own type back.
public struct AnyChange: Sendable, Hashable {
    public let base: any ResourceChange

    public init(_ base: some ResourceChange) { self.base = base }

    public func `as`<Change: ResourceChange>(_ type: Change.Type) -> Change? { base as? Change }

    public var kind: ActionKind { base.kind }
    public var identifier: String? { base.identifier }
    public var title: String { base.title }
    public var fields: ChangeFields { base.fields }
    public var source: ManifestSource? { base.source }
    public func drift(against document: StateDocument?) -> Drift? { base.drift(against: document) }

    public static func == (lhs: AnyChange, rhs: AnyChange) -> Bool { AnyHashable(lhs.base) == AnyHashable(rhs.base) }
    public func hash(into hasher: inout Hasher) { AnyHashable(base).hash(into: &hasher) }
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
        /// An external image named with `--prune-id`; messages of unknown content (`unknownMessages`)
        /// may still show it, and Apple refuses to delete an image in use.
        case namedImage(unknownMessages: Int)
    }

    /// Why a blocked action waits.
    public enum Wait: Sendable, Hashable {
        /// Only for this apply's uploads, which sandbox approves at once: the same apply does it.
        case sameApply
        /// For App Review; `serving` says what customers see meanwhile.
        case review(serving: Serving)
        /// For a passed sandbox performance test: Apple refused the production realtime URL until then.
        case performanceTest
        /// For a new version of content App Review rejected after the main branch used it (a
        /// remote condition: see `Plan.attention`); `serving` says what customers see meanwhile.
        case newVersion(serving: Serving)
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
    case overCap(ContentKind, existing: Int, uploading: Int, environment: Environment)
    /// The message's picture is over the image cap.
    case pictureOverCap(imageName: String)
    /// The action would use REJECTED content.
    case usesRejected([ReviewItem])
    /// The prune would delete more than `PlanOptions.pruneProtectionShare` of the remote content.
    case pruneProtection(deleting: Int, of: Int)
    /// The plan would delete more than `PlanOptions.pruneProtectionShare` of the defaults Apple
    /// holds for the declared pairs; `adopted`: how many of them show content the state records as adopted.
    case defaultsProtection(deleting: Int, of: Int, adopted: AdoptedDefaults?)
    /// External content (declared by identifier, never uploaded) that Apple does not hold.
    case externalNotAtApple(ContentKind, name: String, identifier: String, environment: Environment)
    /// A message shows an external image as `required`, but Apple's image list holds it as `listed`.
    case externalImageSize(name: String, identifier: String, listed: ImageSize, required: ImageSize, environment: Environment)

    public var description: String {
        switch self {
        case .externalNotAtApple(let kind, let name, let identifier, let environment):
            return "external \(kind.rawValue) '\(name)' \(identifier) is not in Apple's \(environment.rawValue) \(kind.rawValue) list, and retention-sync never uploads external content"
        case .externalImageSize(let name, let identifier, let listed, let required, let environment):
            let use = required == .fullSize ? "its image" : "a bullet point icon"
            return "it shows external image '\(name)' \(identifier) as \(use), which must be \(required.rawValue), but Apple's \(environment.rawValue) image list holds a \(listed.rawValue) image there"
        case .overCap(let kind, let existing, let uploading, let environment):
            return "over Apple's cap of \(kind.cap) \(kind.rawValue)s: \(existing) in \(environment.rawValue) + \(uploading) to upload = \(existing + uploading)"
        case .pictureOverCap(let name):
            return "its picture '\(name)' cannot be uploaded: over Apple's cap of \(RetentionLimits.images) images"
        case .usesRejected(let items):
            return "uses REJECTED content: " + items.map(\.description).joined(separator: ", ")
        case .pruneProtection(let deleting, let total):
            return "prune protection: this would delete \(deleting) of \(total) remote messages and images (more than \(Int(PlanOptions.pruneProtectionShare * 100))%)"
        case .defaultsProtection(let deleting, let total, let adopted):
            var text = "delete protection: this would delete \(deleting) of the \(total) defaults Apple holds for the declared pairs "
                + "(more than \(Int(PlanOptions.pruneProtectionShare * 100))%)"
            if let adopted {
                let first = adopted.firstAdoptedAt.formatted(.date), last = adopted.lastAdoptedAt.formatted(.date)
                text += "; \(adopted.count) of these \(adopted.count == 1 ? "was" : "were") adopted by import "
                    + (first == last ? "on \(first)" : "between \(first) and \(last)")
            }
            return text
        }
    }
}

/// One thing apply would do.
public struct PlanAction: Sendable, Hashable {
    public var id: ActionID
    public var state: ActionState
    public var reason: ActionReason
    public var change: AnyChange
    /// For `blocked` and `error`: the content whose review state holds the action back.
    public var waitingFor: [ReviewItem]
    /// For `error`: what is wrong.
    public var error: ActionError?
    /// Actions that must succeed first.
    public var dependsOn: [ActionID]
    /// A message upload that replaces a recorded version: what changes in its text.
    public var textChanges: TextChanges?

    public init(id: ActionID, state: ActionState = .ready, reason: ActionReason, change: some ResourceChange,
                waitingFor: [ReviewItem] = [], error: ActionError? = nil, dependsOn: [ActionID] = []) {
        self.id = id
        self.state = state
        self.reason = reason
        self.change = AnyChange(change)
        self.waitingFor = waitingFor
        self.error = error
        self.dependsOn = dependsOn
    }

    public var kind: ActionKind { change.kind }

    /// The message or image identifier the action uploads or deletes.
    public var identifier: String? { change.identifier }

    /// `publish_snapshot`: what happens to each rule; empty for every other kind.
    public var rules: [RuleOutcome] { change.as(SnapshotChange.self)?.compiled.outcomes ?? [] }

    /// A short description of the target, as the views and the apply report name it.
    public var title: String { change.title }

    public static func shortDigest(_ digest: String) -> String {
        digest.hasPrefix("sha256:") ? "sha256:" + digest.dropFirst(7).prefix(12) : digest
    }
}
