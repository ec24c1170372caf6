/// `billingPlanType` on an `alternateProduct` response.
public struct BillingPlanType: ForwardCompatibleEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let billedUpfront = BillingPlanType(rawValue: "BILLED_UPFRONT")
    public static let monthly = BillingPlanType(rawValue: "MONTHLY")
}
