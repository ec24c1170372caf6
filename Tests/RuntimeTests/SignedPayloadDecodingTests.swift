import Basics
import Crypto
import Foundation
import RetentionMessagingModels
import Runtime
import Testing

@Suite("Apple's signed payload: JSON shapes")
struct SignedPayloadDecodingTests {
    let pki: TestPKI
    let verifier: SignedPayloadVerifier

    init() throws {
        pki = try TestPKI()
        verifier = SignedPayloadVerifier(trustedRoots: [pki.root], appAppleId: appAppleId, environment: .production, clock: SystemClock())
    }

    func signed(_ payloadJSON: String) throws -> String {
        let header = JWSHeader(alg: "ES256", x5c: pki.chain.map { Base64.encode($0.der) })
        return try JWS.sign(headerJSON: Array(try CanonicalJSON.encode(header)), payloadJSON: Array(payloadJSON.utf8), key: pki.leafKey)
    }

    @Test("escapes, spacing, extra members and any key order decode as JSONDecoder reads them")
    func unusualButValidPayloads() throws {
        let date = ms("2026-06-01T12:00:00Z")
        let payloads = [
            #"{"appAppleId":1234567890,"environment":"Production","originalTransactionId":"2000000000000001","productId":"com.example.monthly","requestIdentifier":"r-1","signedDate":\#(date),"userLocale":"en-US"}"#,
            #" { "userLocale" : "en-US", "signedDate" : \#(date), "requestIdentifier" : "r\/1", "productId" : "com.example.monthly", "originalTransactionId" : "2000000000000001", "environment" : "Production", "appAppleId" : 1234567890, "future" : {"field": [true, null]} } "#,
            #"{"appAppleId":1234567890,"environment":"Production","originalTransactionId":"2000000000000001","productId":"com.example.m\u006fnthly","requestIdentifier":"r-1","signedDate":\#(date),"userLocale":"en-US"}"#,
        ]
        for payload in payloads {
            let decoded = try verifier.verify(signedPayload: signed(payload))
            #expect(decoded.productId == monthly)
            #expect(decoded.signedDate == date)
            #expect(decoded.appAppleId == appAppleId)
            #expect(decoded.requestIdentifier.hasPrefix("r"))
        }
    }

    @Test("a payload with a missing member or a wrong type is malformed")
    func malformedPayloads() throws {
        let date = ms("2026-06-01T12:00:00Z")
        let payloads = [
            #"{"appAppleId":1234567890,"environment":"Production","originalTransactionId":"2000000000000001","productId":"com.example.monthly","requestIdentifier":"r-1","userLocale":"en-US"}"#,
            #"{"appAppleId":1234567890,"environment":"Production","originalTransactionId":2000000000000001,"productId":"com.example.monthly","requestIdentifier":"r-1","signedDate":\#(date),"userLocale":"en-US"}"#,
            #"{"appAppleId":"1234567890","environment":"Production","originalTransactionId":"2000000000000001","productId":"com.example.monthly","requestIdentifier":"r-1","signedDate":\#(date),"userLocale":"en-US"}"#,
            #"{"appAppleId":1234567890,"environment":"Production","originalTransactionId":"2000000000000001","productId":"com.example.monthly","requestIdentifier":"r-1","signedDate":1.5,"userLocale":"en-US"}"#,
            "not json",
        ]
        for payload in payloads {
            #expect {
                try verifier.verify(signedPayload: signed(payload))
            } throws: { error in
                guard case .malformed(let reason) = error as? SignedPayloadError else { return false }
                return reason.hasPrefix("the payload is not a DecodedRealtimeRequestBody")
            }
        }
    }
}
