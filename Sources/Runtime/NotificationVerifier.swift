public import Basics
public import Crypto
import Foundation
public import RetentionMessagingModels

/// A notification whose signature, chain, environment and App have been checked, with its nested
/// transaction and renewal info (each verified the same way).
public struct VerifiedNotification: Sendable, Hashable {
    public var payload: NotificationPayload
    public var transaction: TransactionPayload?
    public var renewalInfo: RenewalInfoPayload?

    public init(payload: NotificationPayload, transaction: TransactionPayload? = nil, renewalInfo: RenewalInfoPayload? = nil) {
        self.payload = payload
        self.transaction = transaction
        self.renewalInfo = renewalInfo
    }

    /// The customer's `originalTransactionId`, from the transaction or the renewal info; nil for a
    /// notification about no subscription (a `TEST`, say).
    public var originalTransactionId: String? {
        transaction?.originalTransactionId ?? renewalInfo?.originalTransactionId
    }
}

/// Verifies App Store Server Notifications V2 as Apple's libraries do (`verifyAndDecodeNotification`
/// and the nested `verifyAndDecodeTransaction` / `verifyAndDecodeRenewalInfo`): the `signedPayload`
/// JWS and each nested JWS over an x5c chain to a trusted root at its own `signedDate`, then the
/// environment, the bundle id and (in Production) the App's `appAppleId`. No freshness bound: Apple
/// retries a notification for three days, and history reaches back 180.
public struct NotificationVerifier: Sendable {
    public let environment: RetentionMessagingModels.Environment
    public let bundleId: String?
    public let appAppleId: Int64?
    private let jws: SignedPayloadVerifier

    public init(trustedRoots: [X509Certificate], bundleId: String?, appAppleId: Int64?,
                environment: RetentionMessagingModels.Environment, onlineChecks: Bool = false,
                clock: any RetentionClock) {
        self.environment = environment
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        jws = SignedPayloadVerifier(trustedRoots: trustedRoots, appAppleId: appAppleId, environment: environment,
                                    onlineChecks: onlineChecks, maxAge: nil, clock: clock)
    }

    private struct Dated: Decodable {
        var signedDate: Int64
    }

    private static func signedDate(_ json: [UInt8]) throws(SignedPayloadError) -> Int64 {
        do {
            return try JSONDecoder().decode(Dated.self, from: Data(json)).signedDate
        } catch {
            throw .malformed("the payload has no integer signedDate")
        }
    }

    private func decode<T: Decodable>(_ type: T.Type, _ json: [UInt8], _ what: String) throws(SignedPayloadError) -> T {
        do {
            return try JSONDecoder().decode(type, from: Data(json))
        } catch {
            throw .malformed("the \(what) is not Apple's shape (\(error))")
        }
    }

    /// `body` is what Apple POSTs (`{"signedPayload": "…"}`) or a history record's `signedPayload`.
    public func verify(signedPayload: String) throws(SignedPayloadError) -> VerifiedNotification {
        let json = try jws.verifiedPayload(signedPayload, signedDate: Self.signedDate)
        let payload = try decode(NotificationPayload.self, json, "notification payload")
        guard let data = payload.data else {
            throw .malformed("the notification has no data (a summary or external-purchase notification is not about one customer)")
        }
        try check(environment: data.environment)
        if let bundleId, let found = data.bundleId, found != bundleId {
            throw .wrongBundleId(expected: bundleId, found: found)
        }
        if environment == .production, let appAppleId {
            guard let found = data.appAppleId else { throw .malformed("the Production notification has no appAppleId") }
            guard found == appAppleId else { throw .wrongAppAppleId(expected: appAppleId, found: found) }
        }
        let (transaction, renewal) = try verifyPair(transaction: data.signedTransactionInfo, renewal: data.signedRenewalInfo,
                                                    claimedEnvironment: data.environment)
        return VerifiedNotification(payload: payload, transaction: transaction, renewalInfo: renewal)
    }

    /// One subscription of a Get All Subscription Statuses answer (its `lastTransactionsItem`): the
    /// signed transaction and renewal info, each verified as a notification's nested ones are.
    public func verify(_ item: LastTransactionsItem) throws(SignedPayloadError) -> (transaction: TransactionPayload?, renewal: RenewalInfoPayload?) {
        try verifyPair(transaction: item.signedTransactionInfo, renewal: item.signedRenewalInfo, claimedEnvironment: environment.appleName)
    }

    private func verifyPair(transaction signedTransaction: String?, renewal signedRenewal: String?,
                            claimedEnvironment: String) throws(SignedPayloadError) -> (TransactionPayload?, RenewalInfoPayload?) {
        var transaction: TransactionPayload?
        var renewal: RenewalInfoPayload?
        if let signed = signedTransaction {
            let decoded = try decode(TransactionPayload.self, try jws.verifiedPayload(signed, signedDate: Self.signedDate),
                                     "signed transaction info")
            try check(environment: decoded.environment ?? claimedEnvironment)
            if let bundleId, let found = decoded.bundleId, found != bundleId { throw .wrongBundleId(expected: bundleId, found: found) }
            transaction = decoded
        }
        if let signed = signedRenewal {
            let decoded = try decode(RenewalInfoPayload.self, try jws.verifiedPayload(signed, signedDate: Self.signedDate),
                                     "signed renewal info")
            try check(environment: decoded.environment ?? claimedEnvironment)
            renewal = decoded
        }
        if let transaction, let renewal, transaction.originalTransactionId != renewal.originalTransactionId {
            throw .malformed("the transaction and the renewal info name different originalTransactionIds")
        }
        return (transaction, renewal)
    }

    private func check(environment found: String) throws(SignedPayloadError) {
        guard found != "Xcode", found != "LocalTesting" else { throw .unsupportedEnvironment(found) }
        guard found == environment.appleName else { throw .wrongEnvironment(expected: environment.appleName, found: found) }
    }
}
