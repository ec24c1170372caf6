import Basics
import Crypto
import EventContract
import EventStore
import Experiments
import Foundation
import Operations
import RetentionMessagingModels
import Testing
import TestSupport

/// Outcome events of simulated customers whose notifications arrive in any order — late, repeated,
/// signed in the same millisecond, some under another pseudonym key, some too old to keep — and the
/// facts table `facts publish` makes of them, as `facts show --format jsonl` prints it.
struct FactsSQLStore {
    static let keyId = "5eed0001"
    static let start: Int64 = 1_790_000_000_000
    /// Customers whose newest fact is older than this are left out.
    static let retainSince = start + 20 * EventTime.day

    let root: URL

    /// Writes the events under a new temporary folder.
    init(seed: UInt64, customers: Int = 400) throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("facts-sql-\(UUID().uuidString)")
        var random = SeededRandom(seed)
        var lines: [(time: Int64, line: [UInt8])] = []
        let storefronts = ["USA", "DEU", "JPN", "BRA", "FRA"]
        for index in 0..<customers {
            let customer = Digest.sha256Hex(Array("customer-\(seed)-\(index)".utf8))
            let first = Self.start - Int64(random.below(400)) * EventTime.day
            let count = 1 + random.below(6)
            var signed = Self.start + Int64(random.below(40)) * EventTime.day + Int64(random.below(86_400_000))
            for _ in 0..<count {
                // Signed dates repeat (a tie) a fifth of the time; otherwise move on by up to a week.
                if random.below(5) != 0 { signed += Int64(random.below(7 * 86_400)) * 1000 + Int64(random.below(1000)) }
                let hasTransaction = random.below(10) < 8
                let hasRenewal = random.below(10) < 8
                let offer = random.below(3) == 0 ? [1, 2, 3, 4, 5, 7][random.below(6)] : nil
                var facts = OutcomeFacts(
                    time: signed, environment: "production", notificationUUID: CryptoRandomUUID.make(&random), notificationType: "DID_RENEW",
                    subtype: nil, customer: customer, keyId: random.below(20) == 0 ? "0badc0de" : Self.keyId,
                    productId: "com.example.monthly",
                    autoRenewProductId: hasRenewal ? ["com.example.monthly", "com.example.yearly", "com.example.monthly"][random.below(3)] : nil,
                    autoRenewStatus: hasRenewal ? Int64(random.below(2)) : nil, offerType: offer.map(Int64.init), offerIdentifier: nil,
                    price: hasTransaction && random.below(10) != 0 ? Int64(990 + random.below(9000)) : nil,
                    currency: hasTransaction ? ["USD", "EUR", "JPY"][random.below(3)] : nil, effectiveDate: signed, expiresDate: nil, source: .push)
                if hasTransaction {
                    facts.storefront = random.below(15) == 0 ? nil : storefronts[random.below(storefronts.count)]
                    facts.originalPurchaseDate = first + Int64(random.below(3)) * EventTime.day
                    facts.ownership = ["PURCHASED", "FAMILY_SHARED", nil][random.below(3)]
                    facts.purchaseDate = signed - Int64(random.below(3_600_000))
                    facts.redeemedOfferType = offer.map(Int64.init)
                }
                if hasRenewal {
                    facts.billingRetry = [true, false, nil][random.below(3)]
                    facts.gracePeriodExpiresDate = random.below(4) == 0 ? signed + 6 * EventTime.day : nil
                    facts.priceIncreaseStatus = [0, 1, nil, nil][random.below(4)].map(Int64.init)
                }
                let line = facts.record().line
                lines.append((signed, line))
                // Apple retries, and push and pull both read a notification: some lines come twice.
                if random.below(8) == 0 { lines.append((signed, line)) }
            }
        }
        // Segments in an order unrelated to the signed dates: a late notification lands in a later segment.
        var segment = 0
        for chunk in stride(from: 0, to: lines.count, by: 97) {
            segment += 1
            var byPartition: [String: [UInt8]] = [:]
            for entry in lines[chunk..<min(chunk + 97, lines.count)].shuffled(using: &random) {
                let (date, hour) = EventTime.partition(entry.time)
                byPartition["date=\(date)/hour=\(hour)", default: []] += entry.line + [0x0A]
            }
            for (partition, bytes) in byPartition {
                let folder = root.appendingPathComponent("events/v1/outcomes/environment=production/\(partition)")
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                try Data(bytes).write(to: folder.appendingPathComponent("outcomes-test-\(String(format: "%06d", segment)).ndjson"))
            }
        }
    }

    func remove() { try? FileManager.default.removeItem(at: root) }

    /// The table as `facts publish` writes it and `facts show --format jsonl` prints it, read back
    /// through the published bytes.
    func toolLines() throws -> [String] {
        let folded = try FactsBuild.fold(source: FolderEventSource(root: root), environment: "production", keyId: Self.keyId,
                                         retainSince: Self.retainSince)
        let header = FactsTable.Header(bundleId: "com.example.app", environment: "production", keyId: Self.keyId,
                                       count: folded.facts.count, newestFact: folded.summary.newestFact ?? 0)
        let table = try FactsTable(Data(try FactsTable.encode(folded.facts, header: header)),
                                   expecting: ("com.example.app", "production", Self.keyId))
        return table.all().map { FactsBuild.jsonLine(key: $0.key, $0.facts) }
    }

    func fill(_ query: String) -> String {
        query.replacingOccurrences(of: "{root}", with: root.path).replacingOccurrences(of: "{environment}", with: "production")
            .replacingOccurrences(of: "{key_id}", with: Self.keyId)
            .replacingOccurrences(of: "{retain_since_iso}", with: EventTime.format(Self.retainSince))
    }

    /// The SQL's rows (arrays in the query's column order) as the tool's JSON lines, to compare.
    static let columns = ["key", "autoRenewProductId", "billingRetry", "currency", "firstPurchase", "gracePeriodExpires", "offer1", "offer2", "offer3",
                          "offer4", "offer5", "ownership", "price", "priceIncrease", "renewalAsOf", "storefront", "transactionAsOf"]

    static func objects(rows: Any) throws -> [[String: String]] {
        let rows = try #require(rows as? [[Any]])
        return rows.map { row in Dictionary(uniqueKeysWithValues: zip(columns, row.map(Self.text))) }
    }

    static func objects(lines: [String]) throws -> [[String: String]] {
        try lines.map { line in
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            return object.mapValues(Self.text)
        }
    }

    static func text(_ value: Any) -> String {
        switch value {
        case is NSNull: "null"
        case let number as NSNumber: number.stringValue
        default: "\(value)"
        }
    }
}

/// A tiny reproducible generator, so a failing seed can be run again.
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64
    init(_ seed: UInt64) { state = seed &+ 0x9E37_79B9_7F4A_7C15 }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
}

enum CryptoRandomUUID {
    static func make(_ random: inout SeededRandom) -> String {
        let hex = String(format: "%016llx%016llx", random.next(), random.next())
        let c = Array(hex)
        return "\(String(c[0..<8]))-\(String(c[8..<12]))-4\(String(c[13..<16]))-8\(String(c[17..<20]))-\(String(c[20..<32]))".uppercased()
    }
}

@Suite struct FactsSQLTests {
    @Test("a data team running the manual's DuckDB query over the outcome events gets exactly the facts table, for several seeds")
    func duckDBGivesTheFactsTable() async throws {
        let python = Repository.url(".build/tools/bin/python")
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            throw ResultsSQLStore.Unavailable(description: "\(python.path) is missing: run `bash .ci/setup --test` (it installs duckdb into .build/tools)")
        }
        let query = try ResultsSQLStore.documented("duckdb-facts-sql", in: "docs/targeting.md")
        for seed: UInt64 in [1, 2, 3] {
            let store = try FactsSQLStore(seed: seed)
            defer { store.remove() }
            let file = store.root.appendingPathComponent("facts.sql")
            try Data(store.fill(query).utf8).write(to: file)
            let output = try await onOwnThread { try ResultsSQLStore.run(python, ["-c", DuckDBTests.runner, file.path]) }
            let fromSQL = try FactsSQLStore.objects(rows: try JSONSerialization.jsonObject(with: output))
            let fromTool = try FactsSQLStore.objects(lines: try store.toolLines())
            #expect(fromTool.count > 200, "seed \(seed): the simulation should keep most customers")
            #expect(fromSQL.count == fromTool.count, "seed \(seed)")
            for (sql, tool) in zip(fromSQL, fromTool) where sql != tool {
                Issue.record("seed \(seed): SQL \(sql.sorted { $0.key < $1.key }) ≠ tool \(tool.sorted { $0.key < $1.key })")
                break
            }
        }
    }
}
