/// What the developer's realtime endpoint answers: exactly one of the members is set.
public struct RealtimeResponseBody: Codable, Sendable, Hashable {
    public var message: RealtimeMessage?
    public var alternateProduct: AlternateProduct?
    public var promotionalOffer: PromotionalOffer?
    /// Advanced Commerce API subscriptions only; Apple ignores it for any other subscription.
    public var advancedCommerceInfo: AdvancedCommerceInfo?

    public init(message: RealtimeMessage? = nil, alternateProduct: AlternateProduct? = nil,
                promotionalOffer: PromotionalOffer? = nil, advancedCommerceInfo: AdvancedCommerceInfo? = nil) {
        self.message = message
        self.alternateProduct = alternateProduct
        self.promotionalOffer = promotionalOffer
        self.advancedCommerceInfo = advancedCommerceInfo
    }
}

extension RealtimeResponseBody {
    /// Exactly the bytes `CanonicalJSON.encode(self)` gives (sorted keys, absent members omitted,
    /// JSONEncoder's escaping), written directly because every realtime answer is encoded.
    public var canonicalJSON: [UInt8] {
        var writer = CanonicalJSONWriter()
        writer.object { object in
            if let advancedCommerceInfo {
                object.member("advancedCommerceInfo") { inner in
                    inner.object { fields in
                        fields.member("advancedCommerceData", string: advancedCommerceInfo.advancedCommerceData)
                        fields.member("messageIdentifier", string: advancedCommerceInfo.messageIdentifier)
                    }
                }
            }
            if let alternateProduct {
                object.member("alternateProduct") { inner in
                    inner.object { fields in
                        if let plan = alternateProduct.billingPlanType { fields.member("billingPlanType", string: plan.rawValue) }
                        fields.member("messageIdentifier", string: alternateProduct.messageIdentifier)
                        fields.member("productId", string: alternateProduct.productId)
                    }
                }
            }
            if let message {
                object.member("message") { inner in
                    inner.object { $0.member("messageIdentifier", string: message.messageIdentifier) }
                }
            }
            if let promotionalOffer {
                object.member("promotionalOffer") { inner in
                    inner.object { fields in
                        fields.member("messageIdentifier", string: promotionalOffer.messageIdentifier)
                        fields.member("promotionalOfferSignatureV2", string: promotionalOffer.promotionalOfferSignatureV2)
                    }
                }
            }
        }
        return writer.bytes
    }
}

extension RealtimeResponseBody {
    /// The response header in which `serve` names the rule that answered (`<flow>/<rule>`), beside
    /// the body, when the request asked for it with `askRuleHeader`. The emulator's customer
    /// simulation asks, so that a model can give each rule a truth of its own (`rule:<flow>/<rule>`);
    /// Apple never asks, so Apple is never told a rule's name.
    public static let ruleHeader = "X-Retention-Sync-Rule"

    /// The request header that asks `serve` to name the rule (any value).
    public static let askRuleHeader = "X-Retention-Sync-Ask-Rule"

    /// The header's value for a rule id, or nil when the id could not travel in a header unchanged.
    public static func ruleHeaderValue(_ ruleId: String) -> String? {
        ruleId.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value < 0x7F } ? ruleId : nil
    }
}
