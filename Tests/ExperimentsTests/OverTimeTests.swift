import Basics
import EventContract
@testable import ExperimentsTestSupport
import Testing
import TestSupport
@testable import Experiments

/// The page draws renewed and took offer over time from one reading of the events: every look must be
/// what `results` run at that instant would have said.
@Suite struct OverTimeTests: SimulationFixtures, JoinFixtures {
    static let holdout = EventSimulator.Arm(rule: "holdout", keepRate: 0.30, renewRate: 0.6, splitControl: true, answer: "none")
    static let offer = EventSimulator.Arm(rule: "half-price", keepRate: 0.40, renewRate: 0.7, answer: "promotionalOffer", offer: "half-price-1m")

    /// Six days of exposures read for 50 days: renewals, EXPIREDs, recoveries within the grace period
    /// (a customer first "not renewed", later "renewed"), offers taken at once and with the renewal.
    static func simulation(seed: UInt64) -> EventSimulator {
        var simulator = EventSimulator(arms: [holdout, offer], customers: 500)
        simulator.days = 6
        simulator.takingPaths = true
        simulator.recoveries = 0.3
        simulator.run(seed: seed)
        return simulator
    }

    @Test func renewedAndTookOfferAtEveryDaysEndAreWhatAReportRunThenWouldHaveSaid() throws {
        let simulator = Self.simulation(seed: 46)
        let source = simulator.source
        let now = UTCTime(milliseconds: simulator.start + 50 * EventTime.day + 5 * EventTime.hour)
        let (report, timeline) = try ResultsReport.computeWithTimeline(source: source, environment: "production", now: now)
        let comparison = try #require(report.comparisons.first)
        let renewed = try #require(timeline.differences(comparison, of: .renewed)["half-price"])
        let took = timeline.rates(comparison, of: .tookOffer)
        // The holdout offers nothing: only the offer's arm has a took-offer series.
        #expect(took.keys.sorted() == ["half-price"])
        let tookPoints = try #require(took["half-price"])
        #expect(renewed.count == 51 && tookPoints.count == 51, "50 days' ends and the report's own look")
        for (point, tookPoint) in zip(renewed, tookPoints) {
            let then = point.time == now.milliseconds ? report
                : try ResultsReport.compute(source: source, environment: "production", now: UTCTime(milliseconds: point.time))
            let row = try #require(then.rows.first { $0.rule == "half-price" })
            let control = try #require(then.rows.first { $0.rule == "holdout" })
            let arm = try #require(then.comparisons.first?.arms.first)
            #expect(point.armRate == row.renewed, "\(point.day)")
            #expect(point.controlRate == control.renewed, "\(point.day)")
            var plain = arm.renewed
            if point.time != now.milliseconds { plain.adjusted = nil }
            #expect(point.difference == plain, "\(point.day)")
            #expect(tookPoint.time == point.time)
            #expect(tookPoint.rate == row.tookOffer, "\(point.day)")
            // While a rate is early the look carries the bounds of where the difference will end up.
            #expect((point.bounds != nil) == (row.renewed.early || control.renewed.early), "\(point.day)")
            if let bounds = point.bounds, let armBounds = row.renewed.bounds, let controlBounds = control.renewed.bounds {
                #expect(abs(bounds.low - (armBounds.low - controlBounds.high)) < 1e-5)
                #expect(abs(bounds.high - (armBounds.high - controlBounds.low)) < 1e-5)
            }
        }
        // The early looks are early, the last is settled: the series shows bounds first, an interval at the end.
        #expect(renewed.first?.bounds != nil)
        #expect(renewed.last?.bounds == nil)
        #expect(renewed.last?.difference == comparison.arms.first?.renewed)
    }

    /// Alice's period ends on the 3rd and she expires, then renews on the 5th (within the grace
    /// period); Bob expires too, then redeems the offer he was answered on the 5th.
    @Test func aCustomerWhoExpiresThenRenewsWithinTheGracePeriodMovesFromNotRenewedToRenewedOnThatDay() throws {
        let source = Self.source(decisions: [
            Self.decision(Self.alice, "2026-10-01T10:00:00.000Z", rule: "holdout", answer: "none", splitControl: true),
            Self.decision(Self.bob, "2026-10-01T11:00:00.000Z", rule: "offer", answer: "promotionalOffer", offer: "o1"),
        ], outcomes: [
            Self.outcome(Self.alice, "2026-09-03T00:00:00.000Z", "DID_RENEW", expires: "2026-10-03T00:00:00.000Z"),
            Self.outcome(Self.bob, "2026-09-03T00:00:00.000Z", "DID_RENEW", expires: "2026-10-03T00:00:00.000Z"),
            Self.outcome(Self.alice, "2026-10-03T00:01:00.000Z", "EXPIRED", subtype: "BILLING_RETRY", expires: "2026-10-03T00:00:00.000Z"),
            Self.outcome(Self.bob, "2026-10-03T00:01:00.000Z", "EXPIRED", subtype: "VOLUNTARY", expires: "2026-10-03T00:00:00.000Z"),
            Self.outcome(Self.alice, "2026-10-05T08:00:00.000Z", "DID_RENEW", expires: "2026-11-05T08:00:00.000Z"),
            Self.outcome(Self.bob, "2026-10-05T09:00:00.000Z", "OFFER_REDEEMED", expires: "2026-11-05T09:00:00.000Z", price: 4990, offer: "o1"),
        ])
        let now = UTCTime(milliseconds: EventTime.parse("2026-10-07T12:00:00.000Z")!)
        let (report, timeline) = try ResultsReport.computeWithTimeline(source: source, environment: "production", now: now)
        let comparison = try #require(report.comparisons.first)
        let renewed = timeline.rates(comparison, of: .renewed)
        let took = timeline.rates(comparison, of: .tookOffer)
        let alice = try #require(renewed["holdout"]).map { [$0.rate.successes, $0.rate.failures, $0.rate.pending] }
        // The ends of the 1st to the 6th, then the report's own look.
        #expect(alice == [[0, 0, 1], [0, 0, 1], [0, 1, 0], [0, 1, 0], [1, 0, 0], [1, 0, 0], [1, 0, 0]])
        let bob = try #require(took["offer"]).map { [$0.rate.successes, $0.rate.failures, $0.rate.pending] }
        #expect(bob == [[0, 0, 1], [0, 0, 1], [0, 1, 0], [0, 1, 0], [1, 0, 0], [1, 0, 0], [1, 0, 0]])
        for (point, day) in zip(try #require(renewed["holdout"]), 1...) where day < 7 {
            let then = try Self.report(source, now: EventTime.format(point.time))
            #expect(then.rows.first { $0.rule == "holdout" }?.renewed == point.rate, "\(point.day)")
            #expect(then.rows.first { $0.rule == "offer" }?.tookOffer == took["offer"]?[day - 1].rate, "\(point.day)")
        }
    }
}
