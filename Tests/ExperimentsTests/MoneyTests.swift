import Basics
import EventContract
@testable import Experiments
@testable import ExperimentsTestSupport
import Foundation
import Testing
import TestSupport
import Views

/// Money per exposed customer: every charge within the horizon, each once, against simulated
/// customers whose payments are known.
@Suite struct MoneyTests: JoinFixtures {
    static let horizon = 35 * EventTime.day

    @Test func whatEachArmWasPaidEqualsTheSimulatedCustomersChargesOverManySeeds() throws {
        var simulator = EventSimulator(arms: [
            EventSimulator.Arm(rule: "keep-message", keepRate: 0.35, splitControl: true),
            EventSimulator.Arm(rule: "half-price", keepRate: 0.45, answer: "promotionalOffer", offer: "half"),
            EventSimulator.Arm(rule: "switch-yearly", keepRate: 0.40, answer: "alternateProduct", alternateProduct: "com.example.stillpoint.yearly"),
            EventSimulator.Arm(rule: "holdout", keepRate: 0.30, answer: "none"),
        ], customers: 600)
        simulator.days = 20
        simulator.currencies = ["EUR", "USD"]
        simulator.takingPaths = true
        simulator.paymentEchoes = true
        var longPayments = 0
        for seed in UInt64(1) ... 12 {
            simulator.run(seed: seed)
            // Mid-experiment (some customers decided, some pending) and once all are decided.
            for day in [45, 70] {
                let now = simulator.start + Int64(day) * EventTime.day
                let report = try ResultsReport.compute(source: simulator.source, environment: "production", now: UTCTime(milliseconds: now))
                let truth = simulator.paidTruth(now: now, horizon: Self.horizon)
                #expect(report.rows.count == 4)
                for row in report.rows {
                    let expected = try #require(truth[row.rule])
                    #expect(row.paid.decided == expected.decided && row.paid.pending == expected.pending, "seed \(seed) day \(day) \(row.rule)")
                    #expect(row.paid.currencies.mapValues(\.milliunits) == expected.paid, "seed \(seed) day \(day) \(row.rule)")
                    longPayments += row.paid.currencies.values.reduce(0) { $0 + $1.longerThanHorizon }
                }
                if day == 45 { #expect(report.rows.contains { $0.paid.pending > 0 && $0.paid.decided > 0 }) }
            }
        }
        // The yearly plan's renewals are labelled: paid for a year, counted whole.
        #expect(longPayments > 0)
    }

    @Test func aHalfPriceOfferThatKeepsMoreCustomersBringsInMoreThanTheHoldout() throws {
        // The trial's case: half of those the offer keeps redeem it at 4.99, and renew at 9.99.
        var simulator = EventSimulator(arms: [
            EventSimulator.Arm(rule: "half-price", keepRate: 0.45, answer: "promotionalOffer", offer: "half"),
            EventSimulator.Arm(rule: "holdout", keepRate: 0.30, answer: "none"),
        ], customers: 4000)
        simulator.paymentEchoes = true
        simulator.run(seed: 2026)
        let report = try ResultsReport.compute(source: simulator.source, environment: "production",
                                               now: UTCTime(milliseconds: simulator.start + 60 * EventTime.day))
        let paid = try #require(report.comparisons.first?.arms.first?.paidPerCustomer["USD"])
        // Truth: 0.45 × (0.5 × 4.99 + 0.8 × 9.99) − 0.30 × 0.8 × 9.99 = 2.32 a customer.
        let truth = 0.45 * (0.5 * 4990 + 0.8 * 9990) - 0.30 * 0.8 * 9990
        #expect(paid.verdict == .better, "\(paid)")
        #expect(paid.interval?.contains(truth) == true, "\(paid)")
        let offer = try #require(report.rows.first { $0.rule == "half-price" })
        #expect(offer.discountGiven["USD"].map { $0 > 0 } == true, "the discount is shown, and not taken off what was paid")
        #expect(report.text().contains("paid per customer (35 days): USD higher, +"), "\(report.text())")
    }

    @Test func theAlwaysValidIntervalOnMoneyHoldsTheTrueDifferenceAtEveryLookInNineteenExperimentsOfTwenty() {
        // 1,000 experiments whose customers pay as the simulator's do (kept or not, half redeem the offer at
        // 4.99, 80% of the kept renew at 9.99), each looked at after every 50 decided customers per arm up to
        // 2,000: the interval must hold the true difference at every look at once in at least 94% of them.
        // The join's sums are checked exactly against the simulation above; this checks the statistics.
        func draw(_ random: inout SplitMix64, keep: Double, offer: Bool) -> Double {
            guard random.chance(keep) else { return 0 }
            var paid = offer && random.chance(0.5) ? 4990.0 : 0
            if random.chance(0.8) { paid += 9990 }
            return paid
        }
        let truth = 0.40 * (0.5 * 4990 + 0.8 * 9990) - 0.36 * 0.8 * 9990
        let runs = 1000
        var missed = 0
        var told = 0
        var random = SplitMix64(seed: 46)
        for _ in 0 ..< runs {
            var arm = MeanEstimate(count: 0, total: 0, squares: 0), control = arm
            var held = true
            for customer in 1 ... 2000 {
                let a = draw(&random, keep: 0.40, offer: true), c = draw(&random, keep: 0.36, offer: false)
                arm = MeanEstimate(count: arm.count + 1, total: arm.total + a, squares: arm.squares + a * a)
                control = MeanEstimate(count: control.count + 1, total: control.total + c, squares: control.squares + c * c)
                guard customer % 50 == 0, let interval = MeanDifferenceConfidenceSequence.interval(treatment: arm, control: control) else { continue }
                if !interval.contains(truth) { held = false }
                if customer == 2000, interval.excludesZero { told += 1 }
            }
            if !held { missed += 1 }
        }
        print("Money: the always-valid interval missed the true difference at some look in \(missed) of \(runs) experiments; "
              + "\(told) told the arms apart at 2,000 customers each")
        #expect(Double(missed) / Double(runs) <= 0.06)
        #expect(told > 0)
    }

    @Test func aChargeCountsOnceWithinTheHorizonAndItsLagAndNotAfter() throws {
        let carol = String(repeating: "c3", count: 32)
        let exposure = "2026-11-01T10:00:00.000Z"
        let source = Self.source(
            decisions: [Self.decision(Self.alice, exposure), Self.decision(Self.bob, exposure), Self.decision(carol, exposure)],
            outcomes: [
                // Alice: charged before the answer (not counted, though a later notification carries it), then
                // on the horizon's last millisecond, notified again two days later: 9.99 once.
                Self.outcome(Self.alice, "2026-10-20T00:00:00.000Z", "DID_RENEW", expires: "2026-11-20T00:00:00.000Z", price: 9990,
                             purchase: "2026-10-20T00:00:00.000Z"),
                Self.outcome(Self.alice, "2026-11-01T12:00:00.000Z", "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_ENABLED", price: 9990,
                             purchase: "2026-10-20T00:00:00.000Z"),
                Self.outcome(Self.alice, "2026-12-06T10:00:00.000Z", "DID_RENEW", expires: "2027-01-06T10:00:00.000Z", price: 9990,
                             purchase: "2026-12-06T10:00:00.000Z"),
                Self.outcome(Self.alice, "2026-12-08T10:00:00.000Z", "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_ENABLED", price: 9990,
                             purchase: "2026-12-06T10:00:00.000Z"),
                // Bob: a yearly plan bought a millisecond after the horizon: not counted.
                Self.outcome(Self.bob, "2026-12-06T10:00:00.001Z", "DID_RENEW", expires: "2027-12-06T10:00:00.000Z", price: 59990,
                             purchase: "2026-12-06T10:00:00.001Z"),
                // Carol: a yearly plan inside the horizon (counted whole, labelled), a charge in a second currency
                // (not counted, warned), and one notified only after the horizon's lag (not counted).
                Self.outcome(carol, "2026-11-02T00:00:00.000Z", "DID_RENEW", expires: "2027-11-02T00:00:00.000Z", price: 59990,
                             purchase: "2026-11-02T00:00:00.000Z"),
                Self.outcome(carol, "2026-11-03T00:00:00.000Z", "OFFER_REDEEMED", price: 4990, offer: "o", purchase: "2026-11-03T00:00:00.000Z",
                             currency: "EUR"),
                Self.outcome(carol, "2026-12-13T10:00:00.001Z", "DID_RENEW", expires: "2027-01-01T00:00:00.000Z", price: 9990,
                             purchase: "2026-12-01T00:00:00.000Z"),
            ])
        let pending = try #require(try Self.report(source, now: "2026-12-13T09:59:59.999Z").rows.first?.paid)
        #expect(pending.decided == 0 && pending.pending == 3)
        let report = try Self.report(source, now: "2027-02-01T00:00:00.000Z")
        let paid = try #require(report.rows.first?.paid)
        #expect(paid.decided == 3 && paid.pending == 0)
        #expect(paid.currencies.keys.sorted() == ["USD"])
        let usd = try #require(paid.currencies["USD"])
        #expect(usd.milliunits == 9990 + 59990 && usd.payments == 2 && usd.longerThanHorizon == 1)
        #expect(abs(usd.perCustomer - Double(9990 + 59990) / 3) < 0.001)
        #expect(paid.otherCurrencyPayments == 1)
        #expect(report.warnings.contains { $0.contains("second currency") })
    }
}
