import Basics
import Crypto
import Foundation
import RetentionMessagingModels
@testable import Runtime
import Testing

@Suite("Promotional offer signature: the exact bytes")
struct PromotionalOfferBytesTests {
    static let tricky = ["", "com.example.monthly", "quote \" backslash \\ slash /", "line\nbreak\t\u{01}\u{1F}", "é 😀 \u{2028}"]

    @Test("the header and claims written directly are CanonicalJSON's bytes, whatever the text")
    func bytesMatchCanonicalJSON() throws {
        for text in Self.tricky {
            let claims = PromotionalOfferSigner.Claims(iss: text, iat: 1_780_000_000, aud: "promotional-offer", bid: text,
                                                       nonce: text, productId: text, offerIdentifier: text, transactionId: text)
            #expect(claims.canonicalJSON == Array(try CanonicalJSON.encode(claims)))

            let key = ES256PrivateKey.generate()
            let signer = PromotionalOfferSigner(keyId: text, issuerId: text, bundleId: text, privateKey: key,
                                                clock: VirtualClock(start: -1.5))
            let jws = try JWS.decode(signer.sign(productId: text, offerIdentifier: text, transactionId: text))
            #expect(jws.verify(with: key.publicKey))
            #expect(jws.headerJSON == Array(try CanonicalJSON.encode(JWSHeader(alg: "ES256", kid: text, typ: "JWT"))))
            let nonce = try #require((try JSONSerialization.jsonObject(with: Data(jws.payloadJSON)) as? [String: Any])?["nonce"] as? String)
            let expected = PromotionalOfferSigner.Claims(iss: text, iat: -2, aud: "promotional-offer", bid: text, nonce: nonce,
                                                         productId: text, offerIdentifier: text, transactionId: text)
            #expect(jws.payloadJSON == Array(try CanonicalJSON.encode(expected)))
        }
    }
}
