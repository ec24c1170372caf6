public import RetentionMessagingModels

/// What a customer simulation plays: how many subscribers, drawn from which products and locales,
/// asked from which realtime URL, told to which push URL, and how they answer (`model`). The same
/// `seed` draws the same customers and outcomes. Read from JSON by `POST /emulator/customers`.
public struct CustomerSimulationSettings: Sendable, Hashable, Codable {
    public var customers: Int
    public var seed: UInt64
    /// Defaults to the environment the admin route was called in (sandbox from Swift).
    public var environment: Environment
    /// `data.appAppleId` and the realtime payloads' `appAppleId`; the configuration's when nil.
    public var appAppleId: Int64?
    /// `data.bundleId`; the configuration's when nil.
    public var bundleId: String?
    /// Each customer subscribes to one of these.
    public var products: [SimulatedProduct]
    /// Each customer has one of these as `userLocale`.
    public var locales: [String]
    /// Where the signed realtime requests go: `https://`, or `http://` on loopback.
    public var realtimeURL: String
    /// Where notifications are POSTed as `{"signedPayload": …}`; nil keeps them in the history only.
    public var pushURL: String?
    /// A subscription period in seconds (30 days by default).
    public var periodSeconds: Double
    /// Realtime requests in flight at once.
    public var concurrency: Int
    /// Seconds a realtime request or a push may take.
    public var timeout: Double
    public var model: OutcomeModel
    /// Who the customers are, as Apple signs it in their notifications: storefronts, tenure, earlier
    /// offers, billing retry and Family Sharing; and each storefront's own outcome model, if any.
    public var histories: CustomerHistories
    /// What a customer pays for a promotional offer, by offer identifier, in milliunits of the
    /// product's currency (4990 is 4.99); an offer not named here costs half the product's price.
    public var offerPrices: [String: Int64] = [:]

    public init(customers: Int, seed: UInt64 = 1, environment: Environment = .sandbox, appAppleId: Int64? = nil, bundleId: String? = nil,
                products: [SimulatedProduct], locales: [String] = ["en-US"], realtimeURL: String, pushURL: String? = nil,
                periodSeconds: Double = 30 * 86_400, concurrency: Int = 8, timeout: Double = 5, model: OutcomeModel,
                histories: CustomerHistories = CustomerHistories()) {
        self.histories = histories
        self.customers = customers
        self.seed = seed
        self.environment = environment
        self.appAppleId = appAppleId
        self.bundleId = bundleId
        self.products = products
        self.locales = locales
        self.realtimeURL = realtimeURL
        self.pushURL = pushURL
        self.periodSeconds = periodSeconds
        self.concurrency = concurrency
        self.timeout = timeout
        self.model = model
    }

    /// The most customers one simulation plays.
    public static let maximumCustomers = 100_000

    /// Why these settings cannot run, or nil.
    public var problem: String? {
        if !(1...Self.maximumCustomers).contains(customers) { return "customers must be 1–\(Self.maximumCustomers), not \(customers)" }
        if products.isEmpty { return "products must name at least one product" }
        if locales.isEmpty { return "locales must name at least one locale" }
        if !(periodSeconds >= 60) { return "periodSeconds must be at least 60, not \(periodSeconds)" }
        if !(1...256).contains(concurrency) { return "concurrency must be 1–256, not \(concurrency)" }
        if !(timeout > 0 && timeout <= 120) { return "timeout must be more than 0 and at most 120 seconds, not \(timeout)" }
        if let problem = histories.problem { return problem }
        if let (offer, price) = offerPrices.sorted(by: { $0.key < $1.key }).first(where: { $0.value < 0 }) {
            return "offerPrices.\(offer) must be a price in milliunits, 0 or more, not \(price)"
        }
        return model.problem
    }

    private enum CodingKeys: String, CodingKey {
        case customers, seed, environment, appAppleId, bundleId, products, locales, realtimeURL, pushURL, periodSeconds, concurrency, timeout, model
        case histories, offerPrices
    }

    /// Only `customers`, `products`, `realtimeURL` and `model` are required; `environment` takes
    /// `sandbox`/`production` in either spelling (Apple's is `Sandbox`/`Production`).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        customers = try container.decode(Int.self, forKey: .customers)
        seed = try container.decodeIfPresent(UInt64.self, forKey: .seed) ?? 1
        let name = try container.decodeIfPresent(String.self, forKey: .environment) ?? Environment.sandbox.rawValue
        guard let environment = Environment(rawValue: name.lowercased()) else {
            throw DecodingError.dataCorruptedError(forKey: .environment, in: container, debugDescription: "environment is sandbox or production")
        }
        self.environment = environment
        appAppleId = try container.decodeIfPresent(Int64.self, forKey: .appAppleId)
        bundleId = try container.decodeIfPresent(String.self, forKey: .bundleId)
        products = try container.decode([SimulatedProduct].self, forKey: .products)
        locales = try container.decodeIfPresent([String].self, forKey: .locales) ?? ["en-US"]
        realtimeURL = try container.decode(String.self, forKey: .realtimeURL)
        pushURL = try container.decodeIfPresent(String.self, forKey: .pushURL)
        periodSeconds = try container.decodeIfPresent(Double.self, forKey: .periodSeconds) ?? 30 * 86_400
        concurrency = try container.decodeIfPresent(Int.self, forKey: .concurrency) ?? 8
        timeout = try container.decodeIfPresent(Double.self, forKey: .timeout) ?? 5
        model = try container.decode(OutcomeModel.self, forKey: .model)
        histories = try container.decodeIfPresent(CustomerHistories.self, forKey: .histories) ?? CustomerHistories()
        offerPrices = try container.decodeIfPresent([String: Int64].self, forKey: .offerPrices) ?? [:]
    }
}

/// What the simulated customers' signed transactions and renewal info say about them. Each customer
/// draws from these with a generator of their own, so the same seed plays the same customers as
/// before these existed, and a test knows every customer's truth per segment.
public struct CustomerHistories: Sendable, Hashable, Codable {
    /// Each customer's `storefront` is one of these (ISO 3166-1 alpha-3), equally likely.
    public var storefronts: [String]
    /// The first purchase lies up to this many days before the current period (a customer whose
    /// period starts with their purchase has none).
    public var maxTenureDays: Int
    /// The share whose current period was bought under a promotional offer (`offerType` 2).
    public var earlierOffer: Double
    /// The share in billing retry (`isInBillingRetryPeriod`).
    public var billingRetry: Double
    /// The share who have the subscription through Family Sharing.
    public var familyShared: Double
    /// Per storefront, the outcome model its customers follow instead of the simulation's.
    public var models: [String: OutcomeModel]

    public init(storefronts: [String] = ["USA"], maxTenureDays: Int = 365, earlierOffer: Double = 0, billingRetry: Double = 0,
                familyShared: Double = 0, models: [String: OutcomeModel] = [:]) {
        self.storefronts = storefronts
        self.maxTenureDays = maxTenureDays
        self.earlierOffer = earlierOffer
        self.billingRetry = billingRetry
        self.familyShared = familyShared
        self.models = models
    }

    public var problem: String? {
        if storefronts.isEmpty { return "histories.storefronts must name at least one storefront" }
        if let wrong = storefronts.first(where: { !Storefronts.isKnown($0) }) {
            return "histories.storefronts: '\(wrong)' is not an ISO 3166-1 alpha-3 code like USA or DEU"
        }
        if let wrong = models.keys.sorted().first(where: { !storefronts.contains($0) }) {
            return "histories.models names storefront \(wrong), which no customer has (histories.storefronts)"
        }
        if !(0...7300).contains(maxTenureDays) { return "histories.maxTenureDays must be 0–7300, not \(maxTenureDays)" }
        for (name, share) in [("earlierOffer", earlierOffer), ("billingRetry", billingRetry), ("familyShared", familyShared)]
            where !(0...1).contains(share) {
            return "histories.\(name) must be a share from 0 to 1, not \(share)"
        }
        for (storefront, model) in models.sorted(by: { $0.key < $1.key }) {
            if let problem = model.problem { return "histories.models.\(storefront): \(problem)" }
        }
        return nil
    }

    private enum CodingKeys: String, CodingKey { case storefronts, maxTenureDays, earlierOffer, billingRetry, familyShared, models }

    /// Every key is optional.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(storefronts: try container.decodeIfPresent([String].self, forKey: .storefronts) ?? ["USA"],
                  maxTenureDays: try container.decodeIfPresent(Int.self, forKey: .maxTenureDays) ?? 365,
                  earlierOffer: try container.decodeIfPresent(Double.self, forKey: .earlierOffer) ?? 0,
                  billingRetry: try container.decodeIfPresent(Double.self, forKey: .billingRetry) ?? 0,
                  familyShared: try container.decodeIfPresent(Double.self, forKey: .familyShared) ?? 0,
                  models: try container.decodeIfPresent([String: OutcomeModel].self, forKey: .models) ?? [:])
    }
}

/// A subscription product and its price: `price` in milliunits of `currency` (9990 is 9.99).
public struct SimulatedProduct: Sendable, Hashable, Codable {
    public var productId: String
    public var price: Int64
    public var currency: String
    /// True for an Advanced Commerce API product: only for those does Apple show an
    /// `advancedCommerceInfo` answer; for any other it ignores it (absent means false).
    public var advancedCommerce: Bool?

    public init(productId: String, price: Int64 = 9990, currency: String = "USD", advancedCommerce: Bool? = nil) {
        self.productId = productId
        self.price = price
        self.currency = currency
        self.advancedCommerce = advancedCommerce
    }

    private enum CodingKeys: String, CodingKey { case productId, price, currency, advancedCommerce }

    /// Either `{"productId": …, "price": 9990, "currency": "USD"}` or just the product id (9.99 USD).
    public init(from decoder: any Decoder) throws {
        if let productId = try? decoder.singleValueContainer().decode(String.self) {
            self.init(productId: productId)
            return
        }
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(productId: try container.decode(String.self, forKey: .productId),
                  price: try container.decodeIfPresent(Int64.self, forKey: .price) ?? 9990,
                  currency: try container.decodeIfPresent(String.self, forKey: .currency) ?? "USD",
                  advancedCommerce: try container.decodeIfPresent(Bool.self, forKey: .advancedCommerce))
    }
}

/// How customers answer what the realtime server showed them, per rule or per answer. Keys:
/// `rule:<flow>/<rule>` (the rule `serve` names in `X-Retention-Sync-Rule`), `message:<messageIdentifier>`,
/// `offer:<offerIdentifier>`, `alternateProduct:<productId>`, `none` (the server answered `{}`); a
/// rule's key comes first, then the answer's, then `default`.
/// In JSON: `{"default": {…}, "rule:cancel-flow/holdout": {…}, "message:…": {…}, …}`.
public struct OutcomeModel: Sendable, Hashable, Codable {
    public var `default`: OutcomeProbabilities
    public var answers: [String: OutcomeProbabilities]

    public init(default: OutcomeProbabilities, answers: [String: OutcomeProbabilities] = [:]) {
        self.default = `default`
        self.answers = answers
    }

    public func probabilities(for key: String) -> OutcomeProbabilities { answers[key] ?? self.default }

    /// The rule's own probabilities (`rule:<flow>/<rule>`), else the answer's, else `default`.
    public func probabilities(rule: String?, answer key: String) -> OutcomeProbabilities {
        rule.flatMap { answers["rule:" + $0] } ?? probabilities(for: key)
    }

    public var problem: String? {
        for (key, probabilities) in [("default", self.default)] + answers.sorted(by: { $0.key < $1.key }) {
            if let problem = probabilities.problem { return "model \(key): \(problem)" }
        }
        return nil
    }

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        var answers: [String: OutcomeProbabilities] = [:]
        var fallback: OutcomeProbabilities?
        for key in container.allKeys {
            let value = try container.decode(OutcomeProbabilities.self, forKey: key)
            if key.stringValue == "default" { fallback = value } else { answers[key.stringValue] = value }
        }
        guard let fallback else {
            throw DecodingError.keyNotFound(Key(stringValue: "default"), .init(codingPath: decoder.codingPath,
                                                                               debugDescription: "the model needs a \"default\""))
        }
        self.init(default: fallback, answers: answers)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(self.default, forKey: Key(stringValue: "default"))
        for (key, value) in answers { try container.encode(value, forKey: Key(stringValue: key)) }
    }
}

/// One answer's probabilities. `keep`: the customer does not turn auto-renew off within 24 hours.
/// `redeem`: a customer who kept takes the offer or switches to the alternate product (offer and
/// alternate-product answers only). `renew`: a customer who kept renews at the period's end (one
/// who did not keep never renews).
public struct OutcomeProbabilities: Sendable, Hashable, Codable {
    public var keep: Double
    public var redeem: Double
    public var renew: Double

    public init(keep: Double, redeem: Double = 0, renew: Double = 1) {
        self.keep = keep
        self.redeem = redeem
        self.renew = renew
    }

    private enum CodingKeys: String, CodingKey { case keep, redeem, renew }

    /// `keep` is required; `redeem` defaults to 0 and `renew` to 1.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(keep: try container.decode(Double.self, forKey: .keep),
                  redeem: try container.decodeIfPresent(Double.self, forKey: .redeem) ?? 0,
                  renew: try container.decodeIfPresent(Double.self, forKey: .renew) ?? 1)
    }

    var problem: String? {
        for (name, value) in [("keep", keep), ("redeem", redeem), ("renew", renew)] where !(0...1).contains(value) {
            return "\(name) must be between 0 and 1, not \(value)"
        }
        return nil
    }
}

/// What a simulation drew — the truth a measurement is compared with — and how many requests failed.
public struct CustomerSimulationSummary: Sendable, Hashable, Codable {
    public var customers: Int
    /// Per model key: customers shown that answer, and how many of them kept, redeemed and renewed.
    public var answers: [String: AnswerTruth]
    /// Realtime requests that failed (no answer, a status other than 200, or a body that is not a
    /// RealtimeResponseBody); those customers produce no further notifications.
    public var errors: Int
    /// The failures by Apple's `SendAttemptResult` names.
    public var errorsByResult: [String: Int]
    /// Notifications produced (delivered or still scheduled).
    public var notifications: Int
    /// Per storefront, then per model key: the same truth as `answers`, for the customers of that storefront.
    public var storefronts: [String: [String: AnswerTruth]] = [:]
    /// Per rule (`<flow>/<rule>`, as the realtime server named it): the same truth, so two rules with
    /// the same answer (a holdout and a catch-all that both answer none) are told apart.
    public var rules: [String: AnswerTruth] = [:]

    public init(customers: Int, answers: [String: AnswerTruth] = [:], errors: Int = 0, errorsByResult: [String: Int] = [:], notifications: Int = 0) {
        self.customers = customers
        self.answers = answers
        self.errors = errors
        self.errorsByResult = errorsByResult
        self.notifications = notifications
    }
}

public struct AnswerTruth: Sendable, Hashable, Codable {
    public var exposed: Int
    public var kept: Int
    public var redeemed: Int
    public var renewed: Int

    public init(exposed: Int = 0, kept: Int = 0, redeemed: Int = 0, renewed: Int = 0) {
        self.exposed = exposed
        self.kept = kept
        self.redeemed = redeemed
        self.renewed = renewed
    }
}
