public import Crypto
import Foundation
public import RetentionMessagingModels

/// Signs App Store Server Notifications V2 as Apple does: each payload a compact JWS, ES256 by the
/// chain's leaf, header `{"alg":"ES256","x5c":[leaf, intermediate, root]}` — the same chain and
/// header as the realtime requests — and the notification's `data.signedTransactionInfo` and
/// `data.signedRenewalInfo` each a JWS of its own. A receiver verifies every JWS at its own
/// `signedDate`, so each date must lie inside the chain's validity (`validFrom`).
public struct NotificationSigner: Sendable {
    public let chain: AppleStyleSigningChain

    public init(chain: AppleStyleSigningChain) { self.chain = chain }

    /// The earliest `signedDate` (ms since 1970) a receiver can verify: the leaf's `notBefore`.
    public var validFrom: Int64 { Int64((chain.leaf.notBefore.timeIntervalSince1970 * 1000).rounded(.up)) }

    public func sign(_ payload: NotificationPayload) throws -> String { try signJSON(payload) }
    public func sign(_ transaction: TransactionPayload) throws -> String { try signJSON(transaction) }
    public func sign(_ renewal: RenewalInfoPayload) throws -> String { try signJSON(renewal) }

    /// Signs the transaction and the renewal info (when given), puts them into `data`, then signs
    /// the notification: the whole `signedPayload` Apple sends.
    public func signNotification(_ payload: NotificationPayload, transaction: TransactionPayload?,
                                 renewal: RenewalInfoPayload?) throws -> String {
        var payload = payload
        if var data = payload.data {
            data.signedTransactionInfo = try transaction.map(sign)
            data.signedRenewalInfo = try renewal.map(sign)
            payload.data = data
        }
        return try sign(payload)
    }

    private func signJSON<T: Encodable>(_ value: T) throws -> String {
        try chain.sign(payloadJSON: Array(try CanonicalJSON.encode(value)))
    }
}
