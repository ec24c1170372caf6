import Basics
import Foundation
@testable import ExperimentsTestSupport
import Testing
import EventContract
@testable import Experiments

/// The join's definitions, one hand-written story each.
@Suite struct JoinTests: JoinFixtures {
    @Test func aCustomerCountsOnceAndARetriedUploadIsReadOnce() throws {
        let id = "11111111-2222-3333-4444-555555555555"
        let first = Self.decision(Self.alice, "2026-11-01T10:00:00.000Z", id: id)
        let source = Self.source(decisions: [first, first, Self.decision(Self.alice, "2026-11-02T10:00:00.000Z")], outcomes: [])
        let report = try Self.report(source, now: "2026-11-10T00:00:00.000Z")
        #expect(report.rows.first?.exposed == 1)
        #expect(report.events.duplicates == 1)
        #expect(report.events.decisions == 2)
    }

    @Test func turningAutoRenewOffAtTwentyFourHoursIsNotKeptAndOneMillisecondLaterIsKept() throws {
        let source = Self.source(
            decisions: [Self.decision(Self.alice, "2026-11-01T10:00:00.000Z"), Self.decision(Self.bob, "2026-11-01T10:00:00.000Z")],
            outcomes: [Self.outcome(Self.alice, "2026-11-02T10:00:00.000Z", "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED"),
                       Self.outcome(Self.bob, "2026-11-02T10:00:00.001Z", "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED")])
        let kept = try #require(try Self.report(source, now: "2026-11-05T00:00:00.000Z").rows.first?.kept24h)
        #expect(kept.successes == 1 && kept.failures == 1 && kept.pending == 0)
        let early = try #require(try Self.report(source, now: "2026-11-02T09:59:59.999Z").rows.first?.kept24h)
        #expect(early.pending == 2 && early.successes == 0)
    }

    @Test func renewalIsPendingUntilTheExpiryPlusGraceThenDecided() throws {
        let source = Self.source(
            decisions: [Self.decision(Self.alice, "2026-11-10T10:00:00.000Z"), Self.decision(Self.bob, "2026-11-10T10:00:00.000Z")],
            outcomes: [
                Self.outcome(Self.alice, "2026-11-01T00:00:00.000Z", "DID_RENEW", expires: "2026-12-01T00:00:00.000Z", price: 9990),
                Self.outcome(Self.bob, "2026-11-01T00:00:00.000Z", "DID_RENEW", expires: "2026-12-01T00:00:00.000Z", price: 9990),
                Self.outcome(Self.alice, "2026-12-01T00:05:00.000Z", "DID_RENEW", effective: "2026-12-01T00:00:00.000Z",
                             expires: "2027-01-01T00:00:00.000Z", price: 9990),
            ])
        let before = try #require(try Self.report(source, now: "2026-11-20T00:00:00.000Z").rows.first?.renewed)
        #expect(before.successes == 0 && before.pending == 2)
        let renewedOnly = try #require(try Self.report(source, now: "2026-12-05T00:00:00.000Z").rows.first)
        #expect(renewedOnly.renewed.successes == 1 && renewedOnly.renewed.pending == 1)
        let after = try #require(try Self.report(source, now: "2026-12-08T00:00:00.001Z").rows.first?.renewed)
        #expect(after.successes == 1 && after.failures == 1 && after.pending == 0)
    }

    @Test func anExpiryPastItsGraceIsNotCurrentAtAnExposureSoonAfterOrLongAfter() throws {
        let carol = String(repeating: "c3", count: 32)
        let source = Self.source(
            decisions: [Self.decision(Self.alice, "2026-10-08T05:00:00.000Z"), Self.decision(Self.bob, "2026-10-08T05:00:00.000Z"),
                        Self.decision(carol, "2026-11-20T10:00:00.000Z")],
            outcomes: [
                // Alice's and Carol's periods end on 1 October (grace until the 8th); Bob's runs to November.
                Self.outcome(Self.alice, "2026-09-01T00:00:00.000Z", "DID_RENEW", expires: "2026-10-01T00:00:00.000Z", price: 9990),
                Self.outcome(carol, "2026-09-01T00:00:00.000Z", "DID_RENEW", expires: "2026-10-01T00:00:00.000Z", price: 9990),
                Self.outcome(Self.bob, "2026-10-01T00:00:00.000Z", "DID_RENEW", expires: "2026-11-01T00:00:00.000Z", price: 9990),
            ])
        // Bob's deadline is his expiry plus grace (8 November); the others wait for the cap.
        let row = try #require(try Self.report(source, now: "2026-12-31T00:00:00.000Z").rows.first?.renewed)
        #expect(row.failures == 1 && row.pending == 2 && row.successes == 0)
    }

    @Test func anOfferRedeemedAfterExposureCountsAsTakenWithItsDiscount() throws {
        let source = Self.source(
            decisions: [Self.decision(Self.alice, "2026-11-10T10:00:00.000Z", rule: "offer", answer: "promotionalOffer", offer: "half")],
            outcomes: [
                Self.outcome(Self.bob, "2026-11-01T00:00:00.000Z", "DID_RENEW", expires: "2026-12-01T00:00:00.000Z", price: 9990),
                Self.outcome(Self.alice, "2026-11-10T10:01:00.000Z", "OFFER_REDEEMED", price: 4990, offer: "half"),
            ])
        let row = try #require(try Self.report(source, now: "2026-11-12T00:00:00.000Z").rows.first)
        #expect(row.tookOffer?.successes == 1)
        #expect(row.discountGiven == ["USD": 5000])
    }

    @Test func anEventFiledUpToAnHourLateIsJoinedAndLaterIsReportedAsLate() throws {
        let disabled = Self.outcome(Self.alice, "2026-11-01T10:30:00.000Z", "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED")
        let late = Self.outcome(Self.bob, "2026-11-01T10:30:00.000Z", "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED")
        let source = Self.source(
            decisions: [Self.decision(Self.alice, "2026-11-01T10:00:00.000Z"), Self.decision(Self.bob, "2026-11-01T10:00:00.000Z")],
            outcomes: [], misfiled: [(disabled, "2026-11-01", "11"), (late, "2026-11-01", "13")])
        let report = try Self.report(source, now: "2026-11-05T00:00:00.000Z")
        #expect(report.rows.first?.kept24h.failures == 1)
        #expect(report.events.late == 1)
        #expect(report.warnings.contains { $0.contains("wrong hour") })
    }

    @Test func aLineThatIsNotJSONIsRefusedWithItsFileAndLine() throws {
        var source = Self.source(decisions: [Self.decision(Self.alice, "2026-11-01T10:00:00.000Z")], outcomes: [])
        let path = try #require(source.files.keys.first)
        source.files[path]!.append(Data("\n{\"eventId\": tru}\n".utf8))
        let error = try #require(throws: EventReadError.self) { try Self.report(source, now: "2026-11-05T00:00:00.000Z") }
        #expect(error.location == path && error.line == 3)
        #expect(error.description.hasPrefix("\(path):3: error: "))
    }

    @Test func withoutAMarkedControlTheArmAnsweringNoneIsTheHoldout() throws {
        let withHoldout = Self.source(decisions: [Self.decision(Self.alice, "2026-11-01T10:00:00.000Z", rule: "holdout", answer: "none"),
                                                  Self.decision(Self.bob, "2026-11-01T10:00:00.000Z", rule: "message")], outcomes: [])
        let comparison = try #require(try Self.report(withHoldout, now: "2026-11-05T00:00:00.000Z").comparisons.first)
        #expect(comparison.control == "holdout" && comparison.controlKind == "holdout")
        #expect(comparison.arms.map(\.rule) == ["message"])

        let withoutControl = Self.source(decisions: [Self.decision(Self.alice, "2026-11-01T10:00:00.000Z", rule: "a"),
                                                     Self.decision(Self.bob, "2026-11-01T10:00:00.000Z", rule: "b")], outcomes: [])
        let none = try #require(try Self.report(withoutControl, now: "2026-11-05T00:00:00.000Z").comparisons.first)
        #expect(none.control == nil && none.arms.isEmpty)
        #expect(none.note?.contains("control: true") == true)
    }

    @Test func theJSONReportIsVersionedAndByteForByteTheSameForTheSameEvents() throws {
        var simulator = EventSimulator(arms: [SimulationTests.control, SimulationTests.treatment], customers: 200)
        simulator.run(seed: 3)
        let now = UTCTime(milliseconds: simulator.start + 5 * EventTime.day)
        let first = try ResultsReport.compute(source: simulator.source, environment: "production", now: now, breakdown: .locale).jsonData()
        let second = try ResultsReport.compute(source: simulator.source, environment: "production", now: now, breakdown: .locale).jsonData()
        #expect(first == second)
        let object = try #require(try JSONSerialization.jsonObject(with: first) as? [String: Any])
        #expect(object["formatVersion"] as? String == "2.2")
        // By the locale Apple asked for (the simulation's customers all ask for en-GB), one row per rule.
        #expect((object["breakdownRows"] as? [[String: Any]])?.compactMap { $0["value"] as? String } == ["en-GB", "en-GB"])
        #expect((object["segmentComparisons"] as? [Any])?.count == 1)
    }
}
