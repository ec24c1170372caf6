import RetentionMessagingModels

/// The subtypes each of Apple's V2 notification types may carry
/// (developer.apple.com/documentation/appstoreservernotifications/notificationtype and …/subtype):
/// the one table Get Notification History's `notificationType` / `notificationSubtype` filter is
/// checked against.
enum NotificationTypes {
    static let subtypes: [NotificationType: Set<NotificationSubtype>] = [
        .consumptionRequest: [],
        .didChangeRenewalPref: [.upgrade, .downgrade],
        .didChangeRenewalStatus: [.autoRenewEnabled, .autoRenewDisabled],
        .didFailToRenew: [.gracePeriod],
        .didRenew: [.billingRecovery],
        .expired: [.voluntary, .billingRetry, .priceIncrease, .productNotForSale],
        .externalPurchaseToken: [.unreported],
        .gracePeriodExpired: [],
        .metadataUpdate: [],
        .migration: [],
        .offerRedeemed: [.initialBuy, .resubscribe, .upgrade, .downgrade],
        .oneTimeCharge: [],
        .priceChange: [],
        .priceIncrease: [.pending, .accepted],
        .refund: [],
        .refundDeclined: [],
        .refundReversed: [],
        .renewalExtended: [],
        .renewalExtension: [.summary, .failure],
        .rescindConsent: [],
        .revoke: [],
        .subscribed: [.initialBuy, .resubscribe],
        .test: [],
    ]

    /// Whether a history filter names a type Apple sends, and a subtype that type can carry
    /// (a subtype without a type is not a valid filter).
    static func isValidFilter(type: String?, subtype: String?) -> Bool {
        guard let type else { return subtype == nil }
        guard let allowed = subtypes[NotificationType(rawValue: type)] else { return false }
        return subtype.map { allowed.contains(NotificationSubtype(rawValue: $0)) } ?? true
    }
}
