/// The decoded payload of Apple's realtime "Get Retention Message" request.
public struct DecodedRealtimeRequestBody: Codable, Sendable, Hashable {
    public var originalTransactionId: String
    public var appAppleId: Int64
    public var productId: String
    public var userLocale: String
    public var requestIdentifier: String
    /// `Sandbox` or `Production`, as Apple spells it.
    public var environment: String
    /// UNIX time in milliseconds.
    public var signedDate: Int64

    public init(originalTransactionId: String, appAppleId: Int64, productId: String, userLocale: String,
                requestIdentifier: String, environment: String, signedDate: Int64) {
        self.originalTransactionId = originalTransactionId
        self.appAppleId = appAppleId
        self.productId = productId
        self.userLocale = userLocale
        self.requestIdentifier = requestIdentifier
        self.environment = environment
        self.signedDate = signedDate
    }
}

/// What the developer's realtime endpoint answers: exactly one of the members is set.
public struct RealtimeResponseBody: Codable, Sendable, Hashable {
    public var message: RealtimeMessage?
    public var alternateProduct: AlternateProduct?
    public var promotionalOffer: PromotionalOffer?

    public init(message: RealtimeMessage? = nil, alternateProduct: AlternateProduct? = nil,
                promotionalOffer: PromotionalOffer? = nil) {
        self.message = message
        self.alternateProduct = alternateProduct
        self.promotionalOffer = promotionalOffer
    }
}

public struct RealtimeMessage: Codable, Sendable, Hashable {
    public var messageIdentifier: String
    public init(messageIdentifier: String) { self.messageIdentifier = messageIdentifier }
}

public struct AlternateProduct: Codable, Sendable, Hashable {
    public var messageIdentifier: String
    public var productId: String
    public var billingPlanType: BillingPlanType?
    public init(messageIdentifier: String, productId: String, billingPlanType: BillingPlanType? = nil) {
        self.messageIdentifier = messageIdentifier
        self.productId = productId
        self.billingPlanType = billingPlanType
    }
}

public struct PromotionalOffer: Codable, Sendable, Hashable {
    public var messageIdentifier: String
    public var promotionalOfferSignatureV2: String
    public init(messageIdentifier: String, promotionalOfferSignatureV2: String) {
        self.messageIdentifier = messageIdentifier
        self.promotionalOfferSignatureV2 = promotionalOfferSignatureV2
    }
}
