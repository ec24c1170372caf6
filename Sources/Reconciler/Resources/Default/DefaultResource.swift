import Basics
import Foundation
import Manifests
import RetentionMessaging
import RetentionMessagingModels
public import StateStore

extension ResourceID {
    /// A (product, locale) pair's default message.
    public static let defaultMessage = ResourceID(rawValue: "default")
}

extension ActionKind {
    public static let setDefault = ActionKind(.set, .defaultMessage)
    public static let deleteDefault = ActionKind(.delete, .defaultMessage)
}

extension ActionID {
    public static func setDefault(_ pair: ProductLocale, to identifier: String) -> ActionID { ActionID(.setDefault, "\(pair):\(identifier)") }
    public static func deleteDefault(_ pair: ProductLocale) -> ActionID { ActionID(.deleteDefault, pair.description) }
}

/// What a default action changes.
public enum DefaultChange: ResourceChange {
    /// `name` is the assigned message's manifest name; `current` what is configured now (keeps serving
    /// while blocked), and `currentName` how the manifests or the state know it, for a reviewer to read
    /// what customers see before and after.
    case set(ProductLocale, to: String, name: String, current: String?, currentName: String? = nil)
    case delete(ProductLocale, current: String)

    public var kind: ActionKind {
        switch self {
        case .set: .setDefault
        case .delete: .deleteDefault
        }
    }

    public var pair: ProductLocale {
        switch self {
        case .set(let pair, _, _, _, _), .delete(let pair, _): pair
        }
    }

    public var title: String {
        switch self {
        case .set(let pair, let id, let name, let current, let currentName):
            "set default \(pair)" + (current.map { " from \(currentName ?? "\($0) (not in the manifests)")" } ?? "") + " → \(name) \(id)"
        case .delete(let pair, _): "delete default \(pair)"
        }
    }

    public var identifier: String? { nil }

    /// The record says an apply set this pair to the message, and someone changed or removed it since.
    public func drift(against document: StateDocument?) -> Drift? {
        guard case .set(let pair, let id, _, let current, _) = self, current != id,
              document?.lastAppliedDefault(productId: pair.productId, locale: pair.locale)?.messageIdentifier == id else { return nil }
        return Drift(what: "default \(pair.productId)/\(pair.locale)", found: current ?? "(no default)", correctedTo: id)
    }

    public var fields: ChangeFields {
        var fields = ChangeFields()
        fields.locale = pair.locale
        fields.productId = pair.productId
        switch self {
        case .set(_, let id, let name, let current, _):
            fields.name = name
            fields.messageIdentifier = id
            fields.currentMessageIdentifier = current
        case .delete(_, let current):
            fields.currentMessageIdentifier = current
        }
        return fields
    }

    public var source: ManifestSource? {
        guard case .set(let pair, _, _, _, _) = self else { return nil }
        return .defaultAssignment(pair)
    }
}

/// The default message of each declared (product, locale) pair: set what the manifests assign,
/// delete what they no longer do.
enum DefaultResource: RemoteResource {
    static let id = ResourceID.defaultMessage
    static let isContent = false
    static let verbs: [PlanVerb] = [.set, .delete]

    /// One GET per pair is what Apple offers; several in flight (the client caps how many and paces
    /// them) keep a plan of hundreds of pairs from waiting on each round trip in turn.
    static func read(_ api: any RetentionMessagingAPI, pairs: [ProductLocale], into state: inout RemoteState) async throws {
        state.defaults = try await withThrowingTaskGroup(of: (ProductLocale, String?).self) { group in
            for pair in pairs.sorted() {
                group.addTask {
                    (pair, try await api.getDefaultMessage(productId: pair.productId, locale: pair.locale)?.messageIdentifier.lowercased())
                }
            }
            var defaults: [ProductLocale: String] = [:]
            for try await (pair, identifier) in group {
                if let identifier { defaults[pair] = identifier }
            }
            return defaults
        }
    }

    static func plan(_ context: inout PlanContext) throws {
        let desired = context.desired, remote = context.remote
        let assignments = Dictionary(desired.defaults.map { (ProductLocale(productId: $0.productId, locale: $0.locale), $0) },
                                     uniquingKeysWith: { first, _ in first })
        let externals = desired.externalByIdentifier
        let known = KnownMessages(desired: desired, document: remote.state?.document)
        for pair in desired.declaredPairs {
            let current = remote.defaults[pair]
            if let wanted = assignments[pair] {
                guard current != wanted.messageIdentifier else { continue }
                let external = externals[wanted.messageIdentifier]
                let missing = remote.messages[wanted.messageIdentifier] == nil
                var action = PlanAction(
                    id: .setDefault(pair, to: wanted.messageIdentifier),
                    reason: ActionReason(current == nil ? .noDefault(pair, assigned: wanted.messageName)
                                                        : .otherDefault(pair, assigned: wanted.messageName)),
                    change: DefaultChange.set(pair, to: wanted.messageIdentifier, name: wanted.messageName, current: current,
                                              currentName: current.flatMap { knownName(of: $0, locale: pair.locale, in: known) }),
                    dependsOn: missing && external == nil ? [.uploadMessage(wanted.messageIdentifier)] : [])
                context.applyGate(context.gate.readiness(of: [ContentReference(kind: .message, identifier: wanted.messageIdentifier)]), to: &action,
                                  serving: current == nil ? .nothingYet : .currentDefault)
                if let external, missing {
                    // Nothing will upload it: waiting would be waiting forever.
                    action.state = .error
                    action.reason.wait = nil
                    action.error = .externalNotAtApple(.message, name: external.name, identifier: external.identifier, environment: context.environment)
                }
                context.actions.append(action)
            } else if let current {
                context.actions.append(PlanAction(id: .deleteDefault(pair), reason: ActionReason(.defaultNoLongerAssigned(pair)),
                                                  change: DefaultChange.delete(pair, current: current)))
            }
        }
    }

    /// How a reviewer knows the message a pair shows now: its manifest name (an external message is
    /// marked so, with the header it is assumed to show in the pair's locale when it declares one), or
    /// the name the state recorded for an earlier upload; nil when nothing knows it.
    static func knownName(of identifier: String, locale: String, in known: KnownMessages) -> String? {
        guard let message = known.message(identifier, locale: locale) else { return nil }
        switch message.origin {
        case .managed: return message.name
        case .external(let assumed?): return message.name + " (external; assumed header: \"\(assumed.header)\")"
        case .external(nil): return message.name + " (external, content unknown)"
        case .earlierUpload: return message.name + " (an earlier upload)"
        }
    }

    static func perform(_ change: DefaultChange, in planned: PlanResult, api: any RetentionMessagingAPI,
                        report: inout ApplyReport, recorder: inout StateRecorder?) async throws -> Refusal? {
        switch change {
        case .set(let pair, let identifier, _, _, _):
            try await api.configureDefaultMessage(productId: pair.productId, locale: pair.locale, messageIdentifier: identifier)
        case .delete(let pair, _):
            try await api.deleteDefaultMessage(productId: pair.productId, locale: pair.locale)
        }
        return nil
    }

    static func recordDone(_ change: DefaultChange, in planned: PlanResult, recorder: inout StateRecorder?, at time: UTCTime) {
        switch change {
        case .set(let pair, let identifier, _, _, _):
            recorder?.record { $0.recordDefault(productId: pair.productId, locale: pair.locale, messageIdentifier: identifier, at: time) }
        case .delete(let pair, _):
            recorder?.record { $0.recordDefault(productId: pair.productId, locale: pair.locale, messageIdentifier: nil, at: time) }
        }
    }
}
