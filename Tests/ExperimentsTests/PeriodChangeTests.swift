import Basics
import Foundation
@testable import ExperimentsTestSupport
import Testing
import EventContract
import TestSupport
@testable import Experiments
@testable import Views

/// A running split group changed by removing an arm, or by changing what one arm matches: the past
/// period is still checked against the layout its decisions recorded, an arm stopped on purpose does
/// not warn forever, and a period whose arms match different customers is not read as a fair split.
@Suite struct PeriodChangeTests: PeriodFixtures {
    static let threeArms = "keep-message*:0-4500,upsell-yearly:4500-9000,plain:9000-10000"
    static let twoArms = "keep-message*:0-5000,upsell-yearly:5000-10000"

    /// Customers exposed under `layouts` one after another (ten days each), each in the arm its bucket
    /// falls in, as serve assigns it; `lose` is the share of `plain`'s decisions lost (for a sample-ratio
    /// mismatch).
    static func events(_ layouts: [String], customers: Int, seed: UInt64, lose: Double = 0) -> (source: MemoryEventSource, end: Int64) {
        var random = SplitMix64(seed: seed)
        let start = EventTime.parse("2026-10-01T00:00:00.000Z")!
        var decisions: [String] = []
        for index in 0 ..< customers {
            let period = index * layouts.count / customers
            let layout = layouts[period]
            let bucket = Int(random.below(10_000))
            let arms = SplitLayoutText.arms(layout)
            var lower = 0.0
            var rule = arms.last?.rule ?? ""
            for arm in arms {
                if Double(bucket) < (lower + arm.percent) * 100 { rule = arm.rule; break }
                lower += arm.percent
            }
            if rule == "plain", random.chance(lose) { continue }
            let time = start + Int64(period) * 10 * EventTime.day + random.below(9 * EventTime.day)
            decisions.append(Self.decision(random.hex(64), time: time, rule: rule, layout: layout, random: &random))
        }
        return (JoinTests.source(decisions: decisions, outcomes: []), start + Int64(layouts.count) * 10 * EventTime.day + 40 * EventTime.day)
    }

    static var today: ResultsConfiguration {
        DataChecksTests.configuration([("keep-message", 50), ("upsell-yearly", 50)])
    }

    @Test("removing an arm keeps the sample-ratio check of the period before, against the shares its decisions recorded, and the stopped arm does not warn as unconfigured",
          arguments: [UInt64(1), 2, 3])
    func removingAnArmKeepsThePastPeriodsCheck(seed: UInt64) throws {
        let (source, end) = Self.events([Self.threeArms, Self.twoArms], customers: 8_000, seed: seed)
        let report = try ResultsReport.compute(source: source, environment: "production", now: UTCTime(milliseconds: end),
                                               configuration: Self.today)
        #expect(report.comparisons.count == 2)
        let past = try #require(report.comparisons.first { $0.splitLayout == Self.threeArms })
        let check = try #require(past.sampleRatio)
        #expect(check.configuredPercents == ["keep-message": 45, "upsell-yearly": 45, "plain": 10])
        #expect(check.note == nil, "\(check.note ?? "")")
        #expect(check.pValue != nil && check.mismatch == false)
        #expect(report.checks.rulesNotConfigured.isEmpty)
        #expect(!report.warnings.contains { $0.contains("cancel-flow/plain") }, "\(report.warnings)")
    }

    @Test("the past period's check still finds customers lost from the removed arm")
    func aPastPeriodsMismatchIsStillFound() throws {
        let (source, end) = Self.events([Self.threeArms, Self.twoArms], customers: 12_000, seed: 7, lose: 0.5)
        let report = try ResultsReport.compute(source: source, environment: "production", now: UTCTime(milliseconds: end),
                                               configuration: Self.today)
        let past = try #require(report.comparisons.first { $0.splitLayout == Self.threeArms })
        #expect(past.sampleRatio?.mismatch == true, "\(String(describing: past.sampleRatio))")
    }

    @Test("an arm removed from the manifests before its group's new layout has any exposure is still named, in plain words")
    func aRemovedArmInTheLatestPeriodIsNamed() throws {
        let (source, end) = Self.events([Self.threeArms], customers: 4_000, seed: 4)
        let report = try ResultsReport.compute(source: source, environment: "production", now: UTCTime(milliseconds: end),
                                               configuration: Self.today)
        let exposed = report.rows.first { $0.rule == "plain" }?.exposed ?? 0
        #expect(report.checks.rulesNotConfigured == [.init(flow: "cancel-flow", rule: "plain", exposed: exposed)])
        #expect(report.warnings.contains {
            $0.contains("customers were exposed to a rule not in the configuration read (manifests in manifests) for this environment: "
                        + "cancel-flow/plain (\(ResultsReport.count(exposed)) exposed). It was renamed or removed")
        }, "\(report.warnings)")
        // The arms still configured match alike, so the period is tested all the same.
        #expect(report.comparisons.first?.sampleRatio?.pValue != nil)
    }

    @Test("a period whose layout says its arms match different customers is not tested for sample ratio and its verdicts carry a warning; unknown attributes are ignored")
    func armsMatchingDifferentCustomersAreNotAFairSplit() throws {
        let differing = Self.twoArms + ";confirm=abc;match=0123abcd;zz=1"
        let (source, end) = Self.events([Self.twoArms, differing], customers: 6_000, seed: 11)
        let report = try ResultsReport.compute(source: source, environment: "production", now: UTCTime(milliseconds: end),
                                               configuration: Self.today)
        let before = try #require(report.comparisons.first { $0.splitLayout == Self.twoArms })
        let after = try #require(report.comparisons.first { $0.splitLayout == differing })
        #expect(before.sampleRatio?.pValue != nil && before.verdictWarning == nil)
        #expect(after.sampleRatio?.configuredPercents == ["keep-message": 50, "upsell-yearly": 50])
        #expect(after.sampleRatio?.pValue == nil)
        #expect(after.sampleRatio?.note?.contains("match different customers") == true)
        #expect(after.verdictWarning?.contains("may come from whom they reach") == true)
        #expect(after.recommendation?.hasPrefix("Do not decide yet") == true)
        #expect(ResultsReport.periodLabel(differing, since: nil) == "period 50/50")
        #expect(ResultsReport.layoutText(differing) == "keep-message 50% (control), upsell-yearly 50%")
    }
}
