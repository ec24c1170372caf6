import Basics
import EventContract
@testable import Experiments
@testable import ExperimentsTestSupport
import Foundation
import Testing
import TestSupport
@testable import Views

/// `results --versus ARM` (offer against switch, not only against the holdout) and a group's periods
/// pooled, stratified by period: both checked against simulations whose true rates are known.
@Suite struct ArmAgainstArmTests {
    /// A holdout, an offer that keeps 36% and a switch that keeps 33%: offer against switch is the choice.
    static func threeArms(customers: Int) -> EventSimulator {
        var simulator = EventSimulator(arms: [
            EventSimulator.Arm(rule: "holdout", keepRate: 0.30, splitControl: true, answer: "none"),
            EventSimulator.Arm(rule: "offer", keepRate: 0.36, answer: "promotionalOffer", offer: "half"),
            EventSimulator.Arm(rule: "switch", keepRate: 0.33, answer: "alternateProduct", alternateProduct: "com.example.stillpoint.yearly"),
        ], customers: customers)
        simulator.duplicateShare = 0
        return simulator
    }

    static func report(_ source: MemoryEventSource, now: Int64) throws -> ResultsReport {
        try ResultsReport.compute(source: source, environment: "production", now: UTCTime(milliseconds: now), readers: 0)
    }

    @Test func aUserComparesTheSwitchWithTheOfferInEveryFormat() throws {
        var simulator = Self.threeArms(customers: 6000)
        simulator.run(seed: 21)
        var report = try Self.report(simulator.source, now: simulator.start + 60 * EventTime.day)
        #expect(report.splitArms == ["holdout", "offer", "switch"])
        report.versus = report.versusComparisons("offer")
        let block = try #require(report.versus?.first)
        #expect(report.versus?.count == 1 && block.reference == "offer" && block.alpha == 0.025)
        #expect(block.arms.map(\.rule) == ["holdout", "switch"])
        let holdout = try #require(block.arms.first)
        // The holdout keeps 6 points fewer than the offer: told apart at 6,000 customers.
        #expect(holdout.kept24h.verdict == .worse && holdout.kept24h.interval?.contains(-0.06) == true, "\(holdout.kept24h)")
        // The control comparisons are unchanged: what the recommendation and promote read.
        #expect(report.comparisons.first?.control == "holdout")
        #expect(report.text().contains("Split group cancel-flow/yearly-upsell: vs offer\n  holdout vs offer: kept at 24 h lower"), "\(report.text())")
        #expect(report.markdown().contains("- switch vs offer: kept at 24 h"))
        #expect(report.html(timeline: .empty).contains("<h2>Split group cancel-flow/yearly-upsell: vs offer</h2>"))
        let json = String(decoding: try report.jsonData(), as: UTF8.self)
        #expect(json.contains(#""reference" : "offer""#))
    }

    @Test func armAgainstArmIntervalsCoverTheSimulatedTruthOverManySeeds() async throws {
        // On a thread of its own: many reports must not hold Swift's small pool from the other tests.
        // Truth: switch − offer keeps 3 points fewer; renewing is keeping and then renewing (80%).
        let (keptTruth, renewedTruth) = (0.33 - 0.36, 0.8 * (0.33 - 0.36))
        let covered = try await onOwnThread { () throws -> (kept: Int, renewed: Int, keptMean: Double, renewedMean: Double, runs: Int) in
            var simulator = Self.threeArms(customers: 1200)
            let runs = 50
            var kept = 0, renewed = 0, keptSum = 0.0, renewedSum = 0.0
            for seed in UInt64(1) ... UInt64(runs) {
                simulator.run(seed: seed * 53 + 2)
                let report = try Self.report(simulator.source, now: simulator.start + 60 * EventTime.day)
                guard let versus = report.versusComparisons("offer").first?.arms.first(where: { $0.rule == "switch" }) else { continue }
                if versus.kept24h.interval?.contains(keptTruth) == true { kept += 1 }
                if versus.renewed.interval?.contains(renewedTruth) == true { renewed += 1 }
                keptSum += versus.kept24h.difference ?? .nan
                renewedSum += versus.renewed.difference ?? .nan
            }
            return (kept, renewed, keptSum / Double(runs), renewedSum / Double(runs), runs)
        }
        print("Arm against arm: the interval held the true difference in \(covered.kept) (kept) and \(covered.renewed) (renewed) of \(covered.runs) seeds; "
              + "mean differences \(covered.keptMean) and \(covered.renewedMean) against \(keptTruth) and \(renewedTruth)")
        #expect(Double(covered.kept) / Double(covered.runs) >= 0.95)
        #expect(Double(covered.renewed) / Double(covered.runs) >= 0.95)
        // Centred on the truth: over 50 seeds the mean difference's standard error is about 0.3 points.
        #expect(abs(covered.keptMean - keptTruth) < 0.01 && abs(covered.renewedMean - renewedTruth) < 0.01)
    }

    /// One experiment in two periods: 50/50 for ten days, then 70/30 for ten more, the same effect in both.
    static func twoPeriods(seed: UInt64, customers: Int) -> (source: MemoryEventSource, end: Int64) {
        let arms = [EventSimulator.Arm(rule: "keep-message", keepRate: 0.30, splitControl: true),
                    EventSimulator.Arm(rule: "half-price", keepRate: 0.36, answer: "promotionalOffer", offer: "half")]
        var first = EventSimulator(arms: arms, customers: customers)
        first.duplicateShare = 0
        first.run(seed: seed)
        var second = EventSimulator(arms: arms, customers: customers)
        second.duplicateShare = 0
        second.arms[0].weight = 0.7
        second.arms[1].weight = 0.3
        second.start += 10 * EventTime.day
        second.run(seed: seed &+ 0x9E37)
        var files = first.source.files
        for (path, data) in second.source.files { files[path, default: Data()].append(data) }
        return (MemoryEventSource(files: files), second.start + 60 * EventTime.day)
    }

    @Test func aGroupInTwoPeriodsIsPooledBesideThePerPeriodComparisonsInEveryFormat() throws {
        let (source, end) = Self.twoPeriods(seed: 7, customers: 3000)
        let report = try Self.report(source, now: end)
        #expect(report.comparisons.count == 2, "two periods")
        let pooled = try #require(report.pooled?.first)
        #expect(report.pooled?.count == 1 && pooled.label == "all periods (stratified)" && pooled.control == "keep-message")
        #expect(report.method.pooledDifferenceInterval?.contains("inverse-variance") == true && pooled.method.contains("inverse-variance"))
        let arm = try #require(pooled.arms.first)
        #expect(arm.periods.count == 2)
        let weights = arm.periods.compactMap(\.kept24hWeight)
        #expect(weights.count == 2 && abs(weights.reduce(0, +) - 1) < 1e-5)
        // The 70/30 period has fewer treated customers, so its difference is noisier and weighs less.
        #expect(weights[0] > weights[1], "\(weights)")
        #expect(report.text().contains("Split group cancel-flow/yearly-upsell, all periods (stratified): control keep-message"), "\(report.text())")
        #expect(report.text().contains("half-price vs keep-message, all periods (stratified): kept at 24 h"))
        #expect(report.text().contains("Split group cancel-flow/yearly-upsell (period 50/50 since "), "every per-period row keeps its period")
        #expect(report.moneyTable(flow: "cancel-flow").allSatisfy { $0[0].contains(", period ") }, "money rows too")
        #expect(report.markdown().contains("all periods (stratified)"))
        #expect(report.html(timeline: .empty).contains("all periods (stratified): kept at 24 h"))
        let json = String(decoding: try report.jsonData(), as: UTF8.self)
        #expect(json.contains(#""label" : "all periods (stratified)""#) && json.contains(#""method" : "inverse-variance weights per period""#))
    }

    @Test func thePooledIntervalCoversTheTruthOverManySeedsAndIsNarrowerThanEitherPeriods() async throws {
        let result = try await onOwnThread { () throws -> (covered: Int, narrower: Int, mean: Double, runs: Int) in
            let runs = 50
            var covered = 0, narrower = 0, sum = 0.0
            for seed in UInt64(1) ... UInt64(runs) {
                let (source, end) = Self.twoPeriods(seed: seed * 97 + 3, customers: 1000)
                let report = try Self.report(source, now: end)
                guard let arm = report.pooled?.first?.arms.first, let pooled = arm.kept24h.interval else { continue }
                if pooled.contains(0.36 - 0.30) { covered += 1 }
                sum += arm.kept24h.difference ?? .nan
                let widths = report.comparisons.compactMap { $0.arms.first?.kept24h.interval.map { $0.high - $0.low } }
                if widths.count == 2, widths.allSatisfy({ pooled.high - pooled.low < $0 }) { narrower += 1 }
            }
            return (covered, narrower, sum / Double(runs), runs)
        }
        print("Pooled periods: the interval held the true difference in \(result.covered) of \(result.runs) seeds, narrower than both "
              + "periods' in \(result.narrower); mean pooled difference \(result.mean) against 0.06")
        #expect(Double(result.covered) / Double(result.runs) >= 0.95)
        #expect(result.narrower == result.runs)
        #expect(abs(result.mean - 0.06) < 0.01, "centred on the truth")
    }
}
