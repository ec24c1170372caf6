import Foundation
import RetentionMessagingModels
import Runtime
import Testing

@Suite("Traffic split")
struct TrafficBucketTests {
    struct ExpectedBucket: Decodable {
        var salt: String
        var originalTransactionId: String
        var bucket: Int
    }

    @Test("a customer's bucket is the one computed once by another program (Python's hashlib)")
    func bucketsMatchCommittedValues() throws {
        let data = try Data(contentsOf: RuntimeFixtures.url("expected-buckets.json"))
        let expected = try JSONDecoder().decode([ExpectedBucket].self, from: data)
        #expect(expected.count >= 10)
        for entry in expected {
            #expect(TrafficBucket.bucket(salt: entry.salt, originalTransactionId: entry.originalTransactionId) == entry.bucket,
                    "\(entry.salt):\(entry.originalTransactionId)")
        }
    }

    @Test("100,000 customers split 50/30/20 land within 1% of the weights, the same way on every run")
    func splitFollowsWeights() throws {
        let engine = DecisionEngine(snapshot: splitSnapshot(group: "price-test", weights: [50, 30, 20], product: monthly),
                                    signer: nil)
        let ids = (0..<100_000).map { String(3_000_000_000_000_000 + $0 * 7919) }
        let base = request(product: monthly)
        func decide(_ id: String) throws -> String {
            var customer = base
            customer.originalTransactionId = id
            return try ruleId(engine.decide(customer))
        }
        let first = try ids.map(decide)
        var counts: [String: Int] = [:]
        for id in first { counts[id, default: 0] += 1 }
        for (index, weight) in [50.0, 30.0, 20.0].enumerated() {
            let share = Double(counts["price-test/\(index)"] ?? 0) / Double(ids.count) * 100
            #expect(abs(share - weight) < 1, "group \(index): \(share)% for a weight of \(weight)%")
        }
        let second = try ids.map(decide)
        #expect(first == second)
    }

    @Test("re-weighting one split group moves no customer of another group")
    func reweightingIsIsolated() throws {
        func snapshot(priceWeights: [Double]) -> RuntimeSnapshot {
            var combined = splitSnapshot(group: "price-test", weights: priceWeights, product: monthly)
            combined.rules += splitSnapshot(group: "copy-test", weights: [50, 50], product: yearly).rules
            return combined
        }
        let before = DecisionEngine(snapshot: snapshot(priceWeights: [50, 30, 20]), signer: nil)
        let after = DecisionEngine(snapshot: snapshot(priceWeights: [70, 10, 20]), signer: nil)
        let ids = (0..<5_000).map { String(4_000_000_000_000_000 + $0) }
        var moves: Set<String> = []
        var (yearlyRequest, monthlyRequest) = (request(product: yearly), request(product: monthly))
        for id in ids {
            yearlyRequest.originalTransactionId = id
            monthlyRequest.originalTransactionId = id
            #expect(try ruleId(before.decide(yearlyRequest)) == ruleId(after.decide(yearlyRequest)))
            let (old, new) = (try ruleId(before.decide(monthlyRequest)), try ruleId(after.decide(monthlyRequest)))
            if old != new { moves.insert("\(old) → \(new)") }
        }
        // Within the re-weighted group, 50/30/20 → 70/10/20 moves only customers from the second rule to the first.
        #expect(moves == ["price-test/1 → price-test/0"])
    }

    @Test("buckets spread evenly over 0..<10000")
    func bucketsAreEven() {
        var tenths = [Int](repeating: 0, count: 10)
        for number in 0..<50_000 {
            tenths[TrafficBucket.bucket(salt: "even", originalTransactionId: String(number)) / 1000] += 1
        }
        for count in tenths { #expect(abs(count - 5_000) < 300, "\(tenths)") }
    }

    /// One rule per weight, consecutive bucket ranges, ids `<group>/<index>`.
    private func splitSnapshot(group: String, weights: [Double], product: String) -> RuntimeSnapshot {
        var lower = 0
        var rules: [SnapshotRule] = []
        for (index, weight) in weights.enumerated() {
            let upper = index == weights.count - 1 ? SnapshotSplit.bucketCount : lower + Int(weight * 100)
            rules.append(rule("\(group)/\(index)",
                              SnapshotMatch(products: [product], split: SnapshotSplit(salt: group, lowerBucket: lower, upperBucket: upper)),
                              message("\(group)-\(index)", ["en-US": uuid(index + 1)])))
            lower = upper
        }
        return RuntimeSnapshot(bundleId: bundleId, appAppleId: appAppleId, environment: .production, localeFallbacks: [:],
                               rules: rules)
    }

    private func ruleId(_ decision: Decision) -> String {
        switch decision {
        case .respond(_, let answered): answered.ruleId
        case .noAnswer(let reason): "none: \(reason)"
        case .ruleAnswersNone(let answered): "none: rule \(answered.ruleId) answers none"
        }
    }
}
