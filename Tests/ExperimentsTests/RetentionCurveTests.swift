import Basics
import EventContract
@testable import ExperimentsTestSupport
import Foundation
import Testing
import TestSupport
@testable import Experiments

/// The retention curve: the share of an arm's exposed customers still subscribed by day since exposure,
/// checked against simulated customers whose loss times are known, over many seeds.
@Suite struct RetentionCurveTests: JoinFixtures {
    static let seeds = 150
    static let checkedDays = [7, 14, 30]
    static let hazards = ["steady": 0.02, "leaving": 0.04]

    struct Coverage: Sendable {
        /// (arm, day) → seeds whose interval held the truth, and the mean estimate.
        var covered: [String: Int] = [:]
        var meanEstimate: [String: Double] = [:]
        var checks = 0
        var censoredSeen = 0
    }

    /// Exposures over 40 days, read at day 60: customers exposed late are observed for less than 30 days
    /// and censored, so the curve's later days rest on the earlier customers only.
    static let coverage: Coverage = {
        var result = Coverage()
        for seed in 0 ..< UInt64(seeds) {
            var simulator = EventSimulator(arms: hazards.keys.sorted().map { rule in
                EventSimulator.Arm(rule: rule, keepRate: 1, splitControl: rule == "steady", lossHazard: hazards[rule])
            }, customers: 800)
            simulator.days = 40
            simulator.run(seed: 70_000 + seed)
            let now = UTCTime(milliseconds: simulator.start + 60 * EventTime.day)
            guard let report = try? ResultsReport.compute(source: simulator.source, environment: "production", now: now, readers: 0) else { continue }
            for row in report.rows {
                guard let curve = row.retention, let hazard = hazards[row.rule] else { continue }
                result.censoredSeen += curve.reduce(0) { $0 + $1.censored }
                for day in checkedDays {
                    guard let point = curve.first(where: { $0.day == day }), let interval = point.interval else { continue }
                    let truth = exp(-hazard * Double(day))
                    let key = "\(row.rule) day \(day)"
                    if interval.contains(truth) { result.covered[key, default: 0] += 1 }
                    result.meanEstimate[key, default: 0] += point.subscribed / Double(seeds)
                    result.checks += 1
                }
            }
        }
        return result
    }()

    @Test func theCurvesPointwiseIntervalsHoldTheTrueShareStillSubscribedInAtLeast94PercentOfSeeds() async throws {
        // Drawn on a thread of its own: hundreds of seeds must not hold Swift's small pool from the other tests.
        let result = try await onOwnThread { Self.coverage }
        let keys = result.covered.keys.sorted()
        print("Retention curve, \(Self.seeds) seeds × 2 arms × days \(Self.checkedDays): "
              + keys.map { "\($0) held \(result.covered[$0] ?? 0), mean \(String(format: "%.3f", result.meanEstimate[$0] ?? 0))" }.joined(separator: "; "))
        #expect(result.checks == Self.seeds * Self.hazards.count * Self.checkedDays.count, "every checked day has an interval")
        #expect(result.censoredSeen > 0, "customers exposed late are censored")
        let held = result.covered.values.reduce(0, +)
        #expect(Double(held) >= 0.94 * Double(result.checks), "held in \(held) of \(result.checks)")
        for (rule, hazard) in Self.hazards {
            for day in Self.checkedDays {
                let key = "\(rule) day \(day)"
                // Each (arm, day) on its own: no day far off.
                #expect(Double(result.covered[key] ?? 0) >= 0.92 * Double(Self.seeds), "\(key): \(result.covered[key] ?? 0)")
                #expect(abs((result.meanEstimate[key] ?? 0) - exp(-hazard * Double(day))) < 0.01, "\(key): mean \(result.meanEstimate[key] ?? 0)")
            }
        }
    }

    /// Ten customers exposed on 1 October, five of them refunded ten days later; ten more exposed two
    /// days before `now` and still subscribed. Counted as lost, the recent ten would pull the share at
    /// day 11 to 25%; counted as kept, up to 75%. Censored, they leave the curve after day 2: 50%.
    @Test func customersExposedRecentlyAreCensoredNotCountedAsLost() throws {
        var decisions: [String] = [], outcomes: [String] = []
        for index in 0 ..< 20 {
            let customer = String(format: "%064x", index + 1)
            let exposed = index < 10 ? "2026-10-01T10:00:00.000Z" : "2026-11-28T10:00:00.000Z"
            decisions.append(Self.decision(customer, exposed, rule: "arm"))
            outcomes.append(Self.outcome(customer, "2026-09-20T00:00:00.000Z", "DID_RENEW", expires: "2027-09-20T00:00:00.000Z"))
            if index < 5 { outcomes.append(Self.outcome(customer, "2026-10-11T11:00:00.000Z", "REFUND")) }
        }
        let report = try Self.report(Self.source(decisions: decisions, outcomes: outcomes), now: "2026-11-30T12:00:00.000Z")
        let curve = try #require(report.rows.first?.retention)
        #expect(curve.count == 61, "day 0 to day 60, the longest observed")
        #expect(curve[1].atRisk == 20 && curve[1].subscribed == 1)
        #expect(curve[3].atRisk == 10, "the recent ten leave the risk set after their two days")
        // Censored: the recent ten on day 3; the five kept on day 61, after the last whole day shown.
        #expect(curve.map(\.censored).reduce(0, +) == 10 && curve[60].atRisk == 5)
        #expect(curve[10].subscribed == 1 && curve[10].lost == 0)
        #expect(curve[11].lost == 5 && curve[11].subscribed == 0.5 && curve[11].atRisk == 5)
        #expect(curve[60].subscribed == 0.5)
        let interval = try #require(curve[11].interval)
        #expect(interval.low < 0.5 && 0.5 < interval.high)
    }

    /// A period that ends with no renewal and no notification (Alice's, 4 days 14 hours after her
    /// exposure): while the grace period runs she is censored at her expiry; once it has passed, she
    /// was lost at it. Carol expires on day 3 with an EXPIRED; Bob stays subscribed.
    @Test func aPeriodEndingUnrenewedIsALossOnlyOnceTheGracePeriodHasPassed() throws {
        let carol = String(repeating: "c3", count: 32)
        let source = Self.source(decisions: [Self.alice, Self.bob, carol].map { Self.decision($0, "2026-10-01T10:00:00.000Z", rule: "arm") }, outcomes: [
            Self.outcome(Self.alice, "2026-09-06T00:00:00.000Z", "DID_RENEW", expires: "2026-10-06T00:00:00.000Z"),
            Self.outcome(Self.bob, "2026-09-20T00:00:00.000Z", "DID_RENEW", expires: "2027-09-20T00:00:00.000Z"),
            Self.outcome(carol, "2026-09-04T00:00:00.000Z", "DID_RENEW", expires: "2026-10-04T00:00:00.000Z"),
            Self.outcome(carol, "2026-10-04T00:01:00.000Z", "EXPIRED", subtype: "VOLUNTARY", expires: "2026-10-04T00:00:00.000Z"),
        ])
        let early = try #require(try Self.report(source, now: "2026-10-09T00:00:00.000Z").rows.first?.retention)
        #expect(early.map(\.lost) == [0, 0, 0, 1, 0, 0, 0, 0])
        #expect(early.map(\.censored) == [0, 0, 0, 0, 0, 1, 0, 0])
        #expect(early.last?.subscribed == 0.666667 && early.last?.atRisk == 1)
        let late = try #require(try Self.report(source, now: "2026-10-20T00:00:00.000Z").rows.first?.retention)
        #expect(late.count == 19)
        #expect(late.map(\.lost).enumerated().filter { $0.element > 0 }.map(\.offset) == [3, 5])
        #expect(late.map(\.censored).reduce(0, +) == 0)
        #expect(late[5].subscribed == 0.333333 && late[18].subscribed == 0.333333 && late[18].atRisk == 1)
    }
}
