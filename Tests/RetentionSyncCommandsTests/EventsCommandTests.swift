import CLIKit
@testable import CommandTestSupport
import EventContract
import EventStore
import Foundation
import RetentionMessagingModels
import RetentionSyncCommands
import Testing
import TestSupport

@Suite("retention-sync events erase")
struct EventsCommandTests {
    static let secret = "0123456789abcdef0123456789abcdef0123456789abcdef"
    static let environment = [PseudonymKey.environmentVariable: secret]
    static let events = "manifests/.retention-sync/events/v1"

    /// Two customers' decisions and outcomes beside the example App's sandbox state, in several
    /// segments, the first customer's lines mixed with the second's.
    private func writeEvents(_ harness: CommandHarness) throws -> PseudonymKey {
        let pseudonyms = try PseudonymKey(secret: Self.secret)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        var lines: [(time: Int64, stream: String, line: String)] = []
        for (index, transaction) in ["2000000000000001", "2000000000000002"].enumerated() {
            for round in 0 ..< 3 {
                let time = now - Int64(3 - round) * 3_600_000 + Int64(index)
                var facts = OutcomeFacts(time: time, environment: "sandbox", notificationUUID: UUID().uuidString, notificationType: "DID_RENEW",
                                         subtype: nil, customer: pseudonyms.pseudonym(transaction), keyId: pseudonyms.keyId,
                                         productId: "com.example.stillpoint.monthly", autoRenewProductId: "com.example.stillpoint.monthly",
                                         autoRenewStatus: 1, offerType: nil, offerIdentifier: nil, price: 4990, currency: "EUR",
                                         effectiveDate: time, expiresDate: nil, source: .push)
                facts.storefront = index == 0 ? "DEU" : "USA"
                facts.purchaseDate = time
                lines.append((time, "outcomes", String(decoding: facts.record().line, as: UTF8.self)))
                let decision = #"{"answer":"message","customer":"\#(pseudonyms.pseudonym(transaction))","environment":"sandbox","eventId":"\#(UUID().uuidString.lowercased())","flow":"cancel-flow","keyId":"\#(pseudonyms.keyId)","rule":"r","time":"\#(EventTime.format(time + 1))","type":"decision"}"#
                lines.append((time + 1, "decisions", decision))
            }
        }
        for (index, entry) in lines.enumerated() {
            let (date, hour) = EventTime.partition(entry.time)
            let folder = harness.file("\(Self.events)/\(entry.stream)/environment=sandbox/date=\(date)/hour=\(hour)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let file = folder.appendingPathComponent("serve-a-\(index % 2).ndjson")
            let before = (try? Data(contentsOf: file)) ?? Data()
            try (before + Data((entry.line + "\n").utf8)).write(to: file)
        }
        return pseudonyms
    }

    private func segments(_ harness: CommandHarness) throws -> [URL] {
        let walker = FileManager.default.enumerator(at: harness.file(Self.events), includingPropertiesForKeys: nil)
        return (walker?.allObjects as? [URL] ?? []).filter { $0.pathExtension == "ndjson" }
    }

    @Test("erasing a customer by original transaction id removes every event of theirs and their facts, keeps everyone else's, and prints no id")
    func eraseByTransactionId() async throws {
        let harness = try CommandHarness()
        let pseudonyms = try writeEvents(harness)
        let published = await harness.run(["facts", "publish", "--env", "sandbox"], environment: Self.environment)
        #expect(published.code == .success && published.stdout.contains("2 customer(s)"), "\(published.stdout)\(published.stderr)")
        let erased = pseudonyms.pseudonym("2000000000000001"), kept = pseudonyms.pseudonym("2000000000000002")
        let linesBefore = try segments(harness).reduce(0) { $0 + (try String(contentsOf: $1, encoding: .utf8)).split(separator: "\n").count }

        try "# a deletion request\n2000000000000001\n".write(to: harness.file("erase.txt"), atomically: true, encoding: .utf8)
        let run = await harness.run(["events", "erase", "--env", "sandbox", "--customers", "erase.txt"], environment: Self.environment)
        #expect(run.code == .success, "\(run.stderr)")
        #expect(run.stdout.contains("1 customer(s); 6 event(s) removed"), "\(run.stdout)")
        #expect(run.stdout.contains("facts table published again without them: 1 customer(s)"), "\(run.stdout)")
        #expect(!(run.stdout + run.stderr).contains("2000000000000001"))

        var linesAfter = 0
        for segment in try segments(harness) {
            let text = try String(contentsOf: segment, encoding: .utf8)
            #expect(!text.contains(erased), "\(segment.lastPathComponent) still holds the erased customer")
            linesAfter += text.split(separator: "\n").count
        }
        #expect(linesAfter == linesBefore - 6)
        let facts = await harness.run(["facts", "show", "--env", "sandbox", "--format", "jsonl"], environment: Self.environment)
        let factLines = facts.stdout.split(separator: "\n")
        #expect(factLines.count == 1 && factLines[0].contains(String(kept.prefix(20))), "\(facts.stdout)")
        // No table that still holds them is left beside the new one.
        let tables = try FileManager.default.contentsOfDirectory(atPath: harness.file("manifests/.retention-sync/facts/v1/environment=sandbox").path)
            .filter { $0.hasPrefix("table-") }
        for table in tables {
            let bytes = try Data(contentsOf: harness.file("manifests/.retention-sync/facts/v1/environment=sandbox/\(table)"))
            #expect(bytes.range(of: Data(erased.prefix(20).utf8)) == nil)
        }

        // Erasing again finds nothing more and changes nothing.
        let again = await harness.run(["events", "erase", "--env", "sandbox", "--customers", "erase.txt"], environment: Self.environment)
        #expect(again.code == .success && again.stdout.contains("0 event(s) removed from 0 segment(s)"), "\(again.stdout)")
    }

    @Test("events erase takes pseudonyms without the secret, and refuses a line that is neither, naming it, or an id it cannot key")
    func eraseRefusals() async throws {
        let harness = try CommandHarness()
        let pseudonyms = try writeEvents(harness)
        try "\(pseudonyms.pseudonym("2000000000000002"))\n".write(to: harness.file("p.txt"), atomically: true, encoding: .utf8)
        let byPseudonym = await harness.run(["events", "erase", "--env", "sandbox", "--customers", "p.txt"])
        #expect(byPseudonym.code == .success && byPseudonym.stdout.contains("6 event(s) removed"), "\(byPseudonym.stdout)\(byPseudonym.stderr)")

        try "2000000000000001\n".write(to: harness.file("raw.txt"), atomically: true, encoding: .utf8)
        let unkeyed = await harness.run(["events", "erase", "--env", "sandbox", "--customers", "raw.txt"])
        #expect(unkeyed.code == .usage && unkeyed.stderr.contains("raw.txt:1: an original transaction id"), "\(unkeyed.stderr)")
        #expect(!unkeyed.stderr.contains("2000000000000001"))

        try "someone@example.com\n".write(to: harness.file("bad.txt"), atomically: true, encoding: .utf8)
        let bad = await harness.run(["events", "erase", "--env", "sandbox", "--customers", "bad.txt"], environment: Self.environment)
        #expect(bad.code == .usage && bad.stderr.contains("bad.txt:1: neither a pseudonym"), "\(bad.stderr)")
        let missing = await harness.run(["events", "erase", "--env", "sandbox"], environment: Self.environment)
        #expect(missing.code == .usage && missing.stderr.contains("needs --customers"), "\(missing.stderr)")
    }
}
