import Basics
import Crypto
import Emulator
import EventStore
import EventContract
import Experiments
import Foundation
import RetentionMessagingModels
import Runtime
import StateStore
import Testing
import TestSupport

/// Simulated customers whose truth is given per rule — a holdout and a catch-all that both answer
/// none, told apart only by the rule serve names — and `results` over what serve recorded.
@Suite("A truth per rule, measured by results", .serialized)
struct RuleTruthLoopTests {
    static let monthly = "com.example.loop.monthly"
    static let yearly = "com.example.loop.yearly"

    /// A 50/50 group (a message, the control, and a holdout answering none) on the monthly product,
    /// and a catch-all answering none for everyone else.
    static func snapshot() throws -> RuntimeSnapshot {
        try RuntimeSnapshot(bundleId: OutcomeLoopTests.bundleId, appAppleId: OutcomeLoopTests.appAppleId, environment: .sandbox,
                            localeFallbacks: [:], rules: [
            SnapshotRule(id: "cancel/stay-message", version: "0123456789abcdef",
                         match: SnapshotMatch(products: [monthly], split: SnapshotSplit(salt: "stay", lowerBucket: 0, upperBucket: 5000, control: true)),
                         response: SnapshotResponse(kind: .message, message: "stay", messageIdentifiers: ["en-US": OutcomeLoopTests.messageId])),
            SnapshotRule(id: "cancel/holdout", version: "0123456789abcdef",
                         match: SnapshotMatch(products: [monthly], split: SnapshotSplit(salt: "stay", lowerBucket: 5000, upperBucket: 10_000)),
                         response: SnapshotResponse(kind: .none)),
            SnapshotRule(id: "cancel/everyone-else", version: "0123456789abcdef", match: SnapshotMatch(),
                         response: SnapshotResponse(kind: .none)),
        ]).sealed()
    }

    @Test("results over a simulation with a truth per rule find each rule's kept rate within its interval, and the two none rules apart")
    func resultsRecoverThePerRuleTruth() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rule-truth-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = FolderObjectStore(root: folder.appendingPathComponent("events"))
        let chain = try AppleStyleSigningChain(name: "rule truth", notBefore: Date(timeIntervalSinceNow: -400 * OutcomeLoopTests.day))
        var configuration = EmulatorConfiguration(publicKey: ES256PrivateKey.generate().publicKey, keyId: "ABC123DEFG",
                                                  issuerId: "57246542-96fe-1a63-e053-0824d011072a", bundleId: OutcomeLoopTests.bundleId,
                                                  clock: SystemClock(), appAppleId: OutcomeLoopTests.appAppleId)
        configuration.useTestChain(chain)
        let emulator = Emulator(configuration: configuration)
        let replica = try OutcomeLoopTests.Replica(name: "rules", snapshot: try Self.snapshot(), roots: [chain.root], store: store,
                                                   spool: folder.appendingPathComponent("spool"))
        let truth = ["cancel/stay-message": 0.55, "cancel/holdout": 0.25, "cancel/everyone-else": 0.8]
        // The answer's key says 50% for both none rules; each rule's own key must win.
        var answers = ["none": OutcomeProbabilities(keep: 0.5)]
        for (rule, keep) in truth { answers["rule:\(rule)"] = OutcomeProbabilities(keep: keep) }
        let simulation = try CustomerSimulation(settings: CustomerSimulationSettings(
            customers: 1500, seed: 2026, products: [SimulatedProduct(productId: Self.monthly), SimulatedProduct(productId: Self.yearly)],
            realtimeURL: replica.realtimeURL, pushURL: replica.notificationsURL, timeout: 30,
            model: OutcomeModel(default: OutcomeProbabilities(keep: 0.1), answers: answers)), emulator: emulator)
        let summary = await simulation.run()
        #expect(summary.errors == 0)
        #expect(Set(summary.rules.keys) == Set(truth.keys))
        _ = await simulation.advance(by: 2 * OutcomeLoopTests.day)
        let counters = await replica.stop()
        #expect(counters.dropped.isEmpty && counters.spooledSegments == 0)

        let report = try ResultsReport.compute(source: FolderEventSource(root: folder.appendingPathComponent("events")), environment: "sandbox",
                                               now: emulator.now)
        for (rule, keep) in truth {
            let name = String(rule.split(separator: "/").last ?? "")
            let row = try #require(report.rows.first { $0.rule == name }, "\(rule)")
            let drawn = try #require(summary.rules[rule])
            // Counted exactly as drawn, rule by rule (the two none rules are one line per answer).
            #expect(row.exposed == drawn.exposed && row.kept24h.successes == drawn.kept, "\(rule)")
            let interval = try #require(row.kept24h.interval)
            #expect(interval.low <= keep && keep <= interval.high, "\(rule): \(keep) outside \(interval)")
        }
        // The holdout's 25% and the catch-all's 80% are far apart: no interval of one holds the other's truth.
        let holdout = try #require(report.rows.first { $0.rule == "holdout" }?.kept24h.interval)
        #expect(holdout.high < 0.8)
    }
}
