@testable import Crypto
import Testing

@Suite("The realtime path's hashing and signature encoding")
struct ServePathHashingTests {
    @Test("a SHA-256 state resumed from a copy gives the digest of the whole message, at every split")
    func resumedStateMatchesOneShot() {
        let message = CryptoRandom.bytes(300)
        for split in [0, 1, 63, 64, 65, 128, 200, 300] {
            var prefix = SHA256State()
            prefix.update(message[..<split])
            var resumed = prefix
            resumed.update(message[split...])
            #expect(resumed.digest() == Digest.sha256(message))
            // The prefix is untouched by the copy, and by taking a digest.
            _ = prefix.digest()
            var again = prefix
            again.update(message[split...])
            #expect(again.digest() == Digest.sha256(message))
        }
    }

    @Test("a signature checked over a hashed prefix and the rest verifies exactly as over the whole message")
    func verifyWithHashedPrefix() throws {
        let key = ES256PrivateKey.generate()
        let message = Array("eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0".utf8)
        let signature = try key.sign(message)
        let dot = message.firstIndex(of: UInt8(ascii: "."))!
        var prefix = SHA256State()
        prefix.update(message[...dot])
        #expect(key.publicKey.verify(signature: signature, hashedPrefix: prefix, rest: message[(dot + 1)...]))
        var tampered = message
        tampered[tampered.count - 1] ^= 1
        #expect(!key.publicKey.verify(signature: signature, hashedPrefix: prefix, rest: tampered[(dot + 1)...]))
        var otherPrefix = SHA256State()
        otherPrefix.update(Array("eyJhbGciOiJIUzI1NiJ9.".utf8)[...])
        #expect(!key.publicKey.verify(signature: signature, hashedPrefix: otherPrefix, rest: message[(dot + 1)...]))
    }

    @Test("random UUIDs are lowercase version 4 with the RFC 9562 variant, and differ")
    func randomUUIDs() {
        let made = (0..<200).map { _ in CryptoRandom.uuid() }
        for uuid in made {
            let bytes = UUIDv5.parse(uuid)
            #expect(bytes != nil && uuid == uuid.lowercased(), "\(uuid)")
            #expect((bytes?[6] ?? 0) >> 4 == 4 && (bytes?[8] ?? 0) >> 6 == 2, "\(uuid)")
        }
        #expect(Set(made).count == made.count)
    }

    @Test("the direct DER encoding of r || s is byte for byte OpenSSL's, leading zeros and high bits included")
    func derMatchesOpenSSL() {
        var cases: [[UInt8]] = [
            [UInt8](repeating: 0, count: 64),
            [UInt8](repeating: 0xff, count: 64),
            [UInt8](repeating: 0, count: 31) + [1] + [UInt8](repeating: 0, count: 31) + [0x80],
            [0x80] + [UInt8](repeating: 0, count: 63),
            [0, 0x7f] + [UInt8](repeating: 0xaa, count: 30) + [0, 0, 0x80] + [UInt8](repeating: 1, count: 29),
        ]
        for _ in 0..<5_000 {
            var raw = CryptoRandom.bytes(64)
            // Zero a random number of leading bytes of either half, as one signature in 256 has one.
            let zeros = Int(raw[0] % 4)
            for index in 0..<zeros { raw[index] = 0 }
            for index in 32..<(32 + Int(raw[1] % 4)) { raw[index] = 0 }
            cases.append(raw)
        }
        for raw in cases {
            #expect(ECDSASignature.der(fromRaw: raw) == ECDSASignature.derThroughOpenSSL(fromRaw: raw))
        }
        #expect(ECDSASignature.der(fromRaw: [UInt8](repeating: 1, count: 63)) == nil)
    }
}
