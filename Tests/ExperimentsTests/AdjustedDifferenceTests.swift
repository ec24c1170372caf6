import Basics
import EventContract
@testable import ExperimentsTestSupport
import Foundation
import Testing
import TestSupport
@testable import Experiments
@testable import Views

/// The difference adjusted for what serve knew before the answer: checked against simulated customers
/// whose true effect is known, over many seeds, and through the report in every format.
@Suite struct AdjustedDifferenceTests {
    // MARK: Many seeds, drawn directly as the counts the join keeps

    /// Seeds of one simulated experiment each, looked at after every 100 decided customers per arm up to
    /// 1,000 (ten looks).
    static let seeds = 1000

    /// Renewing depends strongly on the tenure band (5%, 25%, 70%, 90% in the control, a quarter of the
    /// customers in each), and the arm adds 5 points for everyone.
    static let predictive = FactsSimulation.run(bandRates: [0.05, 0.25, 0.70, 0.90], effect: 0.05, seeds: seeds, firstSeed: 40_000)
    /// Renewing is 40% (45% in the arm) whatever the facts say.
    static let unpredictive = FactsSimulation.run(bandRates: [0.40, 0.40, 0.40, 0.40], effect: 0.05, seeds: seeds, firstSeed: 50_000)

    @Test func readingTheAdjustedRenewalDifferenceAtEveryLookHoldsTheTrueEffectInAtLeast94PercentOfSeeds() async throws {
        // Drawn on a thread of its own: thousands of seeds must not hold Swift's small pool from the other tests.
        let result = try await onOwnThread { Self.predictive }
        print("Adjusted difference, tenure predicting renewal, \(Self.seeds) seeds × 10 looks: the always-valid interval held the true "
              + "effect at every look in \(result.everyLookCovered) (plain: \(result.plainEveryLookCovered)); the fixed-horizon 95% "
              + "interval (±1.96 HC2 standard errors) at the last look in \(result.fixedCovered)")
        // At the first look (100 per arm) a tenure band has about 25 customers per arm, under the 30 a column
        // needs, so some first looks show no adjusted difference; every later look shows one.
        #expect(result.adjustedLooks >= Self.seeds * 9, "adjusted at \(result.adjustedLooks) of \(Self.seeds * 10) looks")
        #expect(Double(result.everyLookCovered) >= 0.94 * Double(Self.seeds),
                "held at every look in \(result.everyLookCovered) of \(Self.seeds)")
        // The HC2 variance itself is right: ±1.96 standard errors hold the truth about 95% of the time.
        #expect(Double(result.fixedCovered) >= 0.94 * Double(Self.seeds), "fixed-horizon 95%: \(result.fixedCovered) of \(Self.seeds)")
    }

    @Test func whenTenurePredictsRenewalTheAdjustedIntervalIsAtLeast20PercentNarrower() async throws {
        // Drawn on a thread of its own: thousands of seeds must not hold Swift's small pool from the other tests.
        let result = try await onOwnThread { Self.predictive }
        let ratio = result.medianAdjustedWidth / result.medianPlainWidth
        print("Median width at 1,000 customers per arm over \(Self.seeds) seeds: adjusted \(result.medianAdjustedWidth), plain "
              + "\(result.medianPlainWidth): \(Int(((1 - ratio) * 100).rounded()))% narrower")
        #expect(ratio <= 0.80, "adjusted \(result.medianAdjustedWidth) against plain \(result.medianPlainWidth): ratio \(ratio)")
    }

    @Test func whenTheFactsPredictNothingTheAdjustedIntervalStillHoldsTheTruthAndIsAboutAsWide() async throws {
        // Drawn on a thread of its own: thousands of seeds must not hold Swift's small pool from the other tests.
        let result = try await onOwnThread { Self.unpredictive }
        let ratio = result.medianAdjustedWidth / result.medianPlainWidth
        print("Facts predicting nothing, \(Self.seeds) seeds × 10 looks: held at every look in \(result.everyLookCovered), fixed-horizon "
              + "95% at the last look in \(result.fixedCovered); median width ratio \(ratio)")
        #expect(Double(result.everyLookCovered) >= 0.94 * Double(Self.seeds))
        #expect(Double(result.fixedCovered) >= 0.94 * Double(Self.seeds))
        #expect(ratio > 0.97 && ratio < 1.03, "median width ratio \(ratio)")
    }

    /// The same customers, each renewing one paying 9.99 (a monthly plan) or, one time in ten, 59.99 (a
    /// yearly one): the arm's true difference in paid per customer is 5 points of 14.99, 0.75.
    static let paying = FactsSimulation.run(bandRates: [0.05, 0.25, 0.70, 0.90], effect: 0.05, seeds: seeds, firstSeed: 60_000,
                                            price: (14_990, { $0.chance(0.1) ? 59_990 : 9_990 }))

    @Test func readingTheAdjustedPaidPerCustomerAtEveryLookHoldsTheTrueDifferenceInAtLeast94PercentOfSeeds() async throws {
        // Drawn on a thread of its own: thousands of seeds must not hold Swift's small pool from the other tests.
        let result = try await onOwnThread { Self.paying }
        let ratio = result.medianAdjustedWidth / result.medianPlainWidth
        print("Adjusted paid per customer, \(Self.seeds) seeds × 10 looks: held at every look in \(result.everyLookCovered) (plain: "
              + "\(result.plainEveryLookCovered)), fixed-horizon 95% at the last look in \(result.fixedCovered); median width "
              + "\(Int(((1 - ratio) * 100).rounded()))% narrower")
        #expect(Double(result.everyLookCovered) >= 0.94 * Double(Self.seeds))
        #expect(Double(result.fixedCovered) >= 0.94 * Double(Self.seeds))
        // Tenure predicts whether a customer pays, not which plan: less of the spread is explained than for renewing.
        #expect(ratio <= 0.95, "median width ratio \(ratio)")
    }

    // MARK: The arithmetic

    @Test func adjustingForOneFactIsTheDifferenceOfItsLevelsMeansWeightedByBothArmsCustomers() throws {
        // With one fact, Lin's estimate is exactly post-stratification: Σ share(level) · (arm mean − control mean) in the level.
        func cell(_ band: String, _ count: Int, _ successes: Int, billing: String = "unknown") -> RegressionAdjustment.Cell {
            .init(levels: [band, billing], count: count, total: Double(successes), squares: Double(successes))
        }
        let treatment = [cell("0-1m", 120, 30), cell("1-3m", 80, 40), cell("12m+", 50, 45)]
        let control = [cell("0-1m", 60, 9), cell("1-3m", 100, 40), cell("12m+", 90, 72)]
        let result = RegressionAdjustment.estimate(covariates: ["tenureBand", "billing"], treatment: treatment, control: control)
        guard case .estimate(let estimate) = result else {
            Issue.record("withheld: \(result)")
            return
        }
        let shares = [180.0, 180, 140].map { $0 / 500 }
        let differences = [30.0 / 120 - 9.0 / 60, 40.0 / 80 - 40.0 / 100, 45.0 / 50 - 72.0 / 90]
        let expected = zip(shares, differences).reduce(0) { $0 + $1.0 * $1.1 }
        #expect(abs(estimate.difference - expected) < 1e-12, "\(estimate.difference) against \(expected)")
        #expect(estimate.covariates == [RegressionAdjustment.Covariate(name: "tenureBand", reference: "0-1m", levels: ["1-3m", "12m+"])])
        #expect(estimate.variance > 0)
    }

    @Test func twoFactsUnknownForTheSameCustomersAreAdjustedForOnce() throws {
        func cell(_ band: String, _ billing: String, _ count: Int, _ successes: Int) -> RegressionAdjustment.Cell {
            .init(levels: [band, billing], count: count, total: Double(successes), squares: Double(successes))
        }
        // Serve knew nothing of a third of the customers: both facts unknown together.
        let treatment = [cell("unknown", "unknown", 100, 40), cell("0-1m", "none", 100, 20), cell("12m+", "none", 100, 80)]
        let control = [cell("unknown", "unknown", 100, 35), cell("0-1m", "none", 100, 15), cell("12m+", "none", 100, 75)]
        let result = RegressionAdjustment.estimate(covariates: ["tenureBand", "billing"], treatment: treatment, control: control)
        guard case .estimate(let estimate) = result else {
            Issue.record("withheld: \(result)")
            return
        }
        #expect(abs(estimate.difference - 0.05) < 1e-12)
        #expect(estimate.covariates.map(\.name) == ["tenureBand"], "\(estimate.covariates)")
    }

    @Test func aLevelWithFewerThan30CustomersInAnArmCountsWithTheFactsMostCommonLevel() {
        func cell(_ storefront: String, _ count: Int, _ successes: Int) -> RegressionAdjustment.Cell {
            .init(levels: [storefront], count: count, total: Double(successes), squares: Double(successes))
        }
        let treatment = [cell("USA", 150, 60), cell("DEU", 60, 30), cell("FRA", 29, 10)]
        let control = [cell("USA", 140, 50), cell("DEU", 70, 30), cell("FRA", 40, 12)]
        let result = RegressionAdjustment.estimate(covariates: ["storefront"], treatment: treatment, control: control)
        guard case .estimate(let estimate) = result else {
            Issue.record("withheld: \(result)")
            return
        }
        #expect(estimate.covariates == [RegressionAdjustment.Covariate(name: "storefront", reference: "USA", levels: ["DEU"])])
    }

    @Test func factsAllUnknownLeaveNothingToAdjustFor() {
        let cells = [RegressionAdjustment.Cell(levels: ["unknown", "unknown"], count: 300, total: 120, squares: 120)]
        let result = RegressionAdjustment.estimate(covariates: ["tenureBand", "billing"], treatment: cells, control: cells)
        guard case .withheld(let reason) = result else {
            Issue.record("adjusted although nothing was known: \(result)")
            return
        }
        #expect(reason.contains("nothing to adjust for"), "\(reason)")
    }

    // MARK: Through the report

    @Test func aTeamWhoseServeRecordsTenureSeesTheAdjustedRenewalDifferenceBesideThePlainOneInEveryFormat() throws {
        // Renewing, for a kept customer, is 50% in the control and 60% in the arm, 40 points lower for a
        // first-month customer and 35 points higher after a year; keeping is 90% in both arms. The arm
        // therefore renews 0.9 × 10 = 9 points more, for every tenure.
        var simulator = EventSimulator(arms: [EventSimulator.Arm(rule: "keep-message", keepRate: 0.9, renewRate: 0.5, splitControl: true),
                                              EventSimulator.Arm(rule: "half-price", keepRate: 0.9, renewRate: 0.6)],
                                       customers: 4000)
        simulator.tenureBands = [("0-1m", -0.4), ("1-3m", -0.2), ("3-12m", 0.2), ("12m+", 0.35)]
        simulator.run(seed: 46)
        let now = UTCTime(milliseconds: simulator.start + 80 * EventTime.day)
        let report = try ResultsReport.compute(source: simulator.source, environment: "production", now: now)

        let arm = try #require(report.comparisons.first?.arms.first)
        let adjusted = try #require(arm.renewed.adjusted)
        #expect(adjusted.withheld == nil)
        #expect(adjusted.guarantee == "always-valid")
        #expect(adjusted.covariates.map(\.name) == ["tenureBand"])
        #expect(adjusted.interval?.contains(0.09) == true, "\(adjusted)")
        #expect(adjusted.widthRatio.map { $0 < 0.9 } == true, "\(adjusted)")
        #expect(arm.renewed.interval?.contains(0.09) == true, "\(arm.renewed)")
        // Keeping does not depend on tenure: adjusting changes little.
        #expect(arm.kept24h.adjusted?.widthRatio.map { $0 > 0.95 && $0 < 1.05 } == true, "\(String(describing: arm.kept24h.adjusted))")
        // A renewal pays 9.99, so the arm pays 0.9 × 0.10 × 9.99 = 0.8991 more per customer, for every tenure.
        let paid = try #require(arm.paidPerCustomer["USD"]?.adjusted)
        #expect(paid.interval?.contains(899.1) == true, "\(paid)")
        #expect(paid.covariates.map(\.name) == ["tenureBand"])
        #expect(report.formatVersion == "2.2")
        #expect(report.method.adjustedDifferenceInterval?.contains("Lin") == true)

        let text = report.text()
        print("Through the report, truth +9.0 points on renewal:\n" + text.split(separator: "\n").filter { $0.contains("half-price vs") || $0.contains("adjusted for") }
            .joined(separator: "\n"))
        let json = String(decoding: try report.jsonData(), as: UTF8.self)
        #expect(json.contains("\"adjusted\" : {"))
        #expect(json.contains("\"name\" : \"tenureBand\""))
        let sentence = "adjusted for tenureBand (1-3m, 12m+, 3-12m against 0-1m), always-valid:"
        #expect(text.contains("    " + sentence), "\(text)")
        #expect(report.markdown().contains("  - `half-price` " + sentence))
        let html = report.html(timeline: ResultsTimeline(now: now.milliseconds, arms: []))
        #expect(html.contains("<li class=\"adjusted\">half-price vs keep-message, " + sentence))
        #expect(try report.jsonData() == report.jsonData())
    }

    @Test func aGroupWhoseCustomersFactsAreAllUnknownShowsThePlainDifferenceAndSaysWhyNothingIsAdjusted() throws {
        var simulator = EventSimulator(arms: [EventSimulator.Arm(rule: "keep-message", keepRate: 0.3, splitControl: true),
                                              EventSimulator.Arm(rule: "upsell-yearly", keepRate: 0.4)],
                                       customers: 1000)
        simulator.run(seed: 7)
        let now = UTCTime(milliseconds: simulator.start + 80 * EventTime.day)
        let report = try ResultsReport.compute(source: simulator.source, environment: "production", now: now)
        let arm = try #require(report.comparisons.first?.arms.first)
        #expect(arm.renewed.difference != nil)
        #expect(arm.renewed.adjusted?.difference == nil)
        #expect(arm.renewed.adjusted?.withheld?.contains("nothing to adjust for") == true, "\(String(describing: arm.renewed.adjusted))")
        #expect(report.text().contains("    adjusted for pre-exposure facts: not shown — no pre-exposure fact has a level"))
    }
}

/// Two-arm experiments drawn as the per-cell sums the join keeps: every customer has a tenure band
/// (four, equally likely), a recent offer (yes 30%, no 60%, unknown 10%) and a billing state (none 70%,
/// retry 20%, unknown 10%); they renew with their band's rate, plus `effect` in the arm — the same
/// effect for everyone, so it is the true average effect. With `price`, the outcome is what a renewing
/// customer pays (drawn by `price`) and 0 otherwise, and the truth is `effect` times its mean.
struct FactsSimulation {
    var everyLookCovered = 0
    var plainEveryLookCovered = 0
    var fixedCovered = 0
    var adjustedLooks = 0
    var medianAdjustedWidth = 0.0
    var medianPlainWidth = 0.0

    static let bands = ["0-1m", "1-3m", "3-12m", "12m+"]
    static let offers = ["offer within 90 days", "no offer within 90 days", "unknown"]
    static let billing = ["none", "retry", "unknown"]

    /// Per cell (band × offer × billing): customers, Σ outcome, Σ outcome².
    typealias Sums = [(n: Int, total: Double, squares: Double)]

    static func run(bandRates: [Double], effect: Double, seeds: Int, firstSeed: UInt64,
                    price: (mean: Double, draw: (inout SplitMix64) -> Double)? = nil) -> FactsSimulation {
        let truth = effect * (price?.mean ?? 1)
        var result = FactsSimulation()
        var adjustedWidths: [Double] = []
        var plainWidths: [Double] = []
        for seed in 0 ..< UInt64(seeds) {
            var random = SplitMix64(seed: firstSeed + seed)
            var sums = [Sums](repeating: .init(repeating: (0, 0, 0), count: 36), count: 2)
            var held = true
            var plainHeld = true
            for look in 1 ... 10 {
                for arm in 0 ..< 2 {
                    for _ in 0 ..< 100 {
                        let band = Int(random.below(4))
                        let index = band * 9 + draw(&random, [0.3, 0.6]) * 3 + draw(&random, [0.7, 0.2])
                        let renewed = random.chance(bandRates[band] + (arm == 1 ? effect : 0))
                        let value = renewed ? price?.draw(&random) ?? 1 : 0
                        sums[arm][index] = (sums[arm][index].n + 1, sums[arm][index].total + value, sums[arm][index].squares + value * value)
                    }
                }
                let (treatment, control) = (cells(sums[1]), cells(sums[0]))
                let plain = plainInterval(treatment, control, money: price != nil)
                if !plain.contains(truth) { plainHeld = false }
                let outcome = RegressionAdjustment.estimate(covariates: ["tenureBand", "offerWithin90Days", "billing"],
                                                            treatment: treatment, control: control)
                guard case .estimate(let estimate) = outcome else { continue }
                result.adjustedLooks += 1
                let tau = price == nil ? DifferenceConfidenceSequence.mixingStandardDeviation
                    : MeanDifferenceConfidenceSequence.mixingStandardDeviations * ResultsReport.pooledStandardDeviation(treatment, control)
                let half = DifferenceConfidenceSequence.halfWidth(variance: estimate.variance, tau: tau)
                if abs(estimate.difference - truth) > half { held = false }
                if look == 10 {
                    if abs(estimate.difference - truth) <= WilsonInterval.z95 * estimate.variance.squareRoot() { result.fixedCovered += 1 }
                    adjustedWidths.append(2 * half)
                    plainWidths.append(plain.high - plain.low)
                }
            }
            if held { result.everyLookCovered += 1 }
            if plainHeld { result.plainEveryLookCovered += 1 }
        }
        result.medianAdjustedWidth = median(adjustedWidths)
        result.medianPlainWidth = median(plainWidths)
        return result
    }

    /// 0, 1 or 2, with the chances of the first two given.
    static func draw(_ random: inout SplitMix64, _ chances: [Double]) -> Int {
        let u = random.uniform()
        return u < chances[0] ? 0 : u < chances[0] + chances[1] ? 1 : 2
    }

    static func cells(_ sums: Sums) -> [RegressionAdjustment.Cell] {
        sums.indices.compactMap { index in
            let cell = sums[index]
            guard cell.n > 0 else { return nil }
            return RegressionAdjustment.Cell(levels: [bands[index / 9], offers[index / 3 % 3], billing[index % 3]],
                                             count: cell.n, total: cell.total, squares: cell.squares)
        }
    }

    /// The plain difference's always-valid interval, as the report draws it.
    static func plainInterval(_ treatment: [RegressionAdjustment.Cell], _ control: [RegressionAdjustment.Cell], money: Bool) -> ProportionInterval {
        func total(_ cells: [RegressionAdjustment.Cell]) -> (n: Int, total: Double, squares: Double) {
            cells.reduce((0, 0.0, 0.0)) { ($0.0 + $1.count, $0.1 + $1.total, $0.2 + $1.squares) }
        }
        let (t, c) = (total(treatment), total(control))
        if money {
            return MeanDifferenceConfidenceSequence.interval(treatment: MeanEstimate(count: t.n, total: t.total, squares: t.squares),
                                                             control: MeanEstimate(count: c.n, total: c.total, squares: c.squares))!
        }
        return DifferenceConfidenceSequence.interval(treatment: .init(successes: Int(t.total), trials: t.n),
                                                     control: .init(successes: Int(c.total), trials: c.n))!
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .nan }
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }
}
