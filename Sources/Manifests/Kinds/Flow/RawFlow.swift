import YAML

// A `Flow` document exactly as written.

struct RawFlow: Decodable {
    var apiVersion: String
    var kind: String
    var name: Located<String>
    var localeFallbacks: [String: Located<String>]?
    var rules: [Located<RawRule>]
    var guardrails: [Located<RawGuardrail>]?
    var segments: [Located<RawSegment>]?
}

/// `segments:` item: a breakdown a split group is judged by, declared before the experiment.
struct RawSegment: Decodable {
    var group: Located<String>
    var by: Located<String>
}

struct RawGuardrail: Decodable {
    var group: Located<String>
    var metric: Located<String>
    var maxDrop: Located<Double>
}

struct RawRule: Decodable {
    var name: Located<String>
    var match: Located<RawMatch>?
    var response: Located<RawResponse>
}

struct RawMatch: Decodable {
    var products: [Located<String>]?
    var locales: [Located<String>]?
    var environments: [Located<String>]?
    var window: Located<RawWindow>?
    var customer: Located<RawCustomer>?
    var split: Located<RawSplit>?
}

/// `match.customer`: conditions on what Apple signed about the customer.
struct RawCustomer: Decodable {
    var storefronts: [Located<String>]?
    var tenure: Located<RawTenure>?
    var offers: Located<RawOffers>?
    var billing: [Located<String>]?
    var priceIncrease: [Located<String>]?
    var ownership: [Located<String>]?
    /// `skip` (the default) or `match`.
    var unknown: Located<String>?
}

struct RawTenure: Decodable {
    var atLeast: Located<String>?
    var below: Located<String>?
}

struct RawOffers: Decodable {
    var redeemedWithin: Located<String>?
    var notRedeemedWithin: Located<String>?
    var types: [Located<String>]?
}

struct RawWindow: Decodable {
    var from: Located<String>?
    var until: Located<String>?
}

struct RawSplit: Decodable {
    var group: Located<String>
    var percent: Located<Double>
    var control: Located<Bool>?
}

/// `none`, or a mapping holding exactly one of `message`, `alternateProduct`, `promotionalOffer`, `advancedCommerce`.
enum RawResponse: Decodable {
    case none
    case kinds(RawResponseKinds)

    init(from decoder: any Decoder) throws {
        if let text = try? decoder.singleValueContainer().decode(String.self) {
            guard text == "none" else {
                throw DecodingError.dataCorrupted(.init(
                    codingPath: decoder.codingPath,
                    debugDescription: "expected 'none' or a mapping with one of message, alternateProduct, promotionalOffer, advancedCommerce; found '\(text)'"))
            }
            self = .none
        } else {
            self = .kinds(try RawResponseKinds(from: decoder))
        }
    }
}

extension RawResponse: YAMLPlaceholder {
    static var yamlPlaceholder: RawResponse { .none }
}

struct RawResponseKinds: Decodable {
    var message: Located<String>?
    var alternateProduct: Located<RawAlternateProduct>?
    var promotionalOffer: Located<RawPromotionalOffer>?
    var advancedCommerce: Located<RawAdvancedCommerce>?
}

struct RawAlternateProduct: Decodable {
    var message: Located<String>
    var productId: Located<String>
    var billingPlanType: Located<String>?
}

struct RawPromotionalOffer: Decodable {
    var message: Located<String>
    var offerIdentifier: Located<String>
}

/// The one SubscriptionModifyChangeItem an Advanced Commerce answer recommends, in the Advanced
/// Commerce API's terms (`sku` is its `SKU`, `currentSku` its `currentSKU`).
struct RawAdvancedCommerce: Decodable {
    var message: Located<String>
    var sku: Located<String>
    var currentSku: Located<String>
    var displayName: Located<String>
    var description: Located<String>
    var price: Located<Int64>
    var reason: Located<String>
    var effective: Located<String>
    var retainBillingCycle: Located<Bool>
    var offer: Located<RawAdvancedCommerceOffer>?
}

struct RawAdvancedCommerceOffer: Decodable {
    var period: Located<String>
    var periodCount: Located<Int>
    var price: Located<Int64>
    var reason: Located<String>
}
