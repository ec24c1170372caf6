import Crypto
import Foundation
import Testing

@Suite("JWS compact serialization")
struct JWSTests {
    @Test("a signed JWS decodes to the same header and payload and verifies with the key")
    func signDecodeVerify() throws {
        let key = ES256PrivateKey.generate()
        let header = Array(#"{"alg":"ES256","kid":"ABC123","typ":"JWT"}"#.utf8)
        let payload = Array(#"{"aud":"appstoreconnect-v1","iss":"issuer"}"#.utf8)
        let compact = try JWS.sign(headerJSON: header, payloadJSON: payload, key: key)
        #expect(compact.split(separator: ".").count == 3)
        #expect(!compact.contains("="))

        let decoded = try JWS.decode(compact)
        #expect(decoded.header == JWSHeader(alg: "ES256", kid: "ABC123", typ: "JWT"))
        #expect(decoded.headerJSON == header)
        #expect(decoded.payloadJSON == payload)
        #expect(decoded.signature.count == 64)
        #expect(String(decoding: decoded.signingInput, as: UTF8.self) == compact.split(separator: ".").prefix(2).joined(separator: "."))
        #expect(decoded.verify(with: key.publicKey))
        #expect(!decoded.verify(with: ES256PrivateKey.generate().publicKey))
    }

    @Test("signing with a header value writes its fields as sorted-key JSON and omits absent ones")
    func signWithHeaderValue() throws {
        let key = ES256PrivateKey.generate()
        let compact = try JWS.sign(header: JWSHeader(alg: "ES256", kid: "K1", typ: "JWT"), payloadJSON: Array("{}".utf8), key: key)
        let decoded = try JWS.decode(compact)
        #expect(String(decoding: decoded.headerJSON, as: UTF8.self) == #"{"alg":"ES256","kid":"K1","typ":"JWT"}"#)
        #expect(decoded.verify(with: key.publicKey))
    }

    @Test("a JWS whose header names another algorithm does not verify")
    func otherAlgorithmFails() throws {
        let key = ES256PrivateKey.generate()
        let compact = try JWS.sign(headerJSON: Array(#"{"alg":"none"}"#.utf8), payloadJSON: Array("{}".utf8), key: key)
        #expect(!(try JWS.decode(compact).verify(with: key.publicKey)))
    }

    @Test("the x5c header field decodes as a list of certificates")
    func x5cHeader() throws {
        let key = ES256PrivateKey.generate()
        let compact = try JWS.sign(headerJSON: Array(#"{"alg":"ES256","x5c":["MIIB","MIIC"]}"#.utf8), payloadJSON: Array("{}".utf8), key: key)
        #expect(try JWS.decode(compact).header.x5c == ["MIIB", "MIIC"])
    }

    @Test("malformed compact JWS strings are refused with the reason")
    func malformedRefused() {
        #expect(throws: CryptoError.invalidInput("a compact JWS has three dot-separated parts; this has 2")) {
            try JWS.decode("abc.def")
        }
        #expect(throws: CryptoError.invalidInput("the JWS payload is not base64url")) {
            try JWS.decode("eyJhbGciOiJFUzI1NiJ9.a+b.c")
        }
        #expect(throws: CryptoError.invalidInput("the JWS header is not a JSON object with a string 'alg'")) {
            try JWS.decode(Base64URL.encode(Array("[1]".utf8)) + ".e30.AA")
        }
    }
}
