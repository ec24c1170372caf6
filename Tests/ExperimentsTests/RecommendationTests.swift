import Basics
import EventContract
@testable import Experiments
@testable import ExperimentsTestSupport
import Foundation
import Testing
import Views

/// The one line a product manager decides from: what the evidence supports for a split group, with
/// the lift relative to the control beside the points.
@Suite struct RecommendationTests {
    static func report(treatment: Double, control: Double, customers: Int, seed: UInt64) throws -> ResultsReport {
        var simulator = EventSimulator(arms: [EventSimulator.Arm(rule: "keep-message", keepRate: control, splitControl: true),
                                              EventSimulator.Arm(rule: "upsell-yearly", keepRate: treatment)], customers: customers)
        simulator.run(seed: seed)
        return try ResultsReport.compute(source: simulator.source, environment: "production",
                                         now: UTCTime(milliseconds: simulator.start + 60 * EventTime.day))
    }

    @Test func aClearWinnerIsRecommendedForPromotionWithItsRelativeLift() throws {
        let report = try Self.report(treatment: 0.45, control: 0.30, customers: 4000, seed: 3)
        let comparison = try #require(report.comparisons.first)
        let arm = try #require(comparison.arms.first)
        let control = try #require(report.rows.first { $0.rule == "keep-message" }?.renewed.rate)
        let difference = try #require(arm.renewed.difference)
        #expect(abs((arm.renewed.relative ?? 0) - difference / control) < 1e-5)
        let recommendation = try #require(comparison.recommendation)
        #expect(recommendation.hasPrefix("Promote upsell-yearly: it renews more than keep-message (+"), "\(recommendation)")
        #expect(recommendation.contains("% relative)") && recommendation.contains("retention-sync promote yearly-upsell"))
        #expect(report.text().contains("  → \(recommendation)"))
        #expect(report.markdown().contains("**\(recommendation)**"))
        #expect(ResultsReport.sentence(arm.renewed).hasSuffix(String(format: ", %+.0f%% relative", (arm.renewed.relative ?? 0) * 100)))
    }

    @Test func anArmThatLosesLeavesTheControlAndTooFewCustomersMeanKeepRunning() throws {
        let losing = try #require(try Self.report(treatment: 0.15, control: 0.40, customers: 4000, seed: 4).comparisons.first?.recommendation)
        #expect(losing.hasPrefix("Keep keep-message: every arm renews less than it"), "\(losing)")
        let early = try #require(try Self.report(treatment: 0.31, control: 0.30, customers: 300, seed: 5).comparisons.first?.recommendation)
        #expect(early.hasPrefix("Keep running: upsell-yearly is not told apart from keep-message on renewal yet"), "\(early)")
    }
}
