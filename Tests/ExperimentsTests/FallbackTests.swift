import Basics
import EventContract
@testable import Experiments
@testable import ExperimentsTestSupport
import Foundation
import Testing
import Views

/// What reaches customers besides the arms' answers: App Store Connect's retention layer after a
/// holdout's `none`, Apple's fallback after a late answer, and `{}` when serve could not decide.
@Suite struct FallbackTests: JoinFixtures {
    @Test func aHoldoutWhoseCustomersTookAnAppStoreConnectRetentionOfferIsWarnedAsNoHoldout() throws {
        let carol = String(repeating: "c3", count: 32)
        let source = Self.source(
            decisions: [Self.decision(Self.alice, "2026-11-10T10:00:00.000Z", rule: "holdout", answer: "none"),
                        Self.decision(Self.bob, "2026-11-10T10:00:00.000Z", rule: "holdout", answer: "none"),
                        Self.decision(carol, "2026-11-10T10:00:00.000Z", rule: "message", splitControl: true)],
            outcomes: [
                // Alice redeems App Store Connect's retention offer; Bob redeems a promotional offer (type 2), which is not one.
                Self.outcome(Self.alice, "2026-11-10T10:05:00.000Z", "OFFER_REDEEMED", price: 4990, offer: "asc-half", offerType: 5),
                Self.outcome(Self.bob, "2026-11-10T10:05:00.000Z", "OFFER_REDEEMED", price: 4990, offer: "promo"),
                Self.outcome(carol, "2026-11-10T10:05:00.000Z", "OFFER_REDEEMED", price: 4990, offer: "asc-half", offerType: 5),
            ])
        let report = try Self.report(source, now: "2026-11-20T00:00:00.000Z")
        let holdout = try #require(report.rows.first { $0.rule == "holdout" })
        #expect(holdout.tookAppStoreConnectOffer == 1)
        #expect(report.rows.first { $0.rule == "message" }?.tookAppStoreConnectOffer == 1)
        let warned = report.warnings.filter { $0.contains("took an App Store Connect retention offer after it answered none") }
        #expect(warned.count == 1 && warned[0].contains("1 of the 2 customers of the holdout holdout"), "\(report.warnings)")
        #expect(report.text().contains("holdout: 1 of 2 took an App Store Connect retention offer"), "\(report.text())")
    }

    @Test func answersLaterThanApplesBudgetAreCountedPerArmAndRequestsAnsweredEmptyAreCountedAndWarned() throws {
        let source = Self.source(
            decisions: [Self.decision(Self.alice, "2026-11-10T10:00:00.000Z", latency: 700_001),
                        Self.decision(Self.bob, "2026-11-10T10:00:00.000Z", latency: 700_000),
                        Self.decision(String(repeating: "d4", count: 32), "2026-11-10T10:00:00.000Z", answer: "shed"),
                        Self.decision(String(repeating: "e5", count: 32), "2026-11-10T10:00:00.000Z", answer: "error"),
                        Self.decision(String(repeating: "f6", count: 32), "2026-11-10T10:00:00.000Z", answer: "not_ready")],
            outcomes: [])
        let report = try Self.report(source, now: "2026-11-20T00:00:00.000Z")
        #expect(report.rows.count == 1 && report.rows[0].answeredLate == 1 && report.rows[0].exposed == 2)
        #expect(report.events.fallbacks == .init(shed: 1, notReady: 1, error: 1))
        #expect(report.warnings.contains { $0.contains("3 realtime requests were answered {} because serve could not decide (shed under load 1, not ready 1, error 1)") },
                "\(report.warnings)")
    }

    @Test func lateAnswersThatDifferBetweenArmsAreWarnedAndEqualSharesRarelyAre() throws {
        var slow = EventSimulator(arms: [EventSimulator.Arm(rule: "fast", keepRate: 0.3, splitControl: true, lateShare: 0.01),
                                         EventSimulator.Arm(rule: "slow", keepRate: 0.3, lateShare: 0.08)], customers: 2000)
        slow.run(seed: 5)
        let now = UTCTime(milliseconds: slow.start + 20 * EventTime.day)
        let report = try ResultsReport.compute(source: slow.source, environment: "production", now: now)
        #expect(report.warnings.contains { $0.contains("answers later than Apple's 700 ms differ between arms") }, "\(report.warnings)")
        #expect(report.rows.first { $0.rule == "slow" }.map { $0.answeredLate > report.rows.first { $0.rule == "fast" }!.answeredLate } == true)

        // Equal shares: the test of independence at p < 0.001 should almost never say they differ.
        var alarms = 0
        let runs = 100
        var equal = EventSimulator(arms: [EventSimulator.Arm(rule: "a", keepRate: 0.3, splitControl: true, lateShare: 0.05),
                                          EventSimulator.Arm(rule: "b", keepRate: 0.3, lateShare: 0.05)], customers: 1000)
        for seed in UInt64(1) ... UInt64(runs) {
            equal.run(seed: seed)
            let report = try ResultsReport.compute(source: equal.source, environment: "production",
                                                   now: UTCTime(milliseconds: equal.start + 20 * EventTime.day), readers: 0)
            #expect(report.warnings.contains { $0.contains("some answers came later than Apple's 700 ms") || $0.contains("differ between arms") })
            if report.warnings.contains(where: { $0.contains("differ between arms") }) { alarms += 1 }
        }
        print("Late answers in equal shares called different in \(alarms) of \(runs) experiments")
        #expect(alarms <= 2)
    }
}
