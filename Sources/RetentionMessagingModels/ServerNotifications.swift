// App Store Server Notifications V2 and the App Store Server API's Get Notification History, as far as
// the outcome job reads them. Field names and meanings are Apple's:
//   developer.apple.com/documentation/appstoreservernotifications/responsebodyv2decodedpayload
//   …/appstoreservernotifications/data, …/jwstransactiondecodedpayload, …/jwsrenewalinfodecodedpayload
//   developer.apple.com/documentation/appstoreserverapi/get-notification-history,
//   …/notificationhistoryrequest, …/notificationhistoryresponse
// Every field Apple marks optional is optional here, and unknown fields are ignored (Apple adds them).

/// The body Apple POSTs to a V2 notification URL, and each history record's payload: `{"signedPayload": "<JWS>"}`.
public struct ResponseBodyV2: Codable, Sendable, Hashable {
    public var signedPayload: String

    public init(signedPayload: String) {
        self.signedPayload = signedPayload
    }
}

/// The payload of a notification's `signedPayload` JWS.
public struct NotificationPayload: Codable, Sendable, Hashable {
    /// `DID_CHANGE_RENEWAL_STATUS`, `DID_RENEW`, `EXPIRED`, `OFFER_REDEEMED`, … (kept as text: Apple adds types).
    public var notificationType: String
    /// `AUTO_RENEW_DISABLED`, `VOLUNTARY`, … or absent.
    public var subtype: String?
    /// Unique per notification, the same on every retry of it.
    public var notificationUUID: String
    /// `"2.0"`.
    public var version: String?
    /// When the App Store signed it, ms since 1970.
    public var signedDate: Int64
    public var data: NotificationData?

    public init(notificationType: String, subtype: String? = nil, notificationUUID: String, version: String? = "2.0",
                signedDate: Int64, data: NotificationData?) {
        self.notificationType = notificationType
        self.subtype = subtype
        self.notificationUUID = notificationUUID
        self.version = version
        self.signedDate = signedDate
        self.data = data
    }
}

/// A notification's `data`: the app and environment, and the nested signed transaction and renewal info.
public struct NotificationData: Codable, Sendable, Hashable {
    public var appAppleId: Int64?
    public var bundleId: String?
    public var bundleVersion: String?
    /// `Sandbox` or `Production`.
    public var environment: String
    /// A JWS whose payload is a `TransactionPayload`.
    public var signedTransactionInfo: String?
    /// A JWS whose payload is a `RenewalInfoPayload`.
    public var signedRenewalInfo: String?
    /// The subscription's status (1 active, 2 expired, 3 billing retry, 4 grace period, 5 revoked).
    public var status: Int?

    public init(appAppleId: Int64?, bundleId: String?, bundleVersion: String? = nil, environment: String,
                signedTransactionInfo: String?, signedRenewalInfo: String?, status: Int? = nil) {
        self.appAppleId = appAppleId
        self.bundleId = bundleId
        self.bundleVersion = bundleVersion
        self.environment = environment
        self.signedTransactionInfo = signedTransactionInfo
        self.signedRenewalInfo = signedRenewalInfo
        self.status = status
    }
}

/// The fields of `JWSTransactionDecodedPayload` the outcome job reads.
public struct TransactionPayload: Codable, Sendable, Hashable {
    public var transactionId: String?
    public var originalTransactionId: String
    public var bundleId: String?
    public var productId: String?
    /// ms since 1970: when this period was bought or renewed.
    public var purchaseDate: Int64?
    /// ms since 1970: when this period ends.
    public var expiresDate: Int64?
    /// 1 introductory, 2 promotional, 3 offer code, 4 win-back, 5 App Store Connect retention offer.
    public var offerType: Int?
    public var offerIdentifier: String?
    /// Milliunits of `currency` (9990 is 9.99).
    public var price: Int64?
    /// ISO 4217, e.g. `USD`.
    public var currency: String?
    /// `PURCHASE` or `RENEWAL`.
    public var transactionReason: String?
    public var environment: String?
    public var signedDate: Int64
    /// ISO 3166-1 alpha-3 code of the purchase's storefront, e.g. `DEU`.
    public var storefront: String?
    /// ms since 1970: when the subscription was first bought.
    public var originalPurchaseDate: Int64?
    /// `PURCHASED` or `FAMILY_SHARED`.
    public var inAppOwnershipType: String?

    public init(transactionId: String?, originalTransactionId: String, bundleId: String?, productId: String?,
                purchaseDate: Int64?, expiresDate: Int64?, offerType: Int? = nil, offerIdentifier: String? = nil,
                price: Int64? = nil, currency: String? = nil, transactionReason: String? = nil, environment: String?,
                signedDate: Int64, storefront: String? = nil, originalPurchaseDate: Int64? = nil, inAppOwnershipType: String? = nil) {
        self.storefront = storefront
        self.originalPurchaseDate = originalPurchaseDate
        self.inAppOwnershipType = inAppOwnershipType
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.bundleId = bundleId
        self.productId = productId
        self.purchaseDate = purchaseDate
        self.expiresDate = expiresDate
        self.offerType = offerType
        self.offerIdentifier = offerIdentifier
        self.price = price
        self.currency = currency
        self.transactionReason = transactionReason
        self.environment = environment
        self.signedDate = signedDate
    }
}

/// The fields of `JWSRenewalInfoDecodedPayload` the outcome job reads.
public struct RenewalInfoPayload: Codable, Sendable, Hashable {
    public var originalTransactionId: String
    public var productId: String?
    /// The product the subscription renews to (differs from `productId` after a switch).
    public var autoRenewProductId: String?
    /// 1 renews, 0 turned off.
    public var autoRenewStatus: Int?
    public var offerType: Int?
    public var offerIdentifier: String?
    public var renewalDate: Int64?
    public var environment: String?
    public var signedDate: Int64
    /// Whether the App Store is still trying to collect a failed renewal.
    public var isInBillingRetryPeriod: Bool?
    /// ms since 1970: when the billing grace period ends (present only inside one).
    public var gracePeriodExpiresDate: Int64?
    /// 0 the customer has not responded to a price increase; 1 consented or notified (absent: no increase).
    public var priceIncreaseStatus: Int?

    public init(originalTransactionId: String, productId: String?, autoRenewProductId: String?, autoRenewStatus: Int?,
                offerType: Int? = nil, offerIdentifier: String? = nil, renewalDate: Int64? = nil, environment: String?,
                signedDate: Int64, isInBillingRetryPeriod: Bool? = nil, gracePeriodExpiresDate: Int64? = nil,
                priceIncreaseStatus: Int? = nil) {
        self.isInBillingRetryPeriod = isInBillingRetryPeriod
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.priceIncreaseStatus = priceIncreaseStatus
        self.originalTransactionId = originalTransactionId
        self.productId = productId
        self.autoRenewProductId = autoRenewProductId
        self.autoRenewStatus = autoRenewStatus
        self.offerType = offerType
        self.offerIdentifier = offerIdentifier
        self.renewalDate = renewalDate
        self.environment = environment
        self.signedDate = signedDate
    }
}

/// `POST /inApps/v1/notifications/history` body. `startDate` and `endDate` (ms) are required; an
/// `endDate` in the future counts as now. Either `transactionId` or `notificationType` (with an optional
/// matching `notificationSubtype`), not both.
public struct NotificationHistoryRequest: Codable, Sendable, Hashable {
    public var startDate: Int64
    public var endDate: Int64
    public var notificationType: String?
    public var notificationSubtype: String?
    public var transactionId: String?
    public var onlyFailures: Bool?

    public init(startDate: Int64, endDate: Int64, notificationType: String? = nil, notificationSubtype: String? = nil,
                transactionId: String? = nil, onlyFailures: Bool? = nil) {
        self.startDate = startDate
        self.endDate = endDate
        self.notificationType = notificationType
        self.notificationSubtype = notificationSubtype
        self.transactionId = transactionId
        self.onlyFailures = onlyFailures
    }
}

/// One attempt to deliver a notification to the app's V2 URL.
public struct SendAttemptItem: Codable, Sendable, Hashable {
    public var attemptDate: Int64?
    /// `SUCCESS`, `TIMED_OUT`, `SSL_ISSUE`, … (Apple's `sendAttemptResult`).
    public var sendAttemptResult: String?

    public init(attemptDate: Int64?, sendAttemptResult: String?) {
        self.attemptDate = attemptDate
        self.sendAttemptResult = sendAttemptResult
    }
}

public struct NotificationHistoryResponseItem: Codable, Sendable, Hashable {
    public var signedPayload: String?
    /// At most six.
    public var sendAttempts: [SendAttemptItem]?

    public init(signedPayload: String?, sendAttempts: [SendAttemptItem]?) {
        self.signedPayload = signedPayload
        self.sendAttempts = sendAttempts
    }
}

/// At most 20 records a page; `hasMore` with `paginationToken` (send it as the query
/// `paginationToken=` with the same request body) for the next.
public struct NotificationHistoryResponse: Codable, Sendable, Hashable {
    public var notificationHistory: [NotificationHistoryResponseItem]?
    public var hasMore: Bool?
    public var paginationToken: String?

    public init(notificationHistory: [NotificationHistoryResponseItem]?, hasMore: Bool?, paginationToken: String?) {
        self.notificationHistory = notificationHistory
        self.hasMore = hasMore
        self.paginationToken = paginationToken
    }
}

/// Get Notification History's facts.
public enum NotificationHistoryFacts {
    public static let path = "/inApps/v1/notifications/history"
    public static let pageSize = 20
    /// How far back history reaches, in days.
    public static let productionDays = 180
    public static let sandboxDays = 30

    /// The App Store Server API's error codes this endpoint answers with.
    public static let invalidTransactionId = 4_000_006
    public static let startDateTooFarInPast = 4_000_012
    public static let startDateAfterEndDate = 4_000_013
    public static let invalidPaginationToken = 4_000_014
    public static let invalidStartDate = 4_000_015
    public static let invalidEndDate = 4_000_016
    public static let paginationTokenExpired = 4_000_017
    public static let invalidNotificationType = 4_000_018
    public static let multipleFiltersSupplied = 4_000_019
    public static let accountNotFound = 4_040_001
    public static let transactionIdNotFound = 4_040_010
    public static let rateLimitExceeded = 4_290_000
    public static let generalInternal = 5_000_000
    public static let generalInternalRetryable = 5_000_001

    public static func days(_ environment: Environment) -> Int {
        environment == .production ? productionDays : sandboxDays
    }
}
