public import Basics
public import RetentionMessagingModels

/// `kind: Flow`: ordered realtime rules; the first that matches answers.
public struct FlowManifest: Sendable, Hashable {
    public var name: String
    /// Optional language fallbacks, e.g. `de-AT` → `de-DE`, used when no rule matches the exact locale.
    public var localeFallbacks: [String: String]
    /// In the order written.
    public var rules: [FlowRule]
    public var location: SourceLocation
    /// Where individual fields were written, so diagnostics point at the exact value; a missing
    /// entry falls back to `location`. Typed, so a misspelt field cannot point at the wrong line.
    public var fieldLocations: [Field: SourceLocation] = [:]

    public enum Field: Hashable, Sendable {
        case name
        /// A `localeFallbacks` key, and the locale it falls back to.
        case fallbackKey(String), fallbackTarget(String)
    }

    public init(name: String, localeFallbacks: [String: String], rules: [FlowRule], location: SourceLocation) {
        self.name = name
        self.localeFallbacks = localeFallbacks
        self.rules = rules
        self.location = location
    }
}

public struct FlowRule: Sendable, Hashable {
    /// Unique within the flow.
    public var name: String
    public var match: RuleMatch
    public var response: RuleResponse
    public var location: SourceLocation
    /// Where individual fields were written, so diagnostics point at the exact value; a missing
    /// entry falls back to `location`. Typed, so a misspelt field cannot point at the wrong line.
    public var fieldLocations: [Field: SourceLocation] = [:]

    public enum Field: Hashable, Sendable {
        case name, match, response
        case matchProduct(String), matchLocale(String), matchEnvironment(Environment)
        case window, windowFrom, windowUntil, split, splitGroup, splitPercent, splitControl
        /// The message of whichever response kind the rule has.
        case responseMessage
        case responseProductId, responseBillingPlanType, responseOfferIdentifier
    }

    public init(name: String, match: RuleMatch, response: RuleResponse, location: SourceLocation) {
        self.name = name
        self.match = match
        self.response = response
        self.location = location
    }
}

/// Every condition must hold; a nil condition always holds.
public struct RuleMatch: Sendable, Hashable {
    public var products: [String]?
    public var locales: [String]?
    public var environments: [Environment]?
    /// Inclusive start, UNIX milliseconds (written as an RFC 3339 timestamp).
    public var notBefore: Int64?
    /// Exclusive end, UNIX milliseconds (written as an RFC 3339 timestamp).
    public var notAfter: Int64?
    public var split: TrafficSplit?

    public init(products: [String]? = nil, locales: [String]? = nil, environments: [Environment]? = nil,
                notBefore: Int64? = nil, notAfter: Int64? = nil, split: TrafficSplit? = nil) {
        self.products = products
        self.locales = locales
        self.environments = environments
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.split = split
    }
}

/// A stable share of customers: customers are hashed by `originalTransactionId` with the group's
/// name as salt into 10,000 buckets; rules of the same group take consecutive bucket ranges in the
/// order written, so `percent: 50` twice in one group is an even A/B split, and changing one group
/// never reshuffles the customers of another.
public struct TrafficSplit: Sendable, Hashable {
    public var group: String
    /// 0 < percent ≤ 100, at most two decimals.
    public var percent: Double
    /// This rule is the group's control: every other arm of the group is compared with it in `results`.
    public var control: Bool

    public init(group: String, percent: Double, control: Bool = false) {
        self.group = group
        self.percent = percent
        self.control = control
    }
}

public enum RuleResponse: Sendable, Hashable {
    /// Show this text message.
    case message(name: String)
    /// Offer another product of the same subscription group; the message must have no image or bullets.
    case alternateProduct(message: String, productId: String, billingPlanType: BillingPlanType?)
    /// Offer a promotional offer; the message must have no image or bullets.
    case promotionalOffer(message: String, offerIdentifier: String)
    /// Answer nothing, so Apple shows the default message.
    case none

    /// The message this response uses, if any.
    public var messageName: String? {
        switch self {
        case .message(let name): name
        case .alternateProduct(let message, _, _): message
        case .promotionalOffer(let message, _): message
        case .none: nil
        }
    }
}
