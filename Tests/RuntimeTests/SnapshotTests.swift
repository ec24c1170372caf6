import Foundation
import RetentionMessagingModels
import Runtime
import Testing

@Suite("Runtime snapshot")
struct SnapshotTests {
    @Test("a sealed snapshot carries the SHA-256 of its canonical JSON and loads back unchanged")
    func sealAndLoad() throws {
        let sealed = try sampleSnapshot.sealed()
        #expect(sealed.digest.hasPrefix("sha256:"))
        #expect(sealed.digest.count == "sha256:".count + 64)
        var unsealed = sealed
        unsealed.digest = ""
        #expect(unsealed == sampleSnapshot)
        let data = try sealed.encoded()
        #expect(data.last == UInt8(ascii: "\n"))
        #expect(try RuntimeSnapshot.load(from: data) == sealed)
        #expect(try sealed.sealed() == sealed)
    }

    @Test("the committed sample snapshot is the sealed sample flow, byte for byte")
    func committedSnapshotIsCanonical() throws {
        let expected = try sampleSnapshot.sealed().encoded()
        let url = RuntimeFixtures.url("snapshot.json")
        if ProcessInfo.processInfo.environment["RETENTION_SYNC_UPDATE_FIXTURES"] == "1" {
            try expected.write(to: url)
        }
        #expect(try Data(contentsOf: url) == expected)
        #expect(try RuntimeSnapshot.load(contentsOf: url) == sampleSnapshot.sealed())
    }

    @Test("a snapshot edited after sealing is refused with both digests")
    func editedByteIsRefused() throws {
        let sealed = try sampleSnapshot.sealed()
        let text = String(decoding: try sealed.encoded(), as: UTF8.self)
        let edited = text.replacingOccurrences(of: "de-winback-50", with: "de-winback-90")
        #expect(edited != text)
        #expect(throws: SnapshotError.self) { try RuntimeSnapshot.load(from: Data(edited.utf8)) }
        do {
            _ = try RuntimeSnapshot.load(from: Data(edited.utf8))
        } catch {
            guard case .digestMismatch(let expected, let actual) = error else {
                Issue.record("expected a digest mismatch, got \(error)")
                return
            }
            #expect(expected == sealed.digest)
            #expect(actual != sealed.digest)
            #expect(error.description.contains("corrupt"))
        }
    }

    @Test("a snapshot from another schema version is refused before anything else is read")
    func wrongSchemaVersionIsRefused() throws {
        var future = sampleSnapshot
        future.schemaVersion = 2
        let data = try future.sealed().encoded()
        #expect(throws: SnapshotError.unsupportedSchemaVersion(2)) { try RuntimeSnapshot.load(from: data) }
        let bare = Data(#"{"schemaVersion": 7, "somethingNew": true}"#.utf8)
        #expect(throws: SnapshotError.unsupportedSchemaVersion(7)) { try RuntimeSnapshot.load(from: bare) }
    }

    @Test("bytes that are not a snapshot are unreadable, naming what is missing")
    func garbageIsUnreadable() {
        #expect(throws: SnapshotError.self) { try RuntimeSnapshot.load(from: Data("not json".utf8)) }
        do {
            _ = try RuntimeSnapshot.load(from: Data(#"{"schemaVersion": 1}"#.utf8))
            Issue.record("a snapshot without rules loaded")
        } catch {
            guard case .unreadable(let reason) = error else {
                Issue.record("expected unreadable, got \(error)")
                return
            }
            #expect(reason.contains("missing"))
        }
        let missing = URL(fileURLWithPath: "/nonexistent/snapshot.json")
        #expect { try RuntimeSnapshot.load(contentsOf: missing) } throws: { error in
            guard case SnapshotError.unreadable(let reason) = error else { return false }
            return reason.contains("/nonexistent/snapshot.json")
        }
    }

    enum Malformation: String, CaseIterable, Sendable {
        case duplicateId, splitPast10000, emptySplit, messageWithoutIdentifiers, offerWithoutOfferIdentifier,
             alternateWithoutProduct, identifierNotUUID, emptyWindow, advancedCommerceWithoutChange

        func apply(to snapshot: inout RuntimeSnapshot) {
            switch self {
            case .duplicateId: snapshot.rules[1].id = snapshot.rules[0].id
            case .splitPast10000: snapshot.rules[4].match.split?.upperBucket = 10_001
            case .emptySplit: snapshot.rules[4].match.split?.lowerBucket = 5000
            case .messageWithoutIdentifiers: snapshot.rules[2].response.messageIdentifiers = nil
            case .offerWithoutOfferIdentifier: snapshot.rules[1].response.offerIdentifier = nil
            case .alternateWithoutProduct: snapshot.rules[0].response.productId = nil
            case .identifierNotUUID: snapshot.rules[7].response.messageIdentifiers?["en-US"] = "generic"
            case .emptyWindow: snapshot.rules[2].match.notAfter = snapshot.rules[2].match.notBefore
            case .advancedCommerceWithoutChange: snapshot.rules[1].response.kind = .advancedCommerce
            }
        }

        var expectedReason: String {
            switch self {
            case .duplicateId: "rule winback/yearly-to-monthly appears twice"
            case .splitPast10000: "rule price-test/a: its split range [0, 10001)"
            case .emptySplit: "rule price-test/a: its split range [5000, 5000) is not a non-empty range"
            case .messageWithoutIdentifiers: "rule seasonal/holiday: a message response needs messageIdentifiers"
            case .offerWithoutOfferIdentifier: "rule winback/german-offer: a promotionalOffer response needs an offerIdentifier"
            case .alternateWithoutProduct: "rule winback/yearly-to-monthly: an alternateProduct response needs a productId"
            case .identifierNotUUID: "rule generic/any: the message identifier for en-US is not a UUID"
            case .emptyWindow: "rule seasonal/holiday: its time window is empty"
            case .advancedCommerceWithoutChange: "rule winback/german-offer: an advancedCommerce response needs the change it recommends"
            }
        }
    }

    @Test("a sealed snapshot with a malformed rule is refused, naming the rule", arguments: Malformation.allCases)
    func malformedRulesAreRefused(_ malformation: Malformation) throws {
        var snapshot = sampleSnapshot
        malformation.apply(to: &snapshot)
        let data = try snapshot.sealed().encoded()
        #expect { try RuntimeSnapshot.load(from: data) } throws: { error in
            guard case SnapshotError.invalid(let reason) = error else { return false }
            return reason.hasPrefix(malformation.expectedReason)
        }
    }
}
