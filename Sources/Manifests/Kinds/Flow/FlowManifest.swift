public import Basics
public import RetentionMessagingModels

/// `kind: Flow`: ordered realtime rules; the first that matches answers.
public struct FlowManifest: Sendable, Hashable {
    public var name: String
    /// Optional language fallbacks, e.g. `de-AT` → `de-DE`, used when no rule matches the exact locale.
    public var localeFallbacks: [String: String]
    /// In the order written.
    public var rules: [FlowRule]
    /// Limits on how much worse than its group's control an arm may distinguishably do, in the order written.
    public var guardrails: [FlowGuardrail] = []
    /// The segments each split group is judged by, declared before its experiment, in the order written.
    public var segments: [FlowSegment] = []
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

/// A split group's guardrail: an arm whose `metric` is distinguishably lower than the control's by more
/// than `maxDrop` (points for rates, currency units per customer for money) is to be stopped.
public struct FlowGuardrail: Sendable, Hashable {
    public enum Metric: String, Sendable, Hashable, CaseIterable {
        case renewed, kept24h, paid
    }

    public var group: String
    public var metric: Metric
    public var maxDrop: Double
    public var location: SourceLocation
    public var groupLocation: SourceLocation
    public var maxDropLocation: SourceLocation

    public init(group: String, metric: Metric, maxDrop: Double, location: SourceLocation, groupLocation: SourceLocation,
                maxDropLocation: SourceLocation) {
        self.group = group
        self.metric = metric
        self.maxDrop = maxDrop
        self.location = location
        self.groupLocation = groupLocation
        self.maxDropLocation = maxDropLocation
    }
}

/// A confirmatory segment: `results --by <by>` judges the split group's arms within each value of
/// this breakdown as confirmatory (Holm over the declared comparisons alone). Compiled into the
/// snapshot and recorded in the group's layout, so a period's decisions carry what was declared.
public struct FlowSegment: Sendable, Hashable {
    /// The breakdowns a segment may be declared by: the customer facts serve records and the
    /// requested locale and product (a message is an answer, not a segment of customers).
    public static let breakdowns = ["storefront", "tenure", "offers", "billing", "locale", "product"]

    public var group: String
    public var by: String
    public var location: SourceLocation
    public var groupLocation: SourceLocation
    public var byLocation: SourceLocation

    public init(group: String, by: String, location: SourceLocation, groupLocation: SourceLocation, byLocation: SourceLocation) {
        self.group = group
        self.by = by
        self.location = location
        self.groupLocation = groupLocation
        self.byLocation = byLocation
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
        /// `match.customer`, one of its attributes by name (`storefronts`, `tenure.atLeast`, …), and one storefront.
        case customer, customerAttribute(String), customerStorefront(String)
        /// The message of whichever response kind the rule has.
        case responseMessage
        case responseProductId, responseBillingPlanType, responseOfferIdentifier
        /// `response.advancedCommerce`, and one of its attributes by name (`sku`, `offer.period`, …).
        case responseAdvancedCommerce, advancedCommerceAttribute(String)
    }

    public init(name: String, match: RuleMatch, response: RuleResponse, location: SourceLocation) {
        self.name = name
        self.match = match
        self.response = response
        self.location = location
    }
}

/// One condition of a rule's `match:`; a customer matches a rule when every condition holds.
///
/// Every place that must know what a condition means (the snapshot compiler, the plan's wording of a
/// change, the audience `results` compares arms within, the overlap of a split group's arms) switches
/// over this without a `default:`, so a new condition does not compile until each of them says what
/// it does with it; `RuleConditionTests` then checks that it narrows what `serve` answers.
public enum MatchCondition: Sendable, Hashable {
    /// The customer's product is one of these.
    case products([String])
    /// The customer's locale (after fallbacks) is one of these.
    case locales([String])
    /// The rule is published only to these environments.
    case environments([Environment])
    /// The request's signed date is inside the window: inclusive start, exclusive end, UNIX milliseconds
    /// (written as RFC 3339 timestamps); either end may be open.
    case window(notBefore: Int64?, notAfter: Int64?)
    /// What Apple signed about the customer meets these conditions (`match.customer`).
    case customer(CustomerConditions)
    /// The customer falls in this rule's share of its traffic-split group.
    case split(TrafficSplit)

    /// The conditions' kinds, in the order a match keeps them.
    public enum Kind: Int, Sendable, Hashable, CaseIterable, Comparable {
        case products, locales, environments, window, customer, split

        public static func < (lhs: Kind, rhs: Kind) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    public var kind: Kind {
        switch self {
        case .products: .products
        case .locales: .locales
        case .environments: .environments
        case .window: .window
        case .customer: .customer
        case .split: .split
        }
    }
}

/// A rule's conditions, at most one of each kind, kept in `MatchCondition.Kind` order; no condition
/// matches every customer.
///
/// The properties below read one kind each, for the places that ask what a rule covers (which pairs
/// it serves, which group it belongs to); a place that decides *whether a customer matches* switches
/// over `conditions` instead, so that it cannot miss one.
public struct RuleMatch: Sendable, Hashable {
    public private(set) var conditions: [MatchCondition]

    public init(_ conditions: [MatchCondition]) {
        self.conditions = []
        for condition in conditions { set(condition.kind, to: condition) }
    }

    public init(products: [String]? = nil, locales: [String]? = nil, environments: [Environment]? = nil,
                notBefore: Int64? = nil, notAfter: Int64? = nil, split: TrafficSplit? = nil) {
        var conditions: [MatchCondition] = []
        if let products { conditions.append(.products(products)) }
        if let locales { conditions.append(.locales(locales)) }
        if let environments { conditions.append(.environments(environments)) }
        if notBefore != nil || notAfter != nil { conditions.append(.window(notBefore: notBefore, notAfter: notAfter)) }
        if let split { conditions.append(.split(split)) }
        self.init(conditions)
    }

    /// The condition of this kind, if the rule has one.
    public func condition(_ kind: MatchCondition.Kind) -> MatchCondition? {
        conditions.first { $0.kind == kind }
    }

    /// Replaces (or, with nil, removes) the condition of this kind.
    public mutating func set(_ kind: MatchCondition.Kind, to condition: MatchCondition?) {
        conditions.removeAll { $0.kind == kind }
        guard let condition else { return }
        precondition(condition.kind == kind, "a \(condition.kind) condition set as \(kind)")
        let index = conditions.firstIndex { $0.kind > kind } ?? conditions.endIndex
        conditions.insert(condition, at: index)
    }

    public var products: [String]? {
        get { if case .products(let value)? = condition(.products) { value } else { nil } }
        set { set(.products, to: newValue.map { .products($0) }) }
    }

    public var locales: [String]? {
        get { if case .locales(let value)? = condition(.locales) { value } else { nil } }
        set { set(.locales, to: newValue.map { .locales($0) }) }
    }

    public var environments: [Environment]? {
        get { if case .environments(let value)? = condition(.environments) { value } else { nil } }
        set { set(.environments, to: newValue.map { .environments($0) }) }
    }

    /// Inclusive start, UNIX milliseconds.
    public var notBefore: Int64? {
        get { if case .window(let notBefore, _)? = condition(.window) { notBefore } else { nil } }
        set { setWindow(notBefore: newValue, notAfter: notAfter) }
    }

    /// Exclusive end, UNIX milliseconds.
    public var notAfter: Int64? {
        get { if case .window(_, let notAfter)? = condition(.window) { notAfter } else { nil } }
        set { setWindow(notBefore: notBefore, notAfter: newValue) }
    }

    public var customer: CustomerConditions? {
        get { if case .customer(let value)? = condition(.customer) { value } else { nil } }
        set { set(.customer, to: newValue.map { .customer($0) }) }
    }

    public var split: TrafficSplit? {
        get { if case .split(let value)? = condition(.split) { value } else { nil } }
        set { set(.split, to: newValue.map { .split($0) }) }
    }

    private mutating func setWindow(notBefore: Int64?, notAfter: Int64?) {
        set(.window, to: notBefore == nil && notAfter == nil ? nil : .window(notBefore: notBefore, notAfter: notAfter))
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
    /// Recommend an Advanced Commerce API change (an offer or a switch of plan), for products the App
    /// marks `advancedCommerce`; the message must have no image or bullets.
    case advancedCommerce(message: String, change: AdvancedCommerceChange)
    /// Answer nothing, so Apple shows the default message.
    case none

    /// The message this response uses, if any.
    public var messageName: String? {
        switch self {
        case .message(let name): name
        case .alternateProduct(let message, _, _): message
        case .promotionalOffer(let message, _): message
        case .advancedCommerce(let message, _): message
        case .none: nil
        }
    }
}
