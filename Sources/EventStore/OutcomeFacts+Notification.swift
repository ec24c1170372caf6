public import EventContract
public import RetentionMessagingModels
public import Runtime

extension OutcomeFacts {
    /// The notification types whose transaction's `purchaseDate` is when the outcome took effect (a
    /// renewal, a purchase, a redeemed offer); for every other type it is the notification's own date.
    static let datedByPurchase: Set<NotificationType> = [.didRenew, .subscribed, .offerRedeemed]

    /// The outcome a verified notification records, or nil when it is about no customer (a `TEST`).
    /// The customer is the keyed pseudonym of the `originalTransactionId`; the raw id goes no further.
    public init?(_ notification: VerifiedNotification, environment: Environment, pseudonyms: PseudonymKey, source: OutcomeSource) {
        guard let original = notification.originalTransactionId else { return nil }
        let payload = notification.payload
        let transaction = notification.transaction
        let renewal = notification.renewalInfo
        let effective = Self.datedByPurchase.contains(NotificationType(rawValue: payload.notificationType)) ? transaction?.purchaseDate : nil
        self.init(time: payload.signedDate, environment: environment.rawValue, notificationUUID: payload.notificationUUID,
                  notificationType: payload.notificationType, subtype: payload.subtype, customer: pseudonyms.pseudonym(original),
                  keyId: pseudonyms.keyId, productId: transaction?.productId ?? renewal?.productId,
                  autoRenewProductId: renewal?.autoRenewProductId, autoRenewStatus: renewal?.autoRenewStatus.map(Int64.init),
                  offerType: (transaction?.offerType ?? renewal?.offerType).map(Int64.init),
                  offerIdentifier: transaction?.offerIdentifier ?? renewal?.offerIdentifier,
                  price: transaction?.price, currency: transaction?.currency,
                  effectiveDate: effective ?? payload.signedDate, expiresDate: transaction?.expiresDate, source: source)
        storefront = transaction?.storefront
        originalPurchaseDate = transaction?.originalPurchaseDate
        ownership = transaction?.inAppOwnershipType
        purchaseDate = transaction?.purchaseDate
        redeemedOfferType = transaction?.offerType.map(Int64.init)
        billingRetry = renewal?.isInBillingRetryPeriod
        gracePeriodExpiresDate = renewal?.gracePeriodExpiresDate
        priceIncreaseStatus = renewal?.priceIncreaseStatus.map(Int64.init)
    }
}
