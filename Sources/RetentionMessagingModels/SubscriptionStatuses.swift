// Get All Subscription Statuses, as the App Store Server API answers it:
//   GET /inApps/v1/subscriptions/{transactionId}
//   developer.apple.com/documentation/appstoreserverapi/get-all-subscription-statuses
//   developer.apple.com/documentation/appstoreserverapi/statusresponse
//   developer.apple.com/documentation/appstoreserverapi/lasttransactionsitem
// Its rate limit is 50 requests per second per App in production and 10% of that in sandbox,
// enforced hourly (developer.apple.com/documentation/appstoreserverapi/identifying-rate-limits).

/// The customer's subscriptions, one item per subscription group.
public struct StatusResponse: Codable, Sendable, Hashable {
    public var environment: String?
    public var bundleId: String?
    public var appAppleId: Int64?
    public var data: [SubscriptionGroupIdentifierItem]?

    public init(environment: String?, bundleId: String?, appAppleId: Int64?, data: [SubscriptionGroupIdentifierItem]?) {
        self.environment = environment
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.data = data
    }
}

public struct SubscriptionGroupIdentifierItem: Codable, Sendable, Hashable {
    public var subscriptionGroupIdentifier: String?
    /// One item per entitlement in the group: usually one, two when the customer also has it through Family Sharing.
    public var lastTransactions: [LastTransactionsItem]?

    public init(subscriptionGroupIdentifier: String?, lastTransactions: [LastTransactionsItem]?) {
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
        self.lastTransactions = lastTransactions
    }
}

/// The newest signed transaction and renewal info of one subscription.
public struct LastTransactionsItem: Codable, Sendable, Hashable {
    /// 1 active, 2 expired, 3 in billing retry, 4 in the billing grace period, 5 revoked.
    public var status: Int?
    public var originalTransactionId: String?
    public var signedTransactionInfo: String?
    public var signedRenewalInfo: String?

    public init(status: Int?, originalTransactionId: String?, signedTransactionInfo: String?, signedRenewalInfo: String?) {
        self.status = status
        self.originalTransactionId = originalTransactionId
        self.signedTransactionInfo = signedTransactionInfo
        self.signedRenewalInfo = signedRenewalInfo
    }
}

/// The endpoint's path and the statuses Apple names.
public enum SubscriptionStatusFacts {
    public static let pathPrefix = "/inApps/v1/subscriptions/"

    public static func path(transactionId: String) -> String { pathPrefix + transactionId }

    public static let active = 1, expired = 2, billingRetry = 3, gracePeriod = 4, revoked = 5
}
