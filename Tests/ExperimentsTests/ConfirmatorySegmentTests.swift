import Basics
import EventContract
@testable import Experiments
@testable import ExperimentsTestSupport
import Foundation
import Testing
import TestSupport
import Views

/// Segments declared in the manifest before an experiment: the group's layout carries them
/// (`;confirm=storefront`), and `results --by storefront` reports those comparisons as confirmatory,
/// adjusted over the declared family alone; every other breakdown stays exploratory.
@Suite struct ConfirmatorySegmentTests {
    /// The storefront experiment of `SegmentTests`, its decisions recorded under a layout that declares `confirm`.
    static func declared(_ confirm: String?, offerInGermany: Double, customers: Int = 5000) -> EventSimulator {
        var simulator = SegmentTests.experiment(offerInGermany: offerInGermany)
        simulator.customers = customers
        simulator.tenureBands = [("0-1m", 0), ("12m+", 0)]
        if let confirm { simulator.recordedLayout = simulator.layout + ";confirm=\(confirm)" }
        return simulator
    }

    static func report(_ simulator: EventSimulator, by breakdown: ResultsBreakdown) throws -> ResultsReport {
        try ResultsReport.compute(source: simulator.source, environment: "production",
                                  now: UTCTime(milliseconds: simulator.start + 20 * EventTime.day), breakdown: breakdown, readers: 0)
    }

    @Test func aDeclaredStorefrontEffectIsFoundAsConfirmatoryWhileAnUndeclaredBreakdownIsExploratory() throws {
        var simulator = Self.declared("storefront", offerInGermany: 0.50)
        simulator.run(seed: 12)
        let report = try Self.report(simulator, by: .storefront)
        let segments = try #require(report.segmentComparisons)
        #expect(segments.count == SegmentTests.storefronts.count)
        #expect(segments.allSatisfy { $0.confirmatory })
        let germany = try #require(segments.first { $0.value == "DEU" }?.arms.first)
        #expect(germany.kept24h.verdict == .better && germany.kept24h.interval?.contains(0.20) == true, "\(germany.kept24h)")
        for segment in segments where segment.value != "DEU" {
            #expect(segment.arms.first?.kept24h.verdict == .notDistinguishableYet, "\(segment.value)")
        }
        #expect(report.method.segmentAdjustment?.contains("5 comparisons confirmatory") == true, "\(report.method.segmentAdjustment ?? "")")
        #expect(report.text().contains("DEU, half-price vs keep-message (confirmatory): kept at 24 h higher"), "\(report.text())")
        #expect(report.markdown().contains("(confirmatory): kept at 24 h higher"))
        #expect(report.html(timeline: .empty).contains("DEU, half-price vs keep-message (confirmatory): kept at 24 h higher"))
        let json = String(decoding: try report.jsonData(), as: UTF8.self)
        #expect(json.contains(#""confirmatory" : true"#) && json.contains(#""formatVersion" : "2.2""#))

        // The same decisions broken down by tenure, which the layout does not declare: exploratory.
        let byTenure = try Self.report(simulator, by: .tenure)
        #expect(byTenure.segmentComparisons?.isEmpty == false && byTenure.segmentComparisons?.allSatisfy { !$0.confirmatory } == true)
        #expect(byTenure.text().contains("half-price vs keep-message (exploratory)"), "\(byTenure.text())")
        #expect(byTenure.text().contains("all exploratory (no period declares this breakdown"))
    }

    /// An experiment in two periods, the first declaring nothing, the second recorded under `secondLayoutAttribute`.
    static func twoPeriods(secondLayoutAttribute: String) throws -> ResultsReport {
        var first = Self.declared(nil, offerInGermany: 0.30, customers: 2000)
        first.run(seed: 3)
        var second = Self.declared(nil, offerInGermany: 0.30, customers: 2000)
        second.recordedLayout = second.layout + secondLayoutAttribute
        second.start += 12 * EventTime.day
        second.run(seed: 4)
        var files = first.source.files
        for (path, data) in second.source.files { files[path, default: Data()].append(data) }
        return try ResultsReport.compute(source: MemoryEventSource(files: files), environment: "production",
                                         now: UTCTime(milliseconds: second.start + 20 * EventTime.day), breakdown: .storefront, readers: 0)
    }

    @Test func theConfirmatoryFamilyIsAdjustedApartFromTheExploratoryOne() throws {
        // The same customers twice: once with the second period declaring storefront (two families of
        // five), once with it carrying only an attribute that declares nothing (one family of ten).
        let split = try Self.twoPeriods(secondLayoutAttribute: ";confirm=storefront")
        let single = try Self.twoPeriods(secondLayoutAttribute: ";match=0a1b")
        let (segments, alone) = (try #require(split.segmentComparisons), try #require(single.segmentComparisons))
        #expect(segments.filter { $0.confirmatory }.count == 5 && segments.filter { !$0.confirmatory }.count == 5)
        #expect(segments.filter { $0.confirmatory }.allSatisfy { $0.splitLayout?.hasSuffix(";confirm=storefront") == true })
        #expect(alone.count == 10 && alone.allSatisfy { !$0.confirmatory })
        // Holm tests each family's smallest p-value at 5%/5, not 5%/10: its interval is narrower than
        // the same comparison's in the family of ten.
        for family in [true, false] {
            let indices = segments.indices.filter { segments[$0].confirmatory == family }
            let smallest = try #require(indices.min { (segments[$0].arms.first?.kept24hPValue ?? 2) < (segments[$1].arms.first?.kept24hPValue ?? 2) })
            let width = { (segment: ResultsReport.SegmentComparison) in segment.arms.first?.kept24h.interval.map { $0.high - $0.low } ?? 0 }
            #expect(segments[smallest].value == alone[smallest].value)
            #expect(width(segments[smallest]) < width(alone[smallest]), "family \(family)")
        }
        #expect(split.text().contains("over the 5 comparisons confirmatory"), "\(split.text())")
    }

    @Test func withNoRealDifferenceFalseDiscoveriesInTheConfirmatoryFamilyStayUnderFivePercentOverManySeeds() async throws {
        // On a thread of its own: a hundred reports must not hold Swift's small pool from the other tests.
        // Holm keeps the chance of any false direction in the family under 5% for each metric.
        let (falseKept, falseRenewed, incomplete, runs) = try await onOwnThread { () throws -> (Int, Int, Int, Int) in
            var simulator = Self.declared("storefront", offerInGermany: 0.30, customers: 1200)
            let runs = 60
            var falseKept = 0, falseRenewed = 0, incomplete = 0
            for seed in UInt64(1) ... UInt64(runs) {
                simulator.run(seed: seed * 37 + 5)
                let report = try Self.report(simulator, by: .storefront)
                let confirmed = (report.segmentComparisons ?? []).filter(\.confirmatory).flatMap(\.arms)
                if confirmed.count != SegmentTests.storefronts.count { incomplete += 1 }
                func named(_ verdicts: [Verdict]) -> Bool { verdicts.contains { $0 == .better || $0 == .worse } }
                if named(confirmed.map(\.kept24h.verdict)) { falseKept += 1 }
                if named(confirmed.map(\.renewed.verdict)) { falseRenewed += 1 }
            }
            return (falseKept, falseRenewed, incomplete, runs)
        }
        print("Confirmatory segments: a false winner in \(falseKept) (kept at 24 h) and \(falseRenewed) (renewed) of \(runs) experiments with no difference anywhere")
        #expect(incomplete == 0, "every run has a confirmatory comparison per storefront")
        #expect(Double(falseKept) / Double(runs) <= 0.05)
        #expect(Double(falseRenewed) / Double(runs) <= 0.05)
    }

    @Test func aLayoutWithAnAttributeThisVersionDoesNotKnowStillGivesItsArmsPeriodsAndSampleRatio() throws {
        #expect(SplitLayoutText.arms("a*:0-4500,b:4500-10000;confirm=tenure+storefront;match=0f1e") == [
            .init(rule: "a", percent: 45, control: true), .init(rule: "b", percent: 55, control: false)])
        #expect(SplitLayoutText.confirmed("a*:0-4500,b:4500-10000;match=0f1e;confirm=tenure+storefront") == ["storefront", "tenure"])
        #expect(ResultsReport.periodLabel("a*:0-4500,b:4500-10000;match=0f1e", since: nil) == "period 45/55")

        // Customers arrive 50/50 under a layout that says so and carries an unknown attribute: as configured.
        var even = EventSimulator(arms: [DataChecksTests.control, DataChecksTests.treatment], customers: 3000)
        even.recordedLayout = even.layout + ";later=9a8b7c6d"
        even.run(seed: 8)
        let report = try ResultsReport.compute(source: even.source, environment: "production",
                                               now: DataChecksTests.date(even.start + 80 * EventTime.day),
                                               configuration: DataChecksTests.configuration([("keep-message", 50), ("upsell-yearly", 50)]))
        let comparison = try #require(report.comparisons.first)
        #expect(report.comparisons.count == 1 && comparison.arms.count == 1)
        #expect(comparison.sampleRatio?.configuredPercents == ["keep-message": 50, "upsell-yearly": 50])
        #expect(comparison.sampleRatio?.mismatch == false)

        // The same 50/50 arrivals under a layout that says 70/30 (and the attribute): the check still finds the mismatch.
        var skewed = even
        skewed.recordedLayout = "keep-message*:0-7000,upsell-yearly:7000-10000;later=9a8b7c6d"
        skewed.run(seed: 8)
        let mismatched = try ResultsReport.compute(source: skewed.source, environment: "production",
                                                   now: DataChecksTests.date(skewed.start + 80 * EventTime.day),
                                                   configuration: DataChecksTests.configuration([("keep-message", 50), ("upsell-yearly", 50)]))
        #expect(mismatched.comparisons.first?.sampleRatio?.configuredPercents == ["keep-message": 70, "upsell-yearly": 30])
        #expect(mismatched.comparisons.first?.sampleRatio?.mismatch == true)
    }
}
