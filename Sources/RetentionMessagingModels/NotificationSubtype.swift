/// The detail some notification types carry (`subtype`; developer.apple.com/documentation/
/// appstoreservernotifications/subtype). Apple adds subtypes, so any other value decodes too.
public struct NotificationSubtype: ForwardCompatibleEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let accepted = NotificationSubtype(rawValue: "ACCEPTED")
    public static let autoRenewDisabled = NotificationSubtype(rawValue: "AUTO_RENEW_DISABLED")
    public static let autoRenewEnabled = NotificationSubtype(rawValue: "AUTO_RENEW_ENABLED")
    public static let billingRecovery = NotificationSubtype(rawValue: "BILLING_RECOVERY")
    public static let billingRetry = NotificationSubtype(rawValue: "BILLING_RETRY")
    public static let downgrade = NotificationSubtype(rawValue: "DOWNGRADE")
    public static let failure = NotificationSubtype(rawValue: "FAILURE")
    public static let gracePeriod = NotificationSubtype(rawValue: "GRACE_PERIOD")
    public static let initialBuy = NotificationSubtype(rawValue: "INITIAL_BUY")
    public static let pending = NotificationSubtype(rawValue: "PENDING")
    public static let priceIncrease = NotificationSubtype(rawValue: "PRICE_INCREASE")
    public static let productNotForSale = NotificationSubtype(rawValue: "PRODUCT_NOT_FOR_SALE")
    public static let resubscribe = NotificationSubtype(rawValue: "RESUBSCRIBE")
    public static let summary = NotificationSubtype(rawValue: "SUMMARY")
    public static let unreported = NotificationSubtype(rawValue: "UNREPORTED")
    public static let upgrade = NotificationSubtype(rawValue: "UPGRADE")
    public static let voluntary = NotificationSubtype(rawValue: "VOLUNTARY")
}
