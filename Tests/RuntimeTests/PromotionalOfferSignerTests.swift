import Basics
import Crypto
import Foundation
import Runtime
import Testing

@Suite("Promotional offer signature")
struct PromotionalOfferSignerTests {
    let key = ES256PrivateKey.generate()
    var signer: PromotionalOfferSigner {
        PromotionalOfferSigner(keyId: "ABC123DEFG", issuerId: "57246542-96fe-1a63-e053-0824d011072a", bundleId: "com.example.app",
                               privateKey: key, clock: VirtualClock(start: 1_780_000_000.75))
    }

    @Test("the signature verifies with the key's public half and carries exactly the claims Apple lists")
    func carriesExactlyTheSpecClaims() throws {
        let jws = try JWS.decode(signer.sign(productId: "com.example.monthly", offerIdentifier: "winback-50",
                                             transactionId: "2000000123456789"))
        #expect(jws.verify(with: key.publicKey))
        #expect(jws.signature.count == 64)

        let header = try #require(JSONSerialization.jsonObject(with: Data(jws.headerJSON)) as? [String: Any])
        #expect(Set(header.keys) == ["alg", "kid", "typ"])
        #expect(header["alg"] as? String == "ES256")
        #expect(header["kid"] as? String == "ABC123DEFG")
        #expect(header["typ"] as? String == "JWT")

        let claims = try #require(JSONSerialization.jsonObject(with: Data(jws.payloadJSON)) as? [String: Any])
        #expect(Set(claims.keys) == ["iss", "iat", "aud", "bid", "nonce", "productId", "offerIdentifier", "transactionId"])
        #expect(claims["iss"] as? String == "57246542-96fe-1a63-e053-0824d011072a")
        #expect((claims["iat"] as? NSNumber)?.int64Value == 1_780_000_000)
        #expect(claims["aud"] as? String == "promotional-offer")
        #expect(claims["bid"] as? String == "com.example.app")
        #expect(claims["productId"] as? String == "com.example.monthly")
        #expect(claims["offerIdentifier"] as? String == "winback-50")
        #expect(claims["transactionId"] as? String == "2000000123456789")
        let nonce = try #require(claims["nonce"] as? String)
        #expect(UUID(uuidString: nonce) != nil)
        #expect(nonce == nonce.lowercased())
    }

    @Test("two signatures for the same offer carry different nonces")
    func noncesAreFresh() throws {
        func nonce() throws -> String? {
            let jws = try JWS.decode(signer.sign(productId: "p", offerIdentifier: "o", transactionId: "t"))
            return (try JSONSerialization.jsonObject(with: Data(jws.payloadJSON)) as? [String: Any])?["nonce"] as? String
        }
        let first = try #require(try nonce())
        let second = try #require(try nonce())
        #expect(first != second)
    }

    @Test("another key's public half does not verify the signature")
    func otherKeyDoesNotVerify() throws {
        let jws = try JWS.decode(signer.sign(productId: "p", offerIdentifier: "o", transactionId: "t"))
        #expect(!jws.verify(with: ES256PrivateKey.generate().publicKey))
    }
}
