import EventStore
import EventContract
import Foundation
import Testing

@Suite("The keyed pseudonym of a customer")
struct PseudonymKeyTests {
    static let secret = "5f2b8c1d9e7a4036b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e"

    @Test("every replica and job with the same secret gives a customer the same pseudonym and key id; another secret gives others")
    func sameSecretSamePseudonym() throws {
        let replicaA = try PseudonymKey(secret: Self.secret)
        let replicaB = try PseudonymKey(secret: Self.secret + "\n")
        #expect(replicaA.pseudonym("2000000123456789") == replicaB.pseudonym("2000000123456789"))
        #expect(replicaA.keyId == replicaB.keyId)
        #expect(replicaA.keyId.count == 8)
        let rotated = try PseudonymKey(secret: String(Self.secret.reversed()))
        #expect(rotated.keyId != replicaA.keyId)
        #expect(rotated.pseudonym("2000000123456789") != replicaA.pseudonym("2000000123456789"))
        let pseudonym = replicaA.pseudonym("2000000123456789")
        #expect(pseudonym.count == 64 && pseudonym.allSatisfy { $0.isHexDigit })
        #expect(!pseudonym.contains("2000000123456789"))
    }

    @Test("a short secret is refused with how to make a good one, and the secret is never printed")
    func shortSecretRefused() throws {
        #expect(throws: PseudonymKey.Refusal.self) { try PseudonymKey(secret: "hunter2") }
        do {
            _ = try PseudonymKey(secret: "hunter2")
        } catch {
            #expect(error.description.contains("openssl rand -hex 32"))
            #expect(!error.description.contains("hunter2"))
        }
        #expect(!"\(try PseudonymKey(secret: Self.secret))".contains(Self.secret.prefix(12)))
        #expect(try PseudonymKey.fromEnvironment([:]) == nil)
        #expect(try PseudonymKey.fromEnvironment([PseudonymKey.environmentVariable: Self.secret])?.keyId == (try PseudonymKey(secret: Self.secret)).keyId)
    }

    @Test("the secret read from the file RETENTION_SYNC_PSEUDONYM_SECRET_FILE names (a mounted Kubernetes secret) makes the same pseudonyms")
    func secretFromAFile() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("pseudonym-\(UUID().uuidString)")
        try (Self.secret + "\n").write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let fromFile = try #require(try PseudonymKey.fromEnvironment([PseudonymKey.environmentVariable + "_FILE": file.path]))
        #expect(fromFile.keyId == (try PseudonymKey(secret: Self.secret)).keyId)
        #expect(fromFile.pseudonym("2000000123456789") == (try PseudonymKey(secret: Self.secret)).pseudonym("2000000123456789"))
        #expect {
            try PseudonymKey.fromEnvironment([PseudonymKey.environmentVariable: Self.secret, PseudonymKey.environmentVariable + "_FILE": file.path])
        } throws: { error in
            let text = "\(error)"
            return text.contains("keep only one") && !text.contains(Self.secret)
        }
    }
}

@Suite("Event lines")
struct EventLineTests {
    @Test("serve's member-by-member decision line is the generic encoder's, byte for byte, escapes and nulls included")
    func decisionLineMatchesEncoder() {
        let facts = [
            DecisionFacts(time: 1_795_000_000_123, environment: "production", requestIdentifier: "r-\"1\"\n", customer: String(repeating: "ab", count: 32),
                          keyId: "0badc0de", productId: "com.example.monthly", localeRequested: "de-AT", localeServed: "de-DE", flow: "cancel",
                          rule: "arm-a", splitGroup: "upsell", splitControl: true, answer: .message, messageIdentifier: "m\\1",
                          offerIdentifier: nil, alternateProductId: nil, snapshot: "sha256:00", latencyMicros: 812),
            DecisionFacts(time: 0, environment: "sandbox", requestIdentifier: nil, customer: nil, keyId: "k", productId: nil,
                          localeRequested: nil, localeServed: nil, flow: nil, rule: nil, splitGroup: nil, splitControl: false,
                          answer: .refused, messageIdentifier: nil, offerIdentifier: nil, alternateProductId: nil, snapshot: nil, latencyMicros: 0),
            DecisionFacts(time: -1, environment: "production", requestIdentifier: "r", customer: "c", keyId: "k", productId: "p",
                          localeRequested: "ja", localeServed: "ja", flow: "f", rule: "r", splitGroup: nil, splitControl: false,
                          answer: .alternateProduct, messageIdentifier: "m", offerIdentifier: "o\u{1}", alternateProductId: "é",
                          snapshot: "s", latencyMicros: 9_223_372_036_854_775_807),
        ]
        for fact in facts {
            #expect(fact.record(eventId: "e").line == fact.recordByDictionary(eventId: "e").line)
        }
        // The digit-by-digit timestamp is the formatted one, across centuries, leap days and negative times.
        var value: Int64 = -62_135_596_800_000
        while value < 253_402_300_799_000 {
            #expect(EventTime.format(value) == EventTime.legacyFormatForTests(value))
            value += 7_777_777_777_777
        }
        #expect(EventTime.format(951_782_400_123) == "2000-02-29T00:00:00.123Z")
        let id = EventLine.newEventId()
        #expect(id.count == 36 && Array(id)[14] == "4" && "89ab".contains(Array(id)[19]) && id == id.lowercased())
        #expect(UUID(uuidString: id) != nil)
        #expect(Set((0..<10_000).map { _ in EventLine.newEventId() }).count == 10_000)
    }
}
