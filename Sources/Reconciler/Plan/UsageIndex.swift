import RetentionMessaging
import RetentionMessagingModels
import Runtime

/// Where remote content is in use: the defaults Apple holds and the rules of the published
/// snapshot. Built once per plan; the planner's inventory and the status report both read it.
public struct UsageIndex: Sendable, Hashable {
    /// Message identifier → its uses: `default <product>/<locale>` or a published rule and its locale.
    public var uses: [String: [Use]]
    /// Message identifier → the message name and locale the published snapshot gives it.
    public var publishedNames: [String: String]

    public enum Use: Sendable, Hashable, Comparable, CustomStringConvertible {
        case defaultMessage(ProductLocale)
        case publishedRule(String, locale: String)
        case ruleToBePublished(String)
        /// An image a message the manifests derive shows (`name (locale)`).
        case shownByMessage(String)

        public var description: String {
            switch self {
            case .shownByMessage(let label): "message \(label)"
            case .defaultMessage(let pair): "default \(pair)"
            case .publishedRule(let id, let locale): "rule \(id) (\(locale), published)"
            case .ruleToBePublished(let id): "rule \(id) (to be published)"
            }
        }

        public static func < (lhs: Use, rhs: Use) -> Bool { lhs.description < rhs.description }
    }

    init(remote: RemoteState) {
        var uses: [String: Set<Use>] = [:]
        var names: [String: String] = [:]
        for (pair, id) in remote.defaults { uses[id, default: []].insert(.defaultMessage(pair)) }
        for rule in remote.publishedSnapshot?.rules ?? [] {
            for (locale, id) in rule.response.messageIdentifiers ?? [:] {
                uses[id, default: []].insert(.publishedRule(rule.id, locale: locale))
                if let name = rule.response.message { names[id] = "\(name) (\(locale))" }
            }
        }
        self.uses = uses.mapValues { $0.sorted() }
        publishedNames = names
    }

    /// Adds the rules a compiled snapshot would publish for messages the manifests do not derive.
    mutating func add(_ compiled: CompiledSnapshot?, derived: Set<String>) {
        for rule in compiled?.snapshot.rules ?? [] {
            for (_, id) in rule.response.messageIdentifiers ?? [:] where !derived.contains(id) {
                let use = Use.ruleToBePublished(rule.id)
                if !(uses[id] ?? []).contains(use) { uses[id] = ((uses[id] ?? []) + [use]).sorted() }
            }
        }
    }

    public func isInUse(_ identifier: String) -> Bool { !(uses[identifier] ?? []).isEmpty }
}
