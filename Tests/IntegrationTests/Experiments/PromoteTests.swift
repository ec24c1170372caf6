import Basics
import CLIKit
@testable import CommandTestSupport
import EventContract
@testable import Experiments
@testable import ExperimentsTestSupport
import Foundation
import Manifests
import Operations
import Reconciler
import Testing
import TestSupport

/// `retention-sync promote GROUP`: the example's yearly-upsell split, ended by a reviewed edit when the
/// evidence names a winner, and not before.
@Suite("Promoting a split group's winner", .serialized)
struct PromoteTests {
    static func simulation(upsellKeeps: Double, customers: Int, seed: UInt64) -> EventSimulator {
        var simulator = EventSimulator(arms: [
            EventSimulator.Arm(rule: "upsell-yearly", keepRate: upsellKeeps, answer: "alternateProduct",
                               alternateProduct: "com.example.stillpoint.yearly"),
            EventSimulator.Arm(rule: "upsell-control", keepRate: 0.30, splitControl: true),
        ], customers: customers)
        simulator.environment = "sandbox"
        simulator.splitGroup = "yearly-upsell"
        simulator.duplicateShare = 0
        simulator.run(seed: seed)
        return simulator
    }

    static func asOf(_ simulator: EventSimulator) -> String {
        EventTime.format(simulator.start + 60 * EventTime.day)
    }

    @Test("with a winner named, promote removes the losing arm and the winner's split, keeps every other line, prints the evidence; run again it changes nothing")
    func promotesTheWinner() async throws {
        let harness = try CommandHarness()
        let simulator = Self.simulation(upsellKeeps: 0.45, customers: 3000, seed: 7)
        try simulator.write(to: harness.file("manifests/.retention-sync"))
        let flowFile = harness.file("manifests/cancel-flow.yaml")
        let before = try String(contentsOf: flowFile, encoding: .utf8)

        let run = await harness.run(["promote", "yearly-upsell", "--env", "sandbox", "--as-of", Self.asOf(simulator)])
        #expect(run.code == .success, "\(run.stderr)")
        #expect(run.stdout.hasPrefix("## Promote `upsell-yearly` in `cancel-flow` / `yearly-upsell`"), "\(run.stdout)")
        #expect(run.stdout.contains("`upsell-yearly` vs `upsell-control`: kept at 24 h higher"), "\(run.stdout)")
        #expect(run.stdout.contains("sample ratio:"))
        #expect(run.stderr.contains("promoted upsell-yearly in cancel-flow / yearly-upsell"))

        // The edit: exactly the control's rule and the winner's split line are gone.
        let after = try String(contentsOf: flowFile, encoding: .utf8)
        var expected = before.components(separatedBy: "\n")
        let controlStart = try #require(expected.firstIndex(of: "  - name: upsell-control"))
        let controlEnd = try #require(expected[controlStart...].firstIndex(of: "  - name: everyone-else"))
        expected.removeSubrange(controlStart ..< controlEnd)
        expected.removeAll { $0 == "      split: { group: yearly-upsell, percent: 50 }" }
        #expect(after == expected.joined(separator: "\n"), "\(after)")
        #expect(after.hasPrefix("# yaml-language-server: $schema=retention-sync.schema.json\n# What a customer sees"))
        let (manifests, _) = try Workspace.load(directory: harness.file("manifests"), displayPath: "manifests")
        #expect(manifests.rules.first { $0.name == "upsell-yearly" }?.match.split == nil)
        #expect(!manifests.rules.contains { $0.name == "upsell-control" })

        let again = await harness.run(["promote", "yearly-upsell", "--env", "sandbox", "--as-of", Self.asOf(simulator)])
        #expect(again.code == .success && again.stdout.contains("nothing to promote: no split group yearly-upsell"), "\(again.stdout)")
        #expect(try String(contentsOf: flowFile, encoding: .utf8) == after)
    }

    @Test("without the evidence promote refuses, saying what is missing, and leaves the Flow file as it was")
    func refusesWithoutEvidence() async throws {
        let harness = try CommandHarness()
        let simulator = Self.simulation(upsellKeeps: 0.30, customers: 400, seed: 8)
        try simulator.write(to: harness.file("manifests/.retention-sync"))
        let flowFile = harness.file("manifests/cancel-flow.yaml")
        let before = try String(contentsOf: flowFile, encoding: .utf8)
        let evidence = harness.file("evidence.md")
        let run = await harness.run(["promote", "yearly-upsell", "--env", "sandbox", "--as-of", Self.asOf(simulator), "--evidence", evidence.path])
        #expect(run.code == .failure)
        #expect(run.stderr.contains("not promoting yearly-upsell: the evidence does not name a winner on renewed yet — upsell-yearly: renewed not distinguishable yet"),
                "\(run.stderr)")
        #expect(try String(contentsOf: flowFile, encoding: .utf8) == before)
        #expect(!FileManager.default.fileExists(atPath: evidence.path))
    }

    @Test("over many simulated experiments, a promotion is proposed only for the true winner, and for equal arms at most at the stated error rate")
    func promotionsAreRightAtTheStatedRate() async throws {
        // On a thread of its own: 120 reports must not hold Swift's small pool from the other tests.
        try await onOwnThread { try Self.promotionsAreRight() }
    }

    static func promotionsAreRight() throws {
        let (manifests, _) = try Workspace.load(directory: Repository.url("manifests"), displayPath: "manifests")
        let rules = manifests.rules.filter { $0.match.split?.group == "yearly-upsell" }
        var wrong = 0, proposedForEqual = 0, proposedForBetter = 0
        let runs = 60
        for seed in UInt64(1) ... UInt64(runs) {
            for (keeps, truth) in [(0.30, nil as String?), (0.38, "upsell-yearly")] {
                let simulator = Self.simulation(upsellKeeps: keeps, customers: 1500, seed: seed * 977 + (truth == nil ? 0 : 1))
                let report = try ResultsReport.compute(source: simulator.source, environment: "sandbox",
                                                       now: UTCTime(milliseconds: simulator.start + 60 * EventTime.day), readers: 0)
                guard let decision = try? Promotion.decide(report, flow: "cancel-flow", group: "yearly-upsell", rules: rules, metric: .kept24h) else { continue }
                if let truth {
                    proposedForBetter += 1
                    if decision.winner != truth { wrong += 1 }
                } else {
                    proposedForEqual += 1
                }
            }
        }
        print("Promotions: \(proposedForBetter) of \(runs) for a truly better arm (\(wrong) naming the wrong one), \(proposedForEqual) of \(runs) for equal arms")
        #expect(wrong == 0)
        #expect(Double(proposedForEqual) / Double(runs) <= 0.05)
        #expect(proposedForBetter > runs / 2)
    }
}
