import Basics
import Foundation
@testable import ExperimentsTestSupport
import Testing
import EventContract
import TestSupport
@testable import Experiments
@testable import Views

/// Early in an experiment most customers are still pending, and those who act decide at once: the
/// rate over the decided is no estimate. `results` shows where the rate will end up, for certain.
@Suite struct EarlyRatesTests: SimulationFixtures {
    @Test func aRateWithFewerDecidedThanPendingShowsBoundsOverTheExposedNotAnIntervalOverTheDecided() {
        let early = ResultsReport.Rate(successes: 215, failures: 10, pending: 372)
        #expect(early.early)
        #expect(early.bounds == ProportionInterval(low: 0.360134, high: 0.983250))
        #expect(ResultsReport.describe(early) == "≥ 36.0% and ≤ 98.3%: 215 of 597, 372 pending")
        let settled = ResultsReport.Rate(successes: 215, failures: 200, pending: 100)
        #expect(!settled.early)
        #expect(ResultsReport.describe(settled).hasPrefix("51.8% ("))
        #expect(ResultsReport.Rate(successes: 5, failures: 5, pending: 0).bounds == nil)
    }

    @Test func theRenewedRateOfCustomersSeenOnDayOneEndsInsideTheBoundsShownOnDayTwoForEverySeed() throws {
        for seed in UInt64(1)...8 {
            var simulator = EventSimulator(arms: [Self.control, Self.treatment], customers: 600)
            simulator.days = 1
            simulator.run(seed: seed)
            let source = simulator.source
            let early = try ResultsReport.compute(source: source, environment: "production",
                                                  now: UTCTime(milliseconds: simulator.start + 2 * EventTime.day))
            let final = try ResultsReport.compute(source: source, environment: "production",
                                                  now: UTCTime(milliseconds: simulator.start + 80 * EventTime.day))
            for (before, after) in zip(early.rows, final.rows) {
                #expect(before.exposed == after.exposed, "the same customers")
                #expect(before.renewed.early, "seed \(seed) \(before.rule): \(before.renewed)")
                #expect(after.renewed.pending == 0)
                let bounds = try #require(before.renewed.bounds)
                let settled = Double(after.renewed.successes) / Double(after.exposed)
                #expect(bounds.low <= settled + 1e-6 && settled <= bounds.high + 1e-6, "seed \(seed) \(before.rule): \(settled) outside \(bounds)")
            }
            #expect(early.text().contains("≥ "), "seed \(seed)")
            #expect(early.markdown().contains("≥ "))
        }
    }
}
