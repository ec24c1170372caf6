import CLIKit
@testable import CommandTestSupport
import EventContract
import EventStore
import Foundation
import RetentionMessagingModels
import RetentionSyncCommands
import Runtime
import Testing
import TestSupport

@Suite("retention-sync facts, and decide --customer")
struct FactsCommandTests {
    static let secret = "0123456789abcdef0123456789abcdef0123456789abcdef"
    static let environment = [PseudonymKey.environmentVariable: secret]

    /// Outcome events beside the example App's sandbox state: a German customer told twice (the later
    /// notification moved them to Austria), an American, and one line under another pseudonym key.
    private func writeOutcomes(_ harness: CommandHarness) throws -> PseudonymKey {
        let pseudonyms = try PseudonymKey(secret: Self.secret)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        func outcome(_ transaction: String, storefront: String, at time: Int64, keyId: String? = nil) -> OutcomeFacts {
            var facts = OutcomeFacts(time: time, environment: "sandbox", notificationUUID: UUID().uuidString, notificationType: "DID_RENEW",
                                     subtype: nil, customer: pseudonyms.pseudonym(transaction), keyId: keyId ?? pseudonyms.keyId,
                                     productId: "com.example.stillpoint.monthly", autoRenewProductId: "com.example.stillpoint.monthly",
                                     autoRenewStatus: 1, offerType: nil, offerIdentifier: nil, price: 4990, currency: "EUR",
                                     effectiveDate: time, expiresDate: nil, source: .push)
            facts.storefront = storefront
            facts.purchaseDate = time
            facts.originalPurchaseDate = time - 90 * 86_400_000
            facts.ownership = "PURCHASED"
            facts.billingRetry = false
            return facts
        }
        let lines = [outcome("2000000000000001", storefront: "DEU", at: now - 7_200_000),
                     outcome("2000000000000001", storefront: "AUT", at: now - 3_600_000),
                     outcome("2000000000000002", storefront: "USA", at: now - 3_600_000),
                     outcome("2000000000000003", storefront: "FRA", at: now - 3_600_000, keyId: "0badc0de")]
        for (index, line) in lines.enumerated() {
            let (date, hour) = EventTime.partition(line.time)
            let folder = harness.file("manifests/.retention-sync/events/v1/outcomes/environment=sandbox/date=\(date)/hour=\(hour)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data(line.record().line + [0x0A]).write(to: folder.appendingPathComponent("serve-a-\(index).ndjson"))
        }
        return pseudonyms
    }

    @Test("the reconcile job publishes the facts of every customer, newest notification first, and show prints them line by line")
    func publishAndShow() async throws {
        let harness = try CommandHarness()
        let pseudonyms = try writeOutcomes(harness)
        let published = await harness.run(["facts", "publish", "--env", "sandbox"], environment: Self.environment)
        #expect(published.code == .success, "\(published.stderr)")
        #expect(published.stdout.contains("2 customer(s) from 3 outcome event(s)"), "\(published.stdout)")
        #expect(published.stdout.contains("1 outcome event(s) written under another pseudonym key were left out"))

        let shown = await harness.run(["facts", "show", "--env", "sandbox", "--format", "jsonl"], environment: Self.environment)
        #expect(shown.code == .success, "\(shown.stderr)")
        let lines = shown.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 2)
        let german = String(pseudonyms.pseudonym("2000000000000001").prefix(20))
        #expect(lines.contains { $0.contains("\"key\":\"\(german)\"") && $0.contains("\"storefront\":\"AUT\"") }, "\(lines)")
        #expect(!shown.stdout.contains("2000000000000001"))

        // Publishing again from the same events names the same table: the file is named by its digest.
        func tables() throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: harness.file("manifests/.retention-sync/facts/v1/environment=sandbox").path)
                .filter { $0.hasPrefix("table-") }.sorted()
        }
        let first = try tables()
        #expect(first.count == 1)
        _ = await harness.run(["facts", "publish", "--env", "sandbox"], environment: Self.environment)
        #expect(try tables() == first)
        // New events make a new table; the one before it stays for a replica still loading it, older ones go.
        for round in 0..<2 {
            let folder = harness.file("manifests/.retention-sync/events/v1/outcomes/environment=sandbox/date=2026-11-20/hour=10")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            var line = OutcomeFacts(time: 1_795_000_000_000 + Int64(round), environment: "sandbox", notificationUUID: UUID().uuidString,
                                    notificationType: "DID_RENEW", subtype: nil, customer: pseudonyms.pseudonym("200000000000010\(round)"),
                                    keyId: pseudonyms.keyId, productId: nil, autoRenewProductId: nil, autoRenewStatus: nil, offerType: nil,
                                    offerIdentifier: nil, price: nil, currency: nil, effectiveDate: nil, expiresDate: nil, source: .pull)
            line.purchaseDate = Int64(Date().timeIntervalSince1970 * 1000)
            line.storefront = "JPN"
            try Data(line.record().line + [0x0A]).write(to: folder.appendingPathComponent("pull-\(round).ndjson"))
            let next = await harness.run(["facts", "publish", "--env", "sandbox"], environment: Self.environment)
            #expect(next.code == .success, "\(next.stderr)")
        }
        #expect(try tables().count == 2)
        #expect(!(try tables()).contains(first[0]))
    }

    @Test("facts without the pseudonym secret, or without events or a table, stop with what to do")
    func refusals() async throws {
        let harness = try CommandHarness()
        let noSecret = await harness.run(["facts", "publish", "--env", "sandbox"])
        #expect(noSecret.code == .usage)
        #expect(noSecret.stderr.contains("RETENTION_SYNC_PSEUDONYM_SECRET is not set"), "\(noSecret.stderr)")
        let noEvents = await harness.run(["facts", "publish", "--env", "sandbox"], environment: Self.environment)
        #expect(noEvents.code != .success)
        #expect(noEvents.stderr.contains("no events at"), "\(noEvents.stderr)")
        let noTable = await harness.run(["facts", "show", "--env", "sandbox"], environment: Self.environment)
        #expect(noTable.code != .success)
        #expect(noTable.stderr.contains("run retention-sync facts publish --env sandbox first"), "\(noTable.stderr)")
    }

    @Test("decide --customer previews what a customer with these facts is shown, and --explain names the condition that failed")
    func decidePreviewsFacts() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("decide-facts-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let snapshot = try RuntimeSnapshot(bundleId: "com.example.app", appAppleId: 1, environment: .production, localeFallbacks: [:], rules: [
            SnapshotRule(id: "cancel/germany", version: "0123456789abcdef",
                         match: SnapshotMatch(customer: CustomerConditions(storefronts: ["DEU"], tenureAtLeast: CustomerPeriod(count: 30, unit: .days))),
                         response: SnapshotResponse(kind: .message, message: "bleib", messageIdentifiers: ["en-US": "00000000-0000-5000-8000-00000000000d"])),
            SnapshotRule(id: "cancel/everyone", version: "0123456789abcdef", match: SnapshotMatch(),
                         response: SnapshotResponse(kind: .message, message: "stay", messageIdentifiers: ["en-US": "00000000-0000-5000-8000-00000000000e"])),
        ]).sealed()
        try snapshot.encoded().write(to: folder.appendingPathComponent("snapshot.json"))
        try Data(#"{"originalTransactionId":"2000000000000001","appAppleId":1,"productId":"p","userLocale":"en-US","requestIdentifier":"r","environment":"Production","signedDate":1795000000000}"#.utf8)
            .write(to: folder.appendingPathComponent("request.json"))
        try Data(#"{"storefront": "DEU", "tenure-days": 12}"#.utf8).write(to: folder.appendingPathComponent("young.json"))
        func decide(_ extra: [String]) async -> (ExitCode, String, String) {
            let captured = CapturedConsole()
            let context = CommandContext(console: captured.console, environment: [:], currentDirectory: folder)
            let code = await CLI.run(["decide", "--snapshot", "snapshot.json", "--request", "request.json"] + extra, context: context)
            return (code, captured.stdout, captured.stderr)
        }
        let german = await decide(["--customer", "storefront=DEU,tenure-days=40"])
        #expect(german.0 == .success && german.1.contains("00000000-0000-5000-8000-00000000000d"), "\(german)")
        let unknown = await decide([])
        #expect(unknown.1.contains("00000000-0000-5000-8000-00000000000e"), "nothing known: the German rule must not answer")
        let young = await decide(["--customer", "@young.json", "--explain"])
        #expect(young.1.contains("skipped cancel/germany: customer: tenure 12d is below 30d"), "\(young.1)")
        let american = await decide(["--customer", "storefront=USA,tenure-days=400", "--explain"])
        #expect(american.1.contains("skipped cancel/germany: customer: storefront USA not in [DEU]"), "\(american.1)")
        let wrong = await decide(["--customer", "storefront=GER"])
        #expect(wrong.0 == .usage && wrong.2.contains("storefront 'GER' is not an ISO 3166-1 alpha-3 code"), "\(wrong.2)")
        let unknownKey = await decide(["--customer", "country=DEU"])
        #expect(unknownKey.0 == .usage && unknownKey.2.contains("unknown customer fact 'country'"), "\(unknownKey.2)")
    }

    @Test("results --by storefront breaks each rule down by what serve knew of the customer when it answered, unknown included")
    func resultsByStorefront() async throws {
        let harness = try CommandHarness()
        let folder = harness.file("manifests/.retention-sync/events/v1/decisions/environment=sandbox/date=2026-11-20/hour=10")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var lines: [UInt8] = []
        for n in 0..<12 {
            var facts = DecisionFacts(time: 1_795_000_000_000 + Int64(n) * 60_000, environment: "sandbox", requestIdentifier: "r\(n)",
                                      customer: String(repeating: String(format: "%02x", n + 1), count: 32), keyId: "0badc0de",
                                      productId: "com.example.stillpoint.monthly", localeRequested: "en-US", localeServed: "en-US",
                                      flow: "cancel-flow", rule: "everyone-else", splitGroup: nil, splitControl: false, answer: .none,
                                      messageIdentifier: nil, offerIdentifier: nil, alternateProductId: nil, snapshot: "sha256:00", latencyMicros: 700)
            let storefront: String? = n < 6 ? "DEU" : n < 10 ? "USA" : nil
            facts.known = KnownFacts(source: storefront == nil ? .unknown : .table, asOf: storefront == nil ? nil : 1_794_000_000_000,
                                     storefront: storefront, tenureBand: storefront == nil ? nil : "1-3m",
                                     offerWithin90Days: storefront == nil ? nil : n % 2 == 0, billing: storefront == nil ? nil : BillingState.none)
            lines += facts.record().line + [0x0A]
        }
        try Data(lines).write(to: folder.appendingPathComponent("serve-a-1.ndjson"))
        let run = await harness.run(["results", "--env", "sandbox", "--since", "2026-11-01", "--by", "storefront", "--format", "json"])
        #expect(run.code == .success, "\(run.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let rows = try #require(report["breakdownRows"] as? [[String: Any]])
        let exposed = Dictionary(uniqueKeysWithValues: rows.map { (($0["value"] as? String) ?? "", ($0["exposed"] as? Int) ?? -1) })
        #expect(exposed == ["DEU": 6, "USA": 4, "unknown": 2], "\(exposed)")
        let offers = await harness.run(["results", "--env", "sandbox", "--since", "2026-11-01", "--by", "offers"])
        #expect(offers.stdout.contains("no offer within 90 days") && offers.stdout.contains("unknown"), "\(offers.stdout)")
    }

    @Test("results --by message names each message as the manifests do, and keeps an identifier they do not know")
    func resultsByMessageShowsNames() async throws {
        let harness = try CommandHarness()
        let ids = await harness.run(["id", "--env", "sandbox", "--format", "json"])
        let document = try #require(try JSONSerialization.jsonObject(with: Data(ids.stdout.utf8)) as? [String: Any])
        let environments = try #require(document["environments"] as? [[String: Any]])
        let messages = try #require(environments.first?["messages"] as? [[String: Any]])
        let named = try #require(messages.first { ($0["locale"] as? String) == "ja" })
        let identifier = try #require(named["identifier"] as? String)
        let label = "\(try #require(named["name"] as? String)) (ja)"
        let stranger = "00000000-0000-5000-8000-0000000000aa"
        let folder = harness.file("manifests/.retention-sync/events/v1/decisions/environment=sandbox/date=2026-11-20/hour=10")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var lines: [UInt8] = []
        for n in 0..<6 {
            let facts = DecisionFacts(time: 1_795_000_000_000 + Int64(n) * 60_000, environment: "sandbox", requestIdentifier: "r\(n)",
                                      customer: String(repeating: String(format: "%02x", n + 1), count: 32), keyId: "0badc0de",
                                      productId: "com.example.stillpoint.monthly", localeRequested: "ja", localeServed: "ja",
                                      flow: "cancel-flow", rule: "everyone-else", splitGroup: nil, splitControl: false, answer: .message,
                                      messageIdentifier: n < 4 ? identifier : stranger, offerIdentifier: nil, alternateProductId: nil,
                                      snapshot: "sha256:00", latencyMicros: 700)
            lines += facts.record().line + [0x0A]
        }
        try Data(lines).write(to: folder.appendingPathComponent("serve-a-1.ndjson"))
        let text = await harness.run(["results", "--env", "sandbox", "--since", "2026-11-01", "--by", "message"])
        #expect(text.code == .success, "\(text.stderr)")
        #expect(text.stdout.contains(label) && !text.stdout.contains(identifier), "\(text.stdout)")
        #expect(text.stdout.contains(stranger), "an identifier the manifests do not know is shown as it is: \(text.stdout)")
        let json = await harness.run(["results", "--env", "sandbox", "--since", "2026-11-01", "--by", "message", "--format", "json"])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let rows = try #require(report["breakdownRows"] as? [[String: Any]])
        let names = Dictionary(uniqueKeysWithValues: rows.map { (($0["value"] as? String) ?? "", ($0["valueName"] as? String) ?? "-") })
        #expect(names == [identifier: label, stranger: "-"], "\(names)")
    }

    @Test("results run after run does not repeat the manifests' warnings one by one: one note counts them")
    func resultsSummarizesManifestWarnings() async throws {
        let harness = try CommandHarness()
        let messages = harness.file("manifests/messages.yaml")
        let unused = "\n---\napiVersion: retention-sync/v1\nkind: Message\nname: never-used\nlocalizations:\n  en-US:\n"
            + "    header: Nobody sees this\n    body: A message no default or rule names.\n"
        try (try String(contentsOf: messages, encoding: .utf8) + unused).write(to: messages, atomically: true, encoding: .utf8)
        let validate = await harness.run(["validate"])
        #expect(validate.stdout.contains("unused-message") || validate.stderr.contains("unused-message"), "validate still shows it")
        let folder = harness.file("manifests/.retention-sync/events/v1/decisions/environment=sandbox/date=2026-11-20/hour=10")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let facts = DecisionFacts(time: 1_795_000_000_000, environment: "sandbox", requestIdentifier: "r", customer: String(repeating: "ab", count: 32),
                                  keyId: "0badc0de", productId: "com.example.stillpoint.monthly", localeRequested: "en-US", localeServed: "en-US",
                                  flow: "cancel-flow", rule: "everyone-else", splitGroup: nil, splitControl: false, answer: .none,
                                  messageIdentifier: nil, offerIdentifier: nil, alternateProductId: nil, snapshot: "sha256:00", latencyMicros: 700)
        try Data(facts.record().line + [0x0A]).write(to: folder.appendingPathComponent("serve-a-1.ndjson"))
        let run = await harness.run(["results", "--env", "sandbox", "--since", "2026-11-01"])
        #expect(run.code == .success, "\(run.stderr)")
        #expect(!run.stderr.contains("unused-message"), "\(run.stderr)")
        #expect(run.stderr.contains("note: the manifests have 1 warning, not repeated by results; retention-sync validate shows it"), "\(run.stderr)")
    }
}
