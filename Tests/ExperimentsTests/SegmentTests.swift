import Basics
import EventContract
@testable import Experiments
@testable import ExperimentsTestSupport
import Foundation
import Testing
import Views

/// `results --by`: for whom an answer works, each segment's arms against the segment's own control,
/// with Holm's adjustment over every segment comparison shown.
@Suite struct SegmentTests {
    static let storefronts = ["DEU", "FRA", "GBR", "JPN", "USA"]

    static func experiment(offerInGermany: Double) -> EventSimulator {
        var simulator = EventSimulator(arms: [
            EventSimulator.Arm(rule: "keep-message", keepRate: 0.30, splitControl: true),
            EventSimulator.Arm(rule: "half-price", keepRate: 0.30, answer: "promotionalOffer", offer: "half", keepRateBy: ["DEU": offerInGermany]),
        ], customers: 5000)
        simulator.storefronts = storefronts
        simulator.duplicateShare = 0
        return simulator
    }

    @Test func anOfferThatWorksInOneStorefrontOnlyIsFoundThereAndNowhereElse() throws {
        var simulator = Self.experiment(offerInGermany: 0.50)
        simulator.run(seed: 12)
        let report = try ResultsReport.compute(source: simulator.source, environment: "production",
                                               now: UTCTime(milliseconds: simulator.start + 20 * EventTime.day), breakdown: .storefront)
        let segments = try #require(report.segmentComparisons)
        #expect(segments.count == Self.storefronts.count)
        #expect(report.method.segmentAdjustment?.contains("Holm") == true)
        for segment in segments {
            let arm = try #require(segment.arms.first)
            #expect(segment.control == "keep-message" && arm.rule == "half-price")
            if segment.value == "DEU" {
                #expect(arm.kept24h.verdict == .better, "\(arm.kept24h)")
                #expect(arm.kept24h.interval?.contains(0.20) == true, "\(arm.kept24h)")
            } else {
                #expect(arm.kept24h.verdict == .notDistinguishableYet, "\(segment.value): \(arm.kept24h)")
            }
        }
        let text = report.text()
        #expect(text.contains("Within each storefront, each arm against its control (Holm-adjusted over 5 comparisons per metric"), "\(text)")
        #expect(text.contains("DEU, half-price vs keep-message (exploratory): kept at 24 h higher"), "\(text)")
        #expect(report.markdown().contains("<details><summary>Within each storefront</summary>"))
    }

    @Test func whenNoSegmentDiffersFalseDiscoveriesStayUnderFivePercentOverManySeeds() throws {
        // Five segments, two metrics: a per-segment 5% test would name a false winner in about
        // 1 − 0.95⁵ ≈ 23% of experiments per metric. Holm keeps any false one under 5%.
        var simulator = Self.experiment(offerInGermany: 0.30)
        simulator.customers = 1200
        let runs = 100
        var falseDiscoveries = 0
        for seed in UInt64(1) ... UInt64(runs) {
            simulator.run(seed: seed * 31)
            let report = try ResultsReport.compute(source: simulator.source, environment: "production",
                                                   now: UTCTime(milliseconds: simulator.start + 20 * EventTime.day), breakdown: .storefront,
                                                   readers: 0)
            let verdicts = (report.segmentComparisons ?? []).flatMap(\.arms).map(\.kept24h.verdict)
            #expect(verdicts.count == Self.storefronts.count)
            if verdicts.contains(where: { $0 == .better || $0 == .worse }) { falseDiscoveries += 1 }
        }
        print("Segments: a false winner in \(falseDiscoveries) of \(runs) experiments with no difference anywhere")
        #expect(Double(falseDiscoveries) / Double(runs) <= 0.05)
    }

    @Test func holmTestsTheSmallestPValueAtFivePercentOverMAndStopsAtTheFirstItKeeps() {
        let levels = ResultsReport.holmLevels([0.001, 0.04, 0.012, nil, 0.5])
        // Sorted: 0.001 (≤ 0.05/4), 0.012 (≤ 0.05/3), 0.04 (> 0.05/2 = 0.025: kept, and so is 0.5).
        #expect(levels[0] == 0.05 / 4 && levels[2] == 0.05 / 3 && levels[1] == 0.05 / 2 && levels[4] == 0.05 / 2 && levels[3] == nil)
        let p = DifferenceConfidenceSequence.pValue(treatment: .init(successes: 450, trials: 1000), control: .init(successes: 300, trials: 1000))
        let interval = DifferenceConfidenceSequence.interval(treatment: .init(successes: 450, trials: 1000), control: .init(successes: 300, trials: 1000),
                                                            alpha: p! * 1.001)
        #expect(interval.map { $0.low > 0 } == true, "at a level just above its p-value the interval excludes 0")
    }
}
