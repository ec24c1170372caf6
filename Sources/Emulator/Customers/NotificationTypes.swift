/// Apple's V2 notification types and the subtypes each may carry
/// (developer.apple.com/documentation/appstoreservernotifications/notificationtype and …/subtype):
/// the one table Get Notification History's `notificationType` / `notificationSubtype` filter is
/// checked against.
enum NotificationTypes {
    static let subtypes: [String: Set<String>] = [
        "CONSUMPTION_REQUEST": [],
        "DID_CHANGE_RENEWAL_PREF": ["UPGRADE", "DOWNGRADE"],
        "DID_CHANGE_RENEWAL_STATUS": ["AUTO_RENEW_ENABLED", "AUTO_RENEW_DISABLED"],
        "DID_FAIL_TO_RENEW": ["GRACE_PERIOD"],
        "DID_RENEW": ["BILLING_RECOVERY"],
        "EXPIRED": ["VOLUNTARY", "BILLING_RETRY", "PRICE_INCREASE", "PRODUCT_NOT_FOR_SALE"],
        "EXTERNAL_PURCHASE_TOKEN": ["UNREPORTED"],
        "GRACE_PERIOD_EXPIRED": [],
        "METADATA_UPDATE": [],
        "MIGRATION": [],
        "OFFER_REDEEMED": ["INITIAL_BUY", "RESUBSCRIBE", "UPGRADE", "DOWNGRADE"],
        "ONE_TIME_CHARGE": [],
        "PRICE_CHANGE": [],
        "PRICE_INCREASE": ["PENDING", "ACCEPTED"],
        "REFUND": [],
        "REFUND_DECLINED": [],
        "REFUND_REVERSED": [],
        "RENEWAL_EXTENDED": [],
        "RENEWAL_EXTENSION": ["SUMMARY", "FAILURE"],
        "RESCIND_CONSENT": [],
        "REVOKE": [],
        "SUBSCRIBED": ["INITIAL_BUY", "RESUBSCRIBE"],
        "TEST": [],
    ]

    /// Whether a history filter names a type Apple sends, and a subtype that type can carry
    /// (a subtype without a type is not a valid filter).
    static func isValidFilter(type: String?, subtype: String?) -> Bool {
        guard let type else { return subtype == nil }
        guard let allowed = subtypes[type] else { return false }
        return subtype.map { allowed.contains($0) } ?? true
    }
}
