public import Crypto
public import Foundation
import RetentionMessagingModels

/// Signs `promotionalOfferSignatureV2`: an ES256 JWS over the claims Apple lists, with the App's
/// In-App Purchase key.
public struct PromotionalOfferSigner: Sendable {
    public let keyId: String
    public let issuerId: String
    public let bundleId: String
    private let privateKey: ES256PrivateKey
    private let clock: @Sendable () -> Date

    public init(keyId: String, issuerId: String, bundleId: String, privateKey: ES256PrivateKey,
                clock: @escaping @Sendable () -> Date = Date.init) {
        self.keyId = keyId
        self.issuerId = issuerId
        self.bundleId = bundleId
        self.privateKey = privateKey
        self.clock = clock
    }

    /// A promotionalOfferSignatureV2 JWS with a fresh nonce; `transactionId` is the realtime
    /// request's `originalTransactionId`.
    public func sign(productId: String, offerIdentifier: String, transactionId: String) throws -> String {
        let header = Header(alg: "ES256", kid: keyId, typ: "JWT")
        let claims = Claims(
            iss: issuerId, iat: Int64(clock().timeIntervalSince1970.rounded(.down)), aud: "promotional-offer",
            bid: bundleId, nonce: UUID().uuidString.lowercased(), productId: productId,
            offerIdentifier: offerIdentifier, transactionId: transactionId)
        return try JWS.sign(headerJSON: Array(try CanonicalJSON.encode(header)),
                            payloadJSON: Array(try CanonicalJSON.encode(claims)), key: privateKey)
    }

    private struct Header: Encodable {
        var alg: String
        var kid: String
        var typ: String
    }

    /// Exactly the claims Apple's specification lists, nothing else (no `exp`: Apple derives it from `iat`).
    private struct Claims: Encodable {
        var iss: String
        var iat: Int64
        var aud: String
        var bid: String
        var nonce: String
        var productId: String
        var offerIdentifier: String
        var transactionId: String
    }
}
