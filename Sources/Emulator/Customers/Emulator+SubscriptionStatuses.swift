import Crypto
import Foundation
import HTTPCore
import RetentionMessaging
public import RetentionMessagingModels
import Synchronization

// Get All Subscription Statuses, as the App Store Server API answers it
// (developer.apple.com/documentation/appstoreserverapi/get-all-subscription-statuses): the newest
// transaction and renewal info of the customer's subscription, signed afresh at the time of asking.
// The emulator knows a customer through the notifications it produced for them, so its answers tell
// the same histories (storefront, first purchase, offers, billing retry, Family Sharing).

/// The newest signed facts of each subscription in an environment's history, read incrementally.
struct SubscriptionStatusIndex {
    struct Latest {
        var transaction: TransactionPayload?
        var renewal: RenewalInfoPayload?
    }

    /// History records read so far.
    var indexed = 0
    var latest: [String: Latest] = [:]
    /// Every transaction id seen → its original transaction id (Apple takes either).
    var original: [String: String] = [:]

    mutating func read(_ history: [NotificationHistoryRecord]) {
        guard indexed < history.count else { return }
        for record in history[indexed...] {
            guard let data = Self.payload(NotificationPayload.self, record.signedPayload)?.data else { continue }
            let transaction = data.signedTransactionInfo.flatMap { Self.payload(TransactionPayload.self, $0) }
            let renewal = data.signedRenewalInfo.flatMap { Self.payload(RenewalInfoPayload.self, $0) }
            guard let id = transaction?.originalTransactionId ?? renewal?.originalTransactionId else { continue }
            var entry = latest[id] ?? Latest()
            if let transaction, transaction.signedDate >= entry.transaction?.signedDate ?? .min {
                entry.transaction = transaction
                if let transactionId = transaction.transactionId { original[transactionId] = id }
            }
            if let renewal, renewal.signedDate >= entry.renewal?.signedDate ?? .min { entry.renewal = renewal }
            latest[id] = entry
            original[id] = id
        }
        indexed = history.count
    }

    /// The emulator's own JWS, read without verifying (it signed them).
    private static func payload<T: Decodable>(_ type: T.Type, _ jws: String) -> T? {
        guard let decoded = try? JWS.decode(jws) else { return nil }
        return try? JSONDecoder().decode(type, from: Data(decoded.payloadJSON))
    }

    /// Apple's status of the subscription at `now` (ms): 1 active, 2 expired, 3 billing retry, 4 grace, 5 revoked.
    static func status(_ latest: Latest, now: Int64) -> Int {
        if let grace = latest.renewal?.gracePeriodExpiresDate, grace > now, latest.renewal?.isInBillingRetryPeriod == true {
            return SubscriptionStatusFacts.gracePeriod
        }
        if let expires = latest.transaction?.expiresDate, expires > now { return SubscriptionStatusFacts.active }
        return latest.renewal?.isInBillingRetryPeriod == true ? SubscriptionStatusFacts.billingRetry : SubscriptionStatusFacts.expired
    }
}

extension Emulator {
    /// `GET /inApps/v1/subscriptions/{transactionId}`. Runs under the core's lock, after the bearer
    /// token was accepted; paced like Apple (50/s in production, 5/s in sandbox) when rate limits are on.
    func subscriptionStatusRoute(_ transactionId: String, _ request: ParsedRequest, app: String, environment: Environment,
                                 core: inout Core, now: Double) -> RouteResult {
        guard request.method == "GET" else { return RouteResult(response: HTTPResponse(status: 405), note: "method not allowed") }
        core[app, environment].statusRequests += 1
        if let refused = serverAPILimit(.subscriptionStatus, bucket: &core[app, environment].statusBucket, environment: environment, now: now) {
            return refused
        }
        guard !transactionId.isEmpty, transactionId.count <= 19, transactionId.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            return RouteResult(response: Responses.error(400, NotificationHistoryFacts.invalidTransactionId, "Invalid transaction id."),
                               note: "invalid transaction id")
        }
        core[app, environment].statusIndex.read(core[app, environment].state.notificationHistory)
        let index = core[app, environment].statusIndex
        guard let id = index.original[transactionId], let latest = index.latest[id], let signer = configuration.notificationSigner else {
            return RouteResult(response: Responses.error(404, NotificationHistoryFacts.transactionIdNotFound, "Transaction id not found."),
                               note: "transaction id not found")
        }
        let signedDate = max(Int64(((now + core.clockOffset) * 1000).rounded(.down)), signer.validFrom)
        var transaction = latest.transaction
        transaction?.signedDate = signedDate
        var renewal = latest.renewal
        renewal?.signedDate = signedDate
        let item = LastTransactionsItem(status: SubscriptionStatusIndex.status(latest, now: signedDate), originalTransactionId: id,
                                        signedTransactionInfo: try? transaction.map(signer.sign), signedRenewalInfo: try? renewal.map(signer.sign))
        let group = SubscriptionGroupIdentifierItem(subscriptionGroupIdentifier: Self.subscriptionGroup, lastTransactions: [item])
        let answer = StatusResponse(environment: environment.appleName, bundleId: app.isEmpty ? nil : app,
                                    appAppleId: configuration.appAppleId != 0 ? configuration.appAppleId : nil, data: [group])
        return RouteResult(response: Responses.json(answer))
    }

    /// The emulator sells one subscription group.
    static let subscriptionGroup = "21000001"

    /// Get All Subscription Statuses requests an app's environment has answered (rate-limited ones included).
    public func subscriptionStatusRequests(in environment: Environment, bundleId: String? = nil) -> Int {
        core.withLock { core in core[core.app(bundleId), environment].statusRequests }
    }
}
