public import Basics
public import Crypto
import Foundation
public import RetentionMessagingModels

/// Signs with the App's In-App Purchase key what a realtime answer carries signed:
/// `promotionalOfferSignatureV2`, and the Advanced Commerce request inside `advancedCommerceData`.
/// Each is an ES256 JWS over the claims Apple lists.
public struct PromotionalOfferSigner: Sendable {
    public let keyId: String
    public let issuerId: String
    public let bundleId: String
    private let privateKey: ES256PrivateKey
    private let clock: any RetentionClock
    /// The header never changes, so its base64url form is made once.
    private let encodedHeader: String

    public init(keyId: String, issuerId: String, bundleId: String, privateKey: ES256PrivateKey,
                clock: any RetentionClock) {
        self.keyId = keyId
        self.issuerId = issuerId
        self.bundleId = bundleId
        self.privateKey = privateKey
        self.clock = clock
        var header = CanonicalJSONWriter()
        header.object { fields in
            fields.member("alg", string: "ES256")
            fields.member("kid", string: keyId)
            fields.member("typ", string: "JWT")
        }
        encodedHeader = Base64URL.encode(header.bytes)
    }

    /// A promotionalOfferSignatureV2 JWS with a fresh nonce; `transactionId` is the realtime
    /// request's `originalTransactionId`.
    public func sign(productId: String, offerIdentifier: String, transactionId: String) throws -> String {
        let claims = Claims(
            iss: issuerId, iat: Int64(clock.now().rounded(.down)), aud: "promotional-offer",
            bid: bundleId, nonce: CryptoRandom.uuid(), productId: productId,
            offerIdentifier: offerIdentifier, transactionId: transactionId)
        return try JWS.sign(encodedHeader: encodedHeader, payloadJSON: claims.canonicalJSON, key: privateKey)
    }

    /// `advancedCommerceData`: the Base64 of `{"signatureInfo":{"token":JWS}}`, the JWS carrying the
    /// Advanced Commerce API's in-app claims (audience `advanced-commerce-api`, a fresh nonce, and
    /// `request`, the Base64 of the SubscriptionModifyInAppRequest JSON with a fresh requestReferenceId).
    /// `transactionId` is the realtime request's `originalTransactionId`.
    public func signAdvancedCommerce(_ change: AdvancedCommerceChange, transactionId: String) throws -> String {
        let request = change.requestJSON(transactionId: transactionId, requestReferenceId: CryptoRandom.uuid())
        var claims = CanonicalJSONWriter(capacity: 1024)
        claims.object { fields in
            fields.member("aud", string: "advanced-commerce-api")
            fields.member("bid", string: bundleId)
            fields.member("iat", integer: Int64(clock.now().rounded(.down)))
            fields.member("iss", string: issuerId)
            fields.member("nonce", string: CryptoRandom.uuid())
            fields.member("request", string: Data(request).base64EncodedString())
        }
        let token = try JWS.sign(encodedHeader: encodedHeader, payloadJSON: claims.bytes, key: privateKey)
        var wrapper = CanonicalJSONWriter(capacity: token.utf8.count + 40)
        wrapper.object { fields in
            fields.member("signatureInfo") { value in value.object { $0.member("token", string: token) } }
        }
        return Data(wrapper.bytes).base64EncodedString()
    }

    /// Exactly the claims Apple's specification lists, nothing else (no `exp`: Apple derives it from `iat`).
    struct Claims: Encodable {
        var iss: String
        var iat: Int64
        var aud: String
        var bid: String
        var nonce: String
        var productId: String
        var offerIdentifier: String
        var transactionId: String

        /// `CanonicalJSON.encode(self)`, written directly since every offer answer signs one.
        var canonicalJSON: [UInt8] {
            var writer = CanonicalJSONWriter(capacity: 320)
            writer.object { fields in
                fields.member("aud", string: aud)
                fields.member("bid", string: bid)
                fields.member("iat", integer: iat)
                fields.member("iss", string: iss)
                fields.member("nonce", string: nonce)
                fields.member("offerIdentifier", string: offerIdentifier)
                fields.member("productId", string: productId)
                fields.member("transactionId", string: transactionId)
            }
            return writer.bytes
        }
    }
}
