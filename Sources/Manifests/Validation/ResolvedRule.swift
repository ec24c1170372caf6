public import Basics
public import RetentionMessagingModels

/// A flow rule as validation resolved it: where it stands, its final conditions, and the content
/// its response shows as a typed reference. Everything downstream of validation (the snapshot
/// compiler, `results`, the demo) reads rules from here, never from the raw flows.
public struct ResolvedRule: Sendable, Hashable {
    /// The content a rule's response shows. A kind a response can name is a case here, so every
    /// place that compiles a rule must say what it does with it.
    public enum Shows: Sendable, Hashable {
        case message(MessageManifest)
        case external(ExternalMessageManifest)
    }

    public var flow: String
    public var name: String
    public var match: RuleMatch
    public var response: RuleResponse
    /// What the response shows; nil for `response: none`.
    public var shows: Shows?
    public var location: SourceLocation

    /// `flow/rule`, as snapshots, decisions and results name it.
    public var id: String { "\(flow)/\(name)" }

    /// Whether the rule is published to `environment`. Only the environment condition decides this;
    /// every other condition is evaluated per customer by `serve`.
    public func isPublished(to environment: Environment) -> Bool {
        for condition in match.conditions {
            switch condition {
            case .environments(let environments):
                return environments.contains(environment)
            case .products, .locales, .window, .customer, .split:
                continue
            }
        }
        return true
    }

    /// The customers the rule can answer apart from the share its split gives it, as one comparable
    /// text: the arms of one split group with equal audiences split one population, so `results`
    /// may compare their shares. The environment is left out (each environment is read on its own).
    public var audience: String {
        var products = "", locales = "", notBefore = "", notAfter = "", customer = ""
        for condition in match.conditions {
            switch condition {
            case .products(let values): products = values.sorted().joined(separator: ",")
            case .locales(let values): locales = values.sorted().joined(separator: ",")
            case .window(let from, let until): (notBefore, notAfter) = (from.map(String.init) ?? "", until.map(String.init) ?? "")
            case .customer(let conditions): customer = conditions.summary
            case .environments, .split: continue
            }
        }
        // Without customer conditions the text is what it always was, so audiences recorded before them still compare.
        return [products, locales, notBefore, notAfter].joined(separator: "|") + (customer.isEmpty ? "" : "|" + customer)
    }

    /// The locales the rule can answer in: its own, or every locale of the products it covers.
    public func servedLocales(in app: AppManifest) -> [String] {
        if let locales = match.locales { return locales.sorted() }
        let products = match.products ?? app.products.map(\.id)
        return Set(products.flatMap { app.product($0)?.locales ?? [] }).sorted()
    }
}
