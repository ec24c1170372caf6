import Testing
@testable import Experiments

@Suite struct StatisticsTests {
    @Test func wilsonIntervalsMatchPublishedValues() throws {
        // Brown, Cai & DasGupta (2001) and Newcombe (1998) give these to four places.
        let none = try #require(WilsonInterval.interval(successes: 0, trials: 10))
        #expect(none.low == 0)
        #expect(abs(none.high - 0.2775) < 0.0001)
        let half = try #require(WilsonInterval.interval(successes: 5, trials: 10))
        #expect(abs(half.low - 0.2366) < 0.0001 && abs(half.high - 0.7634) < 0.0001)
        let newcombe = try #require(WilsonInterval.interval(successes: 81, trials: 263))
        #expect(abs(newcombe.low - 0.2553) < 0.0001 && abs(newcombe.high - 0.3662) < 0.0001)
        #expect(WilsonInterval.interval(successes: 0, trials: 0) == nil)
    }

    @Test func theAlwaysValidIntervalIsWiderThanAOneLookIntervalAndNarrowsWithCustomers() throws {
        let small = try #require(DifferenceConfidenceSequence.interval(treatment: .init(successes: 40, trials: 100), control: .init(successes: 30, trials: 100)))
        let large = try #require(DifferenceConfidenceSequence.interval(treatment: .init(successes: 4000, trials: 10000), control: .init(successes: 3000, trials: 10000)))
        #expect(small.contains(0.10) && large.contains(0.10))
        #expect(large.high - large.low < small.high - small.low)
        let fixedHalfWidth = WilsonInterval.z95 * (0.4 * 0.6 / 10000 + 0.3 * 0.7 / 10000).squareRoot()
        #expect((large.high - large.low) / 2 > fixedHalfWidth)
        #expect(small.excludesZero == false)
        #expect(large.excludesZero)
        // All or nothing in tiny arms says nothing yet.
        let tiny = try #require(DifferenceConfidenceSequence.interval(treatment: .init(successes: 3, trials: 3), control: .init(successes: 0, trials: 3)))
        #expect(Verdict(difference: tiny) == .notDistinguishableYet)
    }

    @Test func theEstimateOfCustomersNeededIsWhereTheIntervalWouldExcludeZero() throws {
        let needed = try #require(SampleSizeEstimate.customersPerArm(treatmentRate: 0.38, controlRate: 0.35))
        // Counts are whole customers, so the rates at `needed` are a rounding away from 38% and 35%: 2% more covers it.
        let reached = needed + needed / 50
        let at = DifferenceConfidenceSequence.Arm(successes: Int((0.38 * Double(reached)).rounded()), trials: reached)
        let base = DifferenceConfidenceSequence.Arm(successes: Int((0.35 * Double(reached)).rounded()), trials: reached)
        #expect(DifferenceConfidenceSequence.interval(treatment: at, control: base)?.excludesZero == true)
        let before = DifferenceConfidenceSequence.Arm(successes: Int((0.38 * Double(needed / 2)).rounded()), trials: needed / 2)
        let beforeBase = DifferenceConfidenceSequence.Arm(successes: Int((0.35 * Double(needed / 2)).rounded()), trials: needed / 2)
        #expect(DifferenceConfidenceSequence.interval(treatment: before, control: beforeBase)?.excludesZero == false)
        #expect(SampleSizeEstimate.customersPerArm(treatmentRate: 0.35, controlRate: 0.35) == nil)
        #expect(SampleSizeEstimate.customersPerArm(treatmentRate: 0.40, controlRate: 0.30)! < needed)
    }
}
