import Basics
import CLIKit
@testable import CommandTestSupport
import EventContract
@testable import Experiments
@testable import ExperimentsTestSupport
import Foundation
import Manifests
import Notifications
import Operations
import Reconciler
import RetentionMessagingModels
import Testing
import TestSupport
import Views

/// Guardrails: a split group's limits on how much worse than the control an arm may distinguishably do,
/// checked with the same always-valid intervals as the verdicts.
@Suite("Guardrails that stop a harmful arm", .serialized)
struct GuardrailTests {
    static func simulation(upsellKeeps: Double, customers: Int, seed: UInt64) -> EventSimulator {
        PromoteTests.simulation(upsellKeeps: upsellKeeps, customers: customers, seed: seed)
    }

    static let configuration = ResultsConfiguration(source: "test", rules: [], guardrails: [
        .init(flow: "cancel-flow", group: "yearly-upsell", metric: "kept24h", maxDrop: 2),
    ])

    /// The first look (days after the first exposure) at which the upsell arm crossed its guardrail; nil for none.
    static func firstCrossing(_ simulator: EventSimulator, looks: [Int64], configuration: ResultsConfiguration) throws -> Int64? {
        for day in looks {
            let report = try ResultsReport.compute(source: simulator.source, environment: "sandbox",
                                                   now: UTCTime(milliseconds: simulator.start + day * EventTime.day),
                                                   configuration: configuration, readers: 0)
            if report.comparisons.contains(where: { $0.guardrails?.contains { $0.crossed && $0.rule == "upsell-yearly" } == true }) { return day }
        }
        return nil
    }

    @Test("over many simulated experiments, guardrails fire on a harmful arm within days, and on a harmless one at most at the stated rate, however often checked")
    func guardrailsFireOnHarmAndRarelyOtherwise() async throws {
        // On a thread of its own: a hundred reports must not hold Swift's small pool from the other tests.
        try await onOwnThread { try Self.fireOnHarmAndRarelyOtherwise() }
    }

    static func fireOnHarmAndRarelyOtherwise() throws {
        // Exposures spread over 10 days; the job looks on days 3, 6 and 11.
        let looks: [Int64] = [3, 6, 11]
        // Keeps 18% against the control's 30%: 12 points worse, far past the 2-point limit.
        let harmfulRuns = 12
        var caught = 0, caughtByDay6 = 0
        for seed in UInt64(1) ... UInt64(harmfulRuns) {
            let harmful = Self.simulation(upsellKeeps: 0.18, customers: 3000, seed: seed * 131)
            if let day = try Self.firstCrossing(harmful, looks: looks, configuration: Self.configuration) {
                caught += 1
                if day <= 6 { caughtByDay6 += 1 }
            }
        }
        // Equal to the control, checked at every look against the strictest limit (0 points).
        let strict = ResultsConfiguration(source: "test", rules: [], guardrails: [
            .init(flow: "cancel-flow", group: "yearly-upsell", metric: "kept24h", maxDrop: 0),
        ])
        let harmlessRuns = 25
        var alarms = 0
        for seed in UInt64(1) ... UInt64(harmlessRuns) {
            let harmless = Self.simulation(upsellKeeps: 0.30, customers: 1500, seed: seed * 131 + 1)
            if try Self.firstCrossing(harmless, looks: looks, configuration: strict) != nil { alarms += 1 }
        }
        print("Guardrails: a 12-point harm caught in \(caught) of \(harmfulRuns) (\(caughtByDay6) by day 6); "
              + "equal arms alarmed in \(alarms) of \(harmlessRuns) at any of \(looks.count) looks")
        #expect(caught >= harmfulRuns - 1)
        #expect(caughtByDay6 >= harmfulRuns / 2)
        #expect(Double(alarms) / Double(harmlessRuns) <= 0.05)
    }

    @Test("results shows a crossed guardrail in every format and warns; one that holds is shown as holding")
    func resultsShowsGuardrails() throws {
        let simulator = Self.simulation(upsellKeeps: 0.15, customers: 3000, seed: 5)
        let report = try ResultsReport.compute(source: simulator.source, environment: "sandbox",
                                               now: UTCTime(milliseconds: simulator.start + 30 * EventTime.day),
                                               configuration: Self.configuration, readers: 0)
        let check = try #require(report.comparisons.first?.guardrails?.first)
        #expect(check.crossed && check.rule == "upsell-yearly" && (check.upperEnd ?? 0) < -2)
        #expect(report.warnings.contains { $0.contains("guardrail crossed — upsell-yearly kept at 24 h is distinguishably more than 2 points below upsell-control") })
        #expect(report.text().contains("guardrail CROSSED: upsell-yearly kept at 24 h"))
        #expect(report.markdown().contains(":warning: guardrail **crossed**"))
        #expect(report.html(timeline: .empty).contains("guardrail crossed: upsell-yearly kept at 24 h"))
        let json = try #require(try JSONSerialization.jsonObject(with: report.jsonData()) as? [String: Any])
        let compared = try #require((json["comparisons"] as? [[String: Any]])?.first?["guardrails"] as? [[String: Any]])
        #expect(compared.first?["crossed"] as? Bool == true && compared.first?["rule"] as? String == "upsell-yearly")
        let events = RunEvents.events(results: report, bundleId: "com.example.stillpoint", environment: .sandbox)
        #expect(events.contains { $0.kind == .guardrailCrossed && $0.details["arm"] == "upsell-yearly" })

        let fine = try ResultsReport.compute(source: Self.simulation(upsellKeeps: 0.40, customers: 3000, seed: 6).source, environment: "sandbox",
                                             now: UTCTime(milliseconds: simulator.start + 30 * EventTime.day), configuration: Self.configuration, readers: 0)
        #expect(fine.comparisons.first?.guardrails?.allSatisfy { !$0.crossed } == true)
        #expect(fine.text().contains("guardrail holds: upsell-yearly kept at 24 h is not distinguishably"))
    }

    @Test("promote stops an arm that crossed its guardrail: its rule removed, the control given the group, exit 3")
    func promoteStopsTheHarmfulArm() async throws {
        let harness = try CommandHarness()
        let flowFile = harness.file("manifests/cancel-flow.yaml")
        var text = try String(contentsOf: flowFile, encoding: .utf8)
        text += "guardrails:\n  - group: yearly-upsell\n    metric: kept24h\n    maxDrop: 2\n"
        try text.write(to: flowFile, atomically: true, encoding: .utf8)
        let simulator = Self.simulation(upsellKeeps: 0.15, customers: 3000, seed: 9)
        try simulator.write(to: harness.file("manifests/.retention-sync"))
        let run = await harness.run(["promote", "yearly-upsell", "--env", "sandbox", "--as-of", PromoteTests.asOf(simulator)])
        #expect(run.code == .needsAttention, "\(run.stderr)")
        #expect(run.stdout.hasPrefix("## Stop `upsell-yearly` in `cancel-flow` / `yearly-upsell`: guardrail crossed"), "\(run.stdout)")
        #expect(run.stderr.contains("guardrail crossed in cancel-flow / yearly-upsell"))
        let (manifests, _) = try Workspace.load(directory: harness.file("manifests"), displayPath: "manifests")
        #expect(!manifests.rules.contains { $0.name == "upsell-yearly" })
        #expect(manifests.rules.first { $0.name == "upsell-control" }?.match.split == nil)
    }

    @Test("stopping one arm of three gives its share to the control, rewriting only the percent")
    func stoppingOneOfThreeArms() throws {
        let text = """
            rules:
              - name: a
                match:
                  split: { group: g, percent: 30 }
                response: { message: m }
              - name: b   # the harmful one
                match:
                  split: { group: g, percent: 30 }
                response: { message: m }
              - name: control
                match:
                  split: { group: g, percent: 40, control: true }
                response: { message: m }
            """
        let edited = try Promotion.edit(text, file: "flow.yaml", winner: "control", losers: ["b"], winnerPercent: 70)
        #expect(edited == """
            rules:
              - name: a
                match:
                  split: { group: g, percent: 30 }
                response: { message: m }
              - name: control
                match:
                  split: { group: g, percent: 70, control: true }
                response: { message: m }
            """)
    }

    @Test("a guardrail for a group the flow does not have, without a control, twice, or with a limit out of range is an error at its line")
    func guardrailMistakesAreErrors() throws {
        let folder = try temporaryFolder("guardrails")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.copyItem(at: Repository.url("manifests"), to: folder.appendingPathComponent("manifests"))
        let flowFile = folder.appendingPathComponent("manifests/cancel-flow.yaml")
        let text = try String(contentsOf: flowFile, encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).count
        try (text + """
            guardrails:
              - group: yearly-upsel
                metric: renewed
                maxDrop: 2
              - group: yearly-upsell
                metric: renewed
                maxDrop: 150
              - group: yearly-upsell
                metric: renewed
                maxDrop: 1
              - group: yearly-upsell
                metric: churn
                maxDrop: 1

            """).write(to: flowFile, atomically: true, encoding: .utf8)
        var diagnostics: [Diagnostic] = []
        do {
            _ = try Workspace.load(directory: folder.appendingPathComponent("manifests"), displayPath: "manifests")
        } catch {
            diagnostics = error.diagnostics
        }
        func found(_ code: String, line: Int) -> Bool {
            diagnostics.contains { $0.code == code && $0.location?.line == lines + line - 1 && $0.location?.file.hasSuffix("cancel-flow.yaml") == true }
        }
        #expect(found("guardrail-unknown-group", line: 2), "\(diagnostics)")
        #expect(found("invalid-guardrail", line: 7), "\(diagnostics)")
        #expect(found("duplicate-guardrail", line: 8), "\(diagnostics)")
        #expect(found("invalid-guardrail", line: 12), "\(diagnostics)")
        #expect(diagnostics.first { $0.code == "guardrail-unknown-group" }?.hint?.contains("yearly-upsell") == true)
    }
}
