import Basics

// What Apple's signed data says about one customer: the facts `match.customer` conditions test.
// Every field comes from a verified App Store Server Notification V2's signed transaction or renewal
// info (Apple's field in brackets), never from a client or a person:
//   storefront, currency, price, originalPurchaseDate, inAppOwnershipType, offerType
//     developer.apple.com/documentation/appstoreserverapi/jwstransactiondecodedpayload
//   isInBillingRetryPeriod, gracePeriodExpiresDate, priceIncreaseStatus, autoRenewProductId
//     developer.apple.com/documentation/appstoreserverapi/jwsrenewalinfodecodedpayload
// A fact nobody signed is nil: unknown, never a guess.

/// An offer a customer redeemed, by Apple's `offerType`.
public enum OfferKind: Int, Sendable, Hashable, CaseIterable, Codable, Comparable {
    case introductory = 1, promotional = 2, offerCode = 3, winBack = 4
    /// An App Store Connect retention offer (see `spec/retention-messaging-api.md`).
    case retention = 5

    /// As a manifest writes it.
    public var name: String {
        switch self {
        case .introductory: "introductory"
        case .promotional: "promotional"
        case .offerCode: "offerCode"
        case .winBack: "winBack"
        case .retention: "retention"
        }
    }

    public init?(name: String) {
        guard let kind = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = kind
    }

    public static func < (lhs: OfferKind, rhs: OfferKind) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Whether Apple is collecting a failed renewal (`isInBillingRetryPeriod`, `gracePeriodExpiresDate`).
public enum BillingState: String, Sendable, Hashable, CaseIterable, Codable {
    /// Not in billing retry: paying normally, or not renewing.
    case none
    /// In billing retry, after any grace period.
    case retry
    /// In billing retry and inside the billing grace period (the customer still has service).
    case grace
}

/// `priceIncreaseStatus` of the renewal info.
public enum PriceIncreaseState: String, Sendable, Hashable, CaseIterable, Codable {
    /// No price increase is signed for the next renewal (the renewal info carries no status).
    case none
    /// `0`: the customer has not yet responded to a price increase that needs consent.
    case pending
    /// `1`: the customer consented, or was notified of an increase that needs no consent.
    case agreed
}

/// `inAppOwnershipType` of the transaction.
public enum Ownership: String, Sendable, Hashable, CaseIterable, Codable {
    case purchased, familyShared

    public init?(apple value: String) {
        switch value {
        case "PURCHASED": self = .purchased
        case "FAMILY_SHARED": self = .familyShared
        default: return nil
        }
    }
}

/// Where the facts a decision used came from.
public enum FactsSource: String, Sendable, Hashable, CaseIterable, Codable {
    /// The facts table the reconcile job published.
    case table
    /// A notification this replica received since the table was built.
    case notification
    /// serve's live lookup (App Store Server API, Get All Subscription Statuses) for a customer it knew nothing of.
    case lookup
    /// Nothing was known about the customer.
    case unknown
}

/// One customer's facts. Each group of fields remembers the `signedDate` of the data it came from, so
/// folding in an older notification never overwrites what a newer one said: `folding` is
/// order-independent, and the same notifications give the same facts however they arrive.
public struct CustomerFacts: Sendable, Hashable {
    /// ISO 3166-1 alpha-3 (`storefront`).
    public var storefront: String?
    /// ISO 4217 (`currency`) and the price of the latest transaction, in milliunits (`price`).
    public var currency: String?
    public var price: Int64?
    /// When the subscription was first bought (`originalPurchaseDate`), UNIX ms: tenure counts from here.
    public var firstPurchase: Int64?
    public var ownership: Ownership?
    /// The last redemption of each kind of offer (`offerType` of a transaction, at its `purchaseDate`), UNIX ms.
    public var offersRedeemed: [OfferKind: Int64]
    /// `isInBillingRetryPeriod`; nil when no renewal info was signed.
    public var inBillingRetry: Bool?
    /// `gracePeriodExpiresDate`, UNIX ms.
    public var gracePeriodExpires: Int64?
    public var priceIncrease: PriceIncreaseState?
    public var autoRenewProductId: String?
    /// The `signedDate` of the newest notification whose transaction (storefront, currency, price,
    /// first purchase, ownership) and renewal info (billing, price increase, auto-renew product) are kept.
    public var transactionAsOf: Int64
    public var renewalAsOf: Int64
    /// The notification (its `notificationUUID`, lowercase) each group was taken from: of two signed in
    /// the same millisecond, the greater id wins, so every reader (and the SQL) keeps the same one.
    public var transactionNotification: String = ""
    public var renewalNotification: String = ""
    /// False when the facts saw only the newest transaction (a live lookup): an offer redeemed before
    /// it is not seen, so "no offer within N days" is unknown, while a redemption seen still counts.
    public var offerHistoryComplete = true

    public init(storefront: String? = nil, currency: String? = nil, price: Int64? = nil, firstPurchase: Int64? = nil,
                ownership: Ownership? = nil, offersRedeemed: [OfferKind: Int64] = [:], inBillingRetry: Bool? = nil,
                gracePeriodExpires: Int64? = nil, priceIncrease: PriceIncreaseState? = nil, autoRenewProductId: String? = nil,
                transactionAsOf: Int64 = .min, renewalAsOf: Int64 = .min) {
        self.storefront = storefront
        self.currency = currency
        self.price = price
        self.firstPurchase = firstPurchase
        self.ownership = ownership
        self.offersRedeemed = offersRedeemed
        self.inBillingRetry = inBillingRetry
        self.gracePeriodExpires = gracePeriodExpires
        self.priceIncrease = priceIncrease
        self.autoRenewProductId = autoRenewProductId
        self.transactionAsOf = transactionAsOf
        self.renewalAsOf = renewalAsOf
    }

    /// The newest signed date of any fact kept.
    public var asOf: Int64 { max(transactionAsOf, renewalAsOf) }

    /// The billing state at `time` (a grace period ends at its expiry date); nil when unknown.
    public func billing(at time: Int64) -> BillingState? {
        guard let inBillingRetry else { return nil }
        guard inBillingRetry else { return BillingState.none }
        if let gracePeriodExpires, time < gracePeriodExpires { return .grace }
        return .retry
    }

    /// Whole days subscribed at `time`, from the first purchase; nil when unknown.
    public func tenureDays(at time: Int64) -> Int64? {
        guard let firstPurchase, time >= firstPurchase else { return nil }
        return (time - firstPurchase) / 86_400_000
    }

    /// Whole calendar months (UTC) subscribed at `time`: from 31 January, 28 February is not yet a month.
    public func tenureMonths(at time: Int64) -> Int64? {
        guard let firstPurchase, time >= firstPurchase else { return nil }
        return CivilMonths.completed(from: firstPurchase, to: time)
    }

    /// The latest redemption of any of `kinds` (every kind when empty), UNIX ms.
    public func lastRedemption(of kinds: [OfferKind]) -> Int64? {
        var latest: Int64?
        for (kind, date) in offersRedeemed where kinds.isEmpty || kinds.contains(kind) {
            latest = max(latest ?? .min, date)
        }
        return latest
    }

    /// What one verified notification adds: its transaction's facts when it is newer than those kept,
    /// likewise its renewal info's, the earliest first purchase, and any offer its transaction was
    /// bought under. Each part is newest-wins (by signed date, then notification id), minimum or
    /// maximum, so any order of arrival — and any repetition — gives the same facts.
    public mutating func fold(_ observation: FactsObservation) {
        if observation.hasTransaction, (observation.signedDate, observation.notification) > (transactionAsOf, transactionNotification) {
            // The newest signed transaction's facts, as it signed them: a field it leaves out is unknown.
            transactionAsOf = observation.signedDate
            transactionNotification = observation.notification
            storefront = observation.storefront
            currency = observation.currency
            price = observation.price
            ownership = observation.ownership
        }
        if let first = observation.originalPurchaseDate {
            // The first purchase never moves later, whatever order notifications come in.
            firstPurchase = min(firstPurchase ?? first, first)
        }
        if observation.hasRenewal, (observation.signedDate, observation.notification) > (renewalAsOf, renewalNotification) {
            renewalAsOf = observation.signedDate
            renewalNotification = observation.notification
            inBillingRetry = observation.inBillingRetry ?? false
            gracePeriodExpires = observation.gracePeriodExpires
            priceIncrease = observation.priceIncreaseStatus.map { $0 == 0 ? .pending : .agreed } ?? PriceIncreaseState.none
            autoRenewProductId = observation.autoRenewProductId
        }
        if let kind = observation.offerRedeemed, let date = observation.offerDate {
            offersRedeemed[kind] = max(offersRedeemed[kind] ?? .min, date)
        }
    }
}

/// What one verified notification says about its customer, as `CustomerFacts.fold` reads it (and as
/// the outcome event records it, so the facts table can be rebuilt from the events).
public struct FactsObservation: Sendable, Hashable {
    /// The notification's `signedDate`, UNIX ms.
    public var signedDate: Int64
    /// The notification's `notificationUUID`, lowercase: breaks ties between equal signed dates.
    public var notification: String = ""
    public var hasTransaction: Bool
    public var storefront: String?
    public var currency: String?
    public var price: Int64?
    public var originalPurchaseDate: Int64?
    public var ownership: Ownership?
    /// The offer this transaction was bought under, and when (`purchaseDate`).
    public var offerRedeemed: OfferKind?
    public var offerDate: Int64?
    public var hasRenewal: Bool
    public var inBillingRetry: Bool?
    public var gracePeriodExpires: Int64?
    public var priceIncreaseStatus: Int?
    public var autoRenewProductId: String?

    public init(signedDate: Int64, hasTransaction: Bool, storefront: String? = nil, currency: String? = nil, price: Int64? = nil,
                originalPurchaseDate: Int64? = nil, ownership: Ownership? = nil, offerRedeemed: OfferKind? = nil, offerDate: Int64? = nil,
                hasRenewal: Bool, inBillingRetry: Bool? = nil, gracePeriodExpires: Int64? = nil, priceIncreaseStatus: Int? = nil,
                autoRenewProductId: String? = nil) {
        self.signedDate = signedDate
        self.hasTransaction = hasTransaction
        self.storefront = storefront
        self.currency = currency
        self.price = price
        self.originalPurchaseDate = originalPurchaseDate
        self.ownership = ownership
        self.offerRedeemed = offerRedeemed
        self.offerDate = offerDate
        self.hasRenewal = hasRenewal
        self.inBillingRetry = inBillingRetry
        self.gracePeriodExpires = gracePeriodExpires
        self.priceIncreaseStatus = priceIncreaseStatus
        self.autoRenewProductId = autoRenewProductId
    }

    /// A notification's signed transaction and renewal info.
    public init(signedDate: Int64, notification: String, transaction: TransactionPayload?, renewal: RenewalInfoPayload?) {
        self.init(signedDate: signedDate, hasTransaction: transaction != nil, storefront: transaction?.storefront,
                  currency: transaction?.currency, price: transaction?.price, originalPurchaseDate: transaction?.originalPurchaseDate,
                  ownership: transaction?.inAppOwnershipType.flatMap(Ownership.init(apple:)),
                  offerRedeemed: transaction?.offerType.flatMap(OfferKind.init(rawValue:)),
                  offerDate: transaction?.offerType == nil ? nil : transaction?.purchaseDate,
                  hasRenewal: renewal != nil, inBillingRetry: renewal?.isInBillingRetryPeriod,
                  gracePeriodExpires: renewal?.gracePeriodExpiresDate, priceIncreaseStatus: renewal?.priceIncreaseStatus,
                  autoRenewProductId: renewal?.autoRenewProductId)
        self.notification = notification.lowercased()
    }
}

/// Calendar arithmetic in UTC for tenure in months, on `UTCTime`'s civil-date calculation.
enum CivilMonths {
    /// (year, month 1–12, day 1–31, milliseconds into the day) of a UNIX millisecond.
    static func civil(_ milliseconds: Int64) -> (year: Int64, month: Int64, day: Int64, rest: Int64) {
        let (days, rest) = UTCTime.floorDivide(milliseconds, UTCTime.day)
        let date = UTCTime.civilFromDays(days)
        return (date.year, date.month, date.day, rest)
    }

    /// Whole months from `start` to `end` (end ≥ start): a month is complete at the same day and
    /// time of a later month; from the 31st, a shorter month completes on the next month's 1st.
    static func completed(from start: Int64, to end: Int64) -> Int64 {
        let a = civil(start), b = civil(end)
        var months = (b.year - a.year) * 12 + (b.month - a.month)
        if (b.day, b.rest) < (a.day, a.rest) { months -= 1 }
        return max(0, months)
    }
}
