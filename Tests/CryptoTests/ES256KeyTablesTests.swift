@testable import Crypto
import Foundation
import Testing

@Suite("ES256 verification with a key's own table")
struct ES256KeyTablesTests {
    /// The order n of P-256, big-endian.
    static let order: [UInt8] = [
        0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
        0xBC, 0xE6, 0xFA, 0xAD, 0xA7, 0x17, 0x9E, 0x84, 0xF3, 0xB9, 0xCA, 0xC2, 0xFC, 0x63, 0x25, 0x51,
    ]

    /// Big-endian 256-bit arithmetic, wrapping: enough to make signatures just beside valid ones.
    static func add(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        var sum = [UInt8](repeating: 0, count: 32)
        var carry = 0
        for index in (0..<32).reversed() {
            let total = Int(a[index]) + Int(b[index]) + carry
            sum[index] = UInt8(total & 0xFF)
            carry = total >> 8
        }
        return sum
    }

    static func subtract(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        var difference = [UInt8](repeating: 0, count: 32)
        var borrow = 0
        for index in (0..<32).reversed() {
            var total = Int(a[index]) - Int(b[index]) - borrow
            borrow = total < 0 ? 1 : 0
            if total < 0 { total += 256 }
            difference[index] = UInt8(total)
        }
        return difference
    }

    static let one = [UInt8](repeating: 0, count: 31) + [1]
    static let zero = [UInt8](repeating: 0, count: 32)

    /// A valid signature and the signatures around it: its twin (r, n − s), which is valid too, and
    /// r or s off by one, zero, n, n + 1, all ones, swapped, and cut short or made longer.
    static func variants(of signature: [UInt8]) -> [[UInt8]] {
        let r = Array(signature[..<32])
        let s = Array(signature[32...])
        var variants = [signature, r + subtract(order, s)]
        for (value, other, first) in [(r, s, true), (s, r, false)] {
            for replaced in [add(value, one), subtract(value, one), zero, order, add(order, one), [UInt8](repeating: 0xFF, count: 32),
                             add(value, order)] {
                variants.append(first ? replaced + other : other + replaced)
            }
        }
        variants.append(s + r)
        variants.append(Array(signature.dropLast()))
        variants.append(signature + [0])
        var flipped = signature
        flipped[17] ^= 0x04
        variants.append(flipped)
        return variants
    }

    /// Checks every variant of `count` signatures by `key` with the key's table and with OpenSSL's
    /// own verification, over the signed message, a tampered one and edge-case digests.
    static func expectAgreement(key: ES256PrivateKey, other: ES256PrivateKey, count: Int) throws -> (valid: Int, invalid: Int) {
        let table = try #require(ES256KeyTable(key.publicKey))
        var valid = 0
        var invalid = 0
        func check(_ signature: [UInt8], _ message: [UInt8]) {
            var digest = message.withUnsafeBytes { SHA256Digest($0) }
            var again = digest
            let expected = key.publicKey.verify(signature: signature, digest: &digest)
            #expect(table.verify(signature: signature, digest: &again) == expected)
            if expected { valid += 1 } else { invalid += 1 }
        }
        for index in 0..<count {
            let message = Array("request \(index) \(UUID())".utf8)
            let signature = try key.sign(message)
            for variant in variants(of: signature) { check(variant, message) }
            var tampered = message
            tampered[index % tampered.count] ^= 0x20
            check(signature, tampered)
            check(try other.sign(message), message)
        }
        // Digests of zero, of n and of all ones reduce to edge values of e; no signature here is
        // valid for them, and both sides must say so.
        let signature = try key.sign(Array("edge".utf8))
        for edge in [zero, order, [UInt8](repeating: 0xFF, count: 32)] {
            var digest = SHA256Digest()
            digest.withMutableBytes { $0.copyBytes(from: edge) }
            var again = digest
            let expected = key.publicKey.verify(signature: signature, digest: &digest)
            #expect(table.verify(signature: signature, digest: &again) == expected)
            #expect(!expected)
        }
        return (valid, invalid)
    }

    @Test("a table agrees with OpenSSL's verification for random keys, on valid, tampered and out-of-range signatures")
    func agreesForRandomKeys() throws {
        var totals = (valid: 0, invalid: 0)
        for _ in 0..<16 {
            let counts = try Self.expectAgreement(key: .generate(), other: .generate(), count: 130)
            totals.valid += counts.valid
            totals.invalid += counts.invalid
        }
        // Each signature and its twin (r, n − s) are valid; everything else is not.
        #expect(totals.valid == 16 * 130 * 2)
        #expect(totals.invalid >= 16 * 130 * 18)
    }

    @Test("a table agrees with OpenSSL's verification for the emulator's leaf key")
    func agreesForTheEmulatorsLeaf() throws {
        let chain = try AppleStyleSigningChain(name: "retention-sync emulator")
        let counts = try Self.expectAgreement(key: chain.leafKey, other: chain.intermediateKey, count: 300)
        #expect(counts.valid == 600)
    }

    @Test("only good signatures count towards a table, and forged ones fail with it as without it")
    func forgedSignaturesBuildNothing() throws {
        let key = ES256PrivateKey.generate()
        let tables = ES256KeyTables(buildAfter: 3)
        let message = Array("payload".utf8)
        let good = try key.sign(message)
        var forged = good
        forged[40] ^= 0x01
        for _ in 0..<50 {
            #expect(!tables.verify(signature: forged, message: message, key: key.publicKey))
            #expect(!tables.verify(signature: try ES256PrivateKey.generate().sign(message), message: message, key: key.publicKey))
        }
        #expect(tables.tableCount == 0)
        #expect(tables.verify(signature: good, message: message, key: key.publicKey))
        #expect(tables.verify(signature: good, message: message, key: key.publicKey))
        #expect(tables.tableCount == 0)
        #expect(tables.verify(signature: good, message: message, key: key.publicKey))
        #expect(tables.tableCount == 1)
        #expect(tables.tableVerificationCount == 0)
        #expect(tables.verify(signature: good, message: message, key: key.publicKey))
        #expect(!tables.verify(signature: forged, message: message, key: key.publicKey))
        #expect(!tables.verify(signature: good, message: Array("other".utf8), key: key.publicKey))
        #expect(tables.tableVerificationCount == 3)
    }

    @Test("a table belongs to its key's bytes: another key never uses it, the same key read again does")
    func tablesAreKeyedByTheKeysBytes() throws {
        let key = ES256PrivateKey.generate()
        let other = ES256PrivateKey.generate()
        let tables = ES256KeyTables(buildAfter: 1)
        let message = Array("payload".utf8)
        #expect(tables.verify(signature: try key.sign(message), message: message, key: key.publicKey))
        #expect(tables.tableCount == 1)
        // The other key's signature, checked as if by the key that has a table, fails.
        #expect(!tables.verify(signature: try other.sign(message), message: message, key: key.publicKey))
        #expect(tables.tableVerificationCount == 1)
        // Checked by its own key, it passes without the table.
        #expect(tables.verify(signature: try other.sign(message), message: message, key: other.publicKey))
        #expect(tables.tableVerificationCount == 1)
        let reread = try ES256PublicKey(spkiDER: key.publicKey.spkiDER)
        #expect(tables.verify(signature: try key.sign(message), message: message, key: reread))
        #expect(tables.tableVerificationCount == 2)
    }

    @Test("at most `capacity` keys have tables; one gives its place up only when it has been idle")
    func boundedByCapacityAndIdleness() throws {
        let keys = (0..<3).map { _ in ES256PrivateKey.generate() }
        let message = Array("payload".utf8)
        let busy = ES256KeyTables(capacity: 2, buildAfter: 1, idleBeforeReplacing: .seconds(3600))
        for key in keys {
            #expect(busy.verify(signature: try key.sign(message), message: message, key: key.publicKey))
        }
        #expect(busy.tableCount == 2)
        #expect(busy.verify(signature: try keys[2].sign(message), message: message, key: keys[2].publicKey))
        #expect(busy.tableVerificationCount == 0)

        let idle = ES256KeyTables(capacity: 2, buildAfter: 1, idleBeforeReplacing: .zero)
        for key in keys {
            #expect(idle.verify(signature: try key.sign(message), message: message, key: key.publicKey))
        }
        #expect(idle.tableCount == 2)
        #expect(idle.verify(signature: try keys[2].sign(message), message: message, key: keys[2].publicKey))
        #expect(idle.tableVerificationCount == 1)
    }

    @Test("many threads verifying with one table all get the right answers")
    func concurrentVerification() async throws {
        let key = ES256PrivateKey.generate()
        let tables = ES256KeyTables(buildAfter: 1)
        let messages = (0..<64).map { Array("message \($0)".utf8) }
        let signatures = try messages.map { try key.sign($0) }
        #expect(tables.verify(signature: signatures[0], message: messages[0], key: key.publicKey))
        let wrong = await withTaskGroup(of: Int.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    var wrong = 0
                    for index in 0..<64 {
                        let good = tables.verify(signature: signatures[index], message: messages[index], key: key.publicKey)
                        let bad = tables.verify(signature: signatures[(index + worker + 1) % 64], message: messages[index],
                                                key: key.publicKey)
                        if !good || bad { wrong += 1 }
                    }
                    return wrong
                }
            }
            return await group.reduce(0, +)
        }
        #expect(wrong == 0)
        #expect(tables.tableVerificationCount == 8 * 64 * 2)
    }
}
