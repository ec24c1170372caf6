import Foundation
import RetentionMessaging
import RetentionMessagingModels
import StateStore

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

/// The default message of each declared (product, locale) pair: set what the manifests assign,
/// delete what they no longer do.
enum DefaultResource: RemoteResource {
    static let id = ResourceID.defaultMessage
    static let isContent = false
    static let verbs: [PlanVerb] = [.set, .delete]

    static func plan(_ context: inout PlanContext) throws {
        let desired = context.desired, remote = context.remote
        let assignments = Dictionary(desired.defaults.map { (ProductLocale(productId: $0.productId, locale: $0.locale), $0) },
                                     uniquingKeysWith: { first, _ in first })
        for pair in desired.declaredPairs {
            let current = remote.defaults[pair]
            if let wanted = assignments[pair] {
                guard current != wanted.messageIdentifier else { continue }
                var action = PlanAction(
                    id: .setDefault(pair, to: wanted.messageIdentifier),
                    reason: ActionReason(current == nil ? .noDefault(pair, assigned: wanted.messageName)
                                                        : .otherDefault(pair, assigned: wanted.messageName)),
                    change: .setDefault(pair, to: wanted.messageIdentifier, name: wanted.messageName, current: current),
                    dependsOn: remote.messages[wanted.messageIdentifier] == nil ? [.uploadMessage(wanted.messageIdentifier)] : [])
                Planner.applyGate(context.gate.readiness(ofMessages: [wanted.messageIdentifier]), to: &action,
                                  serving: current == nil ? .nothingYet : .currentDefault, environment: context.environment)
                context.actions.append(action)
            } else if let current {
                context.actions.append(PlanAction(id: .deleteDefault(pair), reason: ActionReason(.defaultNoLongerAssigned(pair)),
                                                  change: .deleteDefault(pair, current: current)))
            }
        }
    }

    static func perform(_ action: PlanAction, in planned: PlanResult, api: any RetentionMessagingAPI,
                        report: inout ApplyReport, recorder: inout StateRecorder?) async throws -> Refusal? {
        switch action.change {
        case .setDefault(let pair, let identifier, _, _):
            try await api.configureDefaultMessage(productId: pair.productId, locale: pair.locale, messageIdentifier: identifier)
        case .deleteDefault(let pair, _):
            try await api.deleteDefaultMessage(productId: pair.productId, locale: pair.locale)
        default:
            return Refusal(.error, "not a default action")
        }
        return nil
    }

    static func recordDone(_ action: PlanAction, in planned: PlanResult, recorder: inout StateRecorder?, at time: Date) {
        switch action.change {
        case .setDefault(let pair, let identifier, _, _):
            recorder?.record { $0.recordDefault(productId: pair.productId, locale: pair.locale, messageIdentifier: identifier, at: time) }
        case .deleteDefault(let pair, _):
            recorder?.record { $0.recordDefault(productId: pair.productId, locale: pair.locale, messageIdentifier: nil, at: time) }
        default:
            break
        }
    }
}
