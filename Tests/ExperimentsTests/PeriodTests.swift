import Basics
import Foundation
@testable import ExperimentsTestSupport
import Testing
import EventContract
import TestSupport
@testable import Experiments
@testable import Views

/// A split group re-weighted in the middle of an experiment: each configuration is a period of its
/// own, each customer counts once, in the arm and period of their first exposure — checked against a
/// simulation that knows every customer's bucket, arm and period.
@Suite struct PeriodTests: PeriodFixtures {
    @Test("a group moved from 50/50 to 70/30 mid-experiment is reported as two periods; every customer counts once, in the arm and period of their first exposure",
          arguments: [UInt64(70_30), 1, 2, 3, 4, 5])
    func reweightedGroupIsReportedInPeriods(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let start = EventTime.parse("2026-10-01T00:00:00.000Z")!
        let switchover = start + 10 * EventTime.day
        var decisions: [String] = []
        var outcomes: [String] = []
        // Known truth: customers per (layout, arm) by first exposure.
        var truth: [String: Int] = [:]
        let customers = 6_000
        for index in 0 ..< customers {
            let customer = random.hex(64)
            let bucket = Int(random.below(10_000))
            let exposure = start + random.below(20 * EventTime.day)
            let layout = exposure < switchover ? Self.first : Self.second
            let rule = Self.arm(bucket, layout)
            truth["\(layout)|\(rule)", default: 0] += 1
            decisions.append(Self.decision(customer, time: exposure, rule: rule, layout: layout, random: &random))
            // A third come back days later; after the switchover some land in the other arm.
            if index % 3 == 0 {
                let again = exposure + EventTime.day + random.below(8 * EventTime.day)
                let later = again < switchover ? Self.first : Self.second
                decisions.append(Self.decision(customer, time: again, rule: Self.arm(bucket, later), layout: later, random: &random))
            }
            let keep = rule == "keep-message" ? 0.3 : 0.5
            if !random.chance(keep) {
                outcomes.append(JoinTests.outcome(customer, EventTime.format(exposure + EventTime.hour), "DID_CHANGE_RENEWAL_STATUS",
                                                  subtype: "AUTO_RENEW_DISABLED"))
            }
        }
        let source = JoinTests.source(decisions: decisions, outcomes: outcomes)
        // The manifests now say 70/30; the first period must be checked against its own 50/50.
        let report = try ResultsReport.compute(source: source, environment: "production",
                                               now: UTCTime(milliseconds: start + 60 * EventTime.day),
                                               configuration: DataChecksTests.configuration([("keep-message", 70), ("upsell-yearly", 30)]))

        #expect(report.rows.count == 4)
        #expect(report.rows.map(\.exposed).reduce(0, +) == customers, "no customer counted twice")
        for row in report.rows {
            let layout = try #require(row.splitLayout)
            #expect(row.exposed == truth["\(layout)|\(row.rule)"], "\(row.rule) in \(layout)")
        }
        #expect(report.comparisons.count == 2)
        let (before, after) = (report.comparisons[0], report.comparisons[1])
        #expect(before.splitLayout == Self.first && after.splitLayout == Self.second)
        #expect((before.periodSince ?? "") < (after.periodSince ?? ""))
        #expect(before.sampleRatio?.configuredPercents == ["keep-message": 50, "upsell-yearly": 50])
        #expect(after.sampleRatio?.configuredPercents == ["keep-message": 70, "upsell-yearly": 30])
        #expect(before.sampleRatio?.mismatch == false && after.sampleRatio?.mismatch == false)
        // Both periods find the arm that keeps more (true rates 50% against 30%).
        #expect(before.arms.first?.kept24h.verdict == .better && after.arms.first?.kept24h.verdict == .better)

        let text = report.text()
        #expect(text.contains("Split group cancel-flow/yearly-upsell (period 50/50 since "), "\(text)")
        #expect(text.contains("Split group cancel-flow/yearly-upsell (period 70/30 since "), "\(text)")
        #expect(text.contains(": keep-message 70% (control), upsell-yearly 30%)"), "\(text)")
        let markdown = report.markdown()
        #expect(markdown.contains("period 50/50 since") && markdown.contains("period 70/30 since"))
        let json = String(decoding: try report.jsonData(), as: UTF8.self)
        #expect(json.contains(#""splitLayout" : "keep-message*:0-7000,upsell-yearly:7000-10000""#), "\(json.prefix(2000))")
    }

    @Test("a group seen under one layout only names no period in text")
    func onePeriodNamesNone() throws {
        var simulator = EventSimulator(arms: [DataChecksTests.control, DataChecksTests.treatment], customers: 400)
        simulator.run(seed: 5)
        let report = try ResultsReport.compute(source: simulator.source, environment: "production",
                                               now: DataChecksTests.date(simulator.start + 80 * EventTime.day))
        #expect(report.rows.allSatisfy { $0.splitLayout == simulator.layout })
        #expect(!report.text().contains("(period ") && !report.text().contains(", period "))
    }
}
