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
