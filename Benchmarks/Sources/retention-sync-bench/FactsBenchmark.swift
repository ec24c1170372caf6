import Basics
import Crypto
import EventStore
import Foundation
import RetentionMessagingModels

/// `retention-sync-bench facts [--customers N]`: a facts table of N customers (10 million by default)
/// as `facts publish` writes it and `serve` loads it — the time to load it (read, digest check, the
/// one pass that checks order and builds the index), the memory it takes per customer, and what one
/// lookup and one `match.customer` check cost on the request path.
@Sendable func factsBenchmark(_ arguments: [String]) async throws {
    func option(_ name: String) -> String? {
        arguments.firstIndex(of: name).flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
    }
    let customers = option("--customers").flatMap(Int.init) ?? 10_000_000
    guard customers > 0 else { throw BenchmarkError("--customers must be at least 1") }
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("facts-bench-\(getpid())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = directory.appendingPathComponent("table.rsfacts")
    let now: Int64 = 1_795_824_000_000
    let storefronts = ["USA", "DEU", "JPN", "BRA", "FRA", "GBR", "CAN", "AUS"]
    print("retention-sync-bench facts: a table of \(customers) customers (one record of \(FactsTable.recordSize) bytes each)")

    // Keys spread evenly over the 80-bit space, in ascending order, as pseudonyms (HMAC outputs) are.
    let step = UInt64.max / UInt64(customers)
    func key(_ index: Int) -> [UInt8] {
        let high = UInt64(index) &* step
        return (0..<8).map { UInt8(truncatingIfNeeded: high >> (56 - 8 * $0)) } + [0x5A, UInt8(truncatingIfNeeded: index)]
    }
    let products = ["com.example.monthly", "com.example.yearly"]
    var started = ContinuousClock.now
    var builder = try FactsTable.Builder(header: FactsTable.Header(bundleId: "com.example.app", environment: "production",
                                                                   keyId: "0badc0de", count: customers, newestFact: now,
                                                                   autoRenewProducts: products))
    for index in 0..<customers {
        var facts = CustomerFacts(storefront: storefronts[index % storefronts.count], currency: "USD", price: 9990,
                                  firstPurchase: now - Int64(index % 900) * 86_400_000, ownership: index % 9 == 0 ? .familyShared : .purchased,
                                  inBillingRetry: index % 40 == 0, priceIncrease: PriceIncreaseState.none, transactionAsOf: now - 86_400_000,
                                  renewalAsOf: now - 86_400_000)
        if index % 4 == 0 { facts.offersRedeemed[.promotional] = now - Int64(index % 200) * 86_400_000 }
        facts.autoRenewProductId = products[index % 7 == 0 ? 1 : 0]
        try builder.append(key: key(index), facts)
    }
    let bytes = builder.bytes
    try Data(bytes).write(to: file)
    let digest = FactsPointer.digest(bytes)
    print(String(format: "  written: %.1f MB in %.2f s (the benchmark's own writer; facts publish also folds the events)",
                 Double(bytes.count) / 1_048_576, seconds(since: started)))

    // Loading as serve does: the bytes, the digest the pointer names, then the table.
    let before = residentMegabytes()
    started = ContinuousClock.now
    let data = try Data(contentsOf: file)
    let read = seconds(since: started)
    started = ContinuousClock.now
    guard FactsPointer.digest(data) == digest else { throw BenchmarkError("the table read back does not match its digest") }
    let checked = seconds(since: started)
    started = ContinuousClock.now
    let table = try FactsTable(data, expecting: ("com.example.app", "production", "0badc0de"))
    let indexed = seconds(since: started)
    let after = residentMegabytes()
    print(String(format: "  load: %.2f s (read %.2f s, digest %.2f s, order and index %.2f s)", read + checked + indexed, read, checked, indexed))
    print(String(format: "  memory: %.0f MB resident for the table, %.1f bytes per customer (the file's bytes, kept as read, and the key index: about one slot per eight customers)",
                 after - before, (after - before) * 1_048_576 / Double(customers)))

    // The request path: a pseudonym (64 hex digits) to its facts, then a rule's conditions.
    let probes = 1_000_000
    var random = SystemRandomNumberGenerator()
    let hits = (0..<4096).map { _ -> String in
        let index = Int.random(in: 0..<customers, using: &random)
        return key(index).map { String(format: "%02x", $0) }.joined() + String(repeating: "0", count: 44)
    }
    let misses = (0..<4096).map { _ in (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &random)) }.joined() }
    var found = 0
    let hitCost = nanoseconds(probes) { index in if table.facts(for: hits[index & 4095]) != nil { found += 1 } }
    guard found == probes else { throw BenchmarkError("\(probes - found) of \(probes) customers in the table were not found") }
    let missCost = nanoseconds(probes) { index in if table.facts(for: misses[index & 4095]) != nil { found += 1 } }
    let sample = hits.prefix(256).compactMap { table.facts(for: $0) }
    let conditions = CustomerConditions(storefronts: ["DEU", "AUT", "CHE"], tenureAtLeast: CustomerPeriod(count: 2, unit: .months),
                                        noOfferRedeemedWithin: CustomerPeriod(count: 90, unit: .days), billing: [.none])
    var held = 0
    let conditionCost = nanoseconds(probes) { index in if conditions.holds(for: sample[index & 255], at: now) { held += 1 } }
    let knownCost = nanoseconds(probes) { index in _ = KnownFacts(sample[index & 255], source: .table, at: now) }
    print(String(format: "  lookup of a customer in the table: %.0f ns (found), %.0f ns (not in it)", hitCost, missCost))
    print(String(format: "  a match.customer check (storefront, tenure, offer history, billing): %.0f ns; what the decision event records: %.0f ns",
                 conditionCost, knownCost))
    print("  (\(held) of \(probes) checks held; figures are this machine's, one thread)")
}

/// Seconds since `start`, on the monotonic clock.
private func seconds(since start: ContinuousClock.Instant) -> Double {
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

/// The mean wall time of `body` over `count` calls, in nanoseconds.
private func nanoseconds(_ count: Int, _ body: (Int) -> Void) -> Double {
    let started = DispatchTime.now().uptimeNanoseconds
    for index in 0..<count { body(index) }
    return Double(DispatchTime.now().uptimeNanoseconds - started) / Double(count)
}

/// This process's resident memory now, in MB (VmRSS).
private func residentMegabytes() -> Double {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return 0 }
    return (Double(line.split(separator: " ").dropFirst().first.map(String.init) ?? "") ?? 0) / 1024
}
