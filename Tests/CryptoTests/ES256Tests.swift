import Crypto
import Foundation
import Testing

@Suite("ES256 keys and signatures")
struct ES256Tests {
    @Test("2,000 signatures with one key all verify, including ones whose r or s starts with a zero byte")
    func signVerifyRoundTrips() throws {
        let key = ES256PrivateKey.generate()
        let publicKey = key.publicKey
        var leadingZeros = 0
        for index in 0..<2_000 {
            let message = Array("message \(index)".utf8)
            let signature = try key.sign(message)
            #expect(signature.count == 64)
            if signature[0] == 0 || signature[32] == 0 { leadingZeros += 1 }
            #expect(publicKey.verify(signature: signature, message: message))
        }
        #expect(leadingZeros > 0)
    }

    @Test("a flipped bit in the message or the signature fails verification")
    func flippedBitFails() throws {
        let key = ES256PrivateKey.generate()
        let message = Array("retention message".utf8)
        let signature = try key.sign(message)
        var badMessage = message
        badMessage[3] ^= 0x01
        var badSignature = signature
        badSignature[40] ^= 0x80
        #expect(key.publicKey.verify(signature: signature, message: message))
        #expect(!key.publicKey.verify(signature: signature, message: badMessage))
        #expect(!key.publicKey.verify(signature: badSignature, message: message))
    }

    @Test("a signature that is not 64 bytes does not verify")
    func wrongLengthFails() throws {
        let key = ES256PrivateKey.generate()
        let message = Array("m".utf8)
        let signature = try key.sign(message)
        #expect(!key.publicKey.verify(signature: Array(signature.dropLast()), message: message))
        #expect(!key.publicKey.verify(signature: signature + [0], message: message))
        #expect(!key.publicKey.verify(signature: [], message: message))
    }

    @Test("another key's signature does not verify")
    func otherKeyFails() throws {
        let message = Array("m".utf8)
        let signature = try ES256PrivateKey.generate().sign(message)
        #expect(!ES256PrivateKey.generate().publicKey.verify(signature: signature, message: message))
    }

    @Test("the RFC 7515 appendix A.3 ES256 example verifies with its JWK coordinates")
    func rfc7515ExampleVerifies() throws {
        let x = try #require(Base64URL.decode("f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU"))
        let y = try #require(Base64URL.decode("x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"))
        let key = try ES256PublicKey(x: x, y: y)
        let compact = "eyJhbGciOiJFUzI1NiJ9"
            + ".eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"
            + ".DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q"
        let decoded = try JWS.decode(compact)
        #expect(decoded.header.alg == "ES256")
        #expect(decoded.verify(with: key))
        var tampered = decoded
        tampered.payloadJSON = Array("{}".utf8)
        tampered.signingInput[25] ^= 0x01
        #expect(!tampered.verify(with: key))
    }

    @Test("coordinates that are not on P-256 are refused")
    func offCurveCoordinatesRefused() {
        #expect(throws: CryptoError.self) { try ES256PublicKey(x: [UInt8](repeating: 1, count: 32), y: [UInt8](repeating: 2, count: 32)) }
        #expect(throws: CryptoError.self) { try ES256PublicKey(x: [1], y: [2]) }
    }

    @Test("a .p8 key loads from a file and from a string, and signs for its certificate's key")
    func p8Loads() throws {
        let fromFile = try ES256PrivateKey(contentsOfFile: Fixtures.path("AuthKey_TEST000001.p8"))
        let fromString = try ES256PrivateKey(pem: try Fixtures.text("AuthKey_TEST000001.p8"))
        #expect(fromFile.publicKey.spkiPEM == fromString.publicKey.spkiPEM)
        let certificate = try #require(X509Certificate.load(contentsOfFile: Fixtures.path("leaf.pem")).first)
        let certificateKey = try #require(certificate.publicKey)
        let message = Array("hello".utf8)
        #expect(certificateKey.verify(signature: try fromString.sign(message), message: message))
    }

    @Test("a generated key exports as PKCS#8 PEM and SPKI, and both load back")
    func generatedKeyExports() throws {
        let key = ES256PrivateKey.generate()
        let pem = key.pkcs8PEM
        #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        let reloaded = try ES256PrivateKey(pem: pem)
        #expect(reloaded.publicKey.spkiPEM == key.publicKey.spkiPEM)
        #expect(key.publicKey.spkiPEM.hasPrefix("-----BEGIN PUBLIC KEY-----"))
        let fromPEM = try ES256PublicKey(pem: key.publicKey.spkiPEM)
        let fromDER = try ES256PublicKey(spkiDER: key.publicKey.spkiDER)
        let message = Array("m".utf8)
        let signature = try reloaded.sign(message)
        #expect(fromPEM.verify(signature: signature, message: message))
        #expect(fromDER.verify(signature: signature, message: message))
    }

    @Test("an RSA key, a P-384 key or garbage is refused with a clear error that does not echo the input")
    func wrongKeysRefused() throws {
        let inputs = [
            try Fixtures.text("rsa.p8"),
            try Fixtures.text("p384.p8"),
            "-----BEGIN PRIVATE KEY-----\nU0VDUkVUIGdhcmJhZ2UgU0VDUkVU\n-----END PRIVATE KEY-----\n",
            "SECRET-not-a-key-SECRET",
        ]
        let expected = ["not an elliptic-curve key", "ES256 needs P-256", "not a PEM private key", "not a PEM private key"]
        for (input, fragment) in zip(inputs, expected) {
            do {
                _ = try ES256PrivateKey(pem: input)
                Issue.record("a key that is not EC P-256 was accepted")
            } catch {
                let message = error.description
                #expect(message.contains(fragment), "\(message)")
                #expect(!message.contains("SECRET"))
                let body = input.split(separator: "\n").dropFirst().first.map(String.init) ?? input
                #expect(!message.contains(body.prefix(16)))
            }
        }
    }

    @Test("a passphrase-protected key is refused instead of prompting for a passphrase")
    func encryptedKeyRefused() throws {
        #expect(throws: CryptoError.self) { try ES256PrivateKey(contentsOfFile: Fixtures.path("encrypted.p8")) }
    }

    @Test("a missing .p8 file is reported by path")
    func missingFileNamed() {
        #expect(throws: CryptoError.invalidKey("cannot read key file '/nonexistent/AuthKey.p8'")) {
            try ES256PrivateKey(contentsOfFile: "/nonexistent/AuthKey.p8")
        }
    }
}
