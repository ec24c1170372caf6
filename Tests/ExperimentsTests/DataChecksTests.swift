import Basics
import Foundation
@testable import ExperimentsTestSupport
import Testing
import EventContract
import TestSupport
@testable import Experiments
@testable import Views

/// The checks `results` runs on the data before anyone reads a verdict, against simulated customers
/// whose truth is known: the split they were really assigned by, the clock that stamped their events,
/// the secret their pseudonyms were made with.
@Suite struct DataChecksTests {
    static let control = EventSimulator.Arm(rule: "keep-message", keepRate: 0.30, splitControl: true)
    static let treatment = EventSimulator.Arm(rule: "upsell-yearly", keepRate: 0.40, answer: "promotionalOffer", offer: "yearly-half-price")

    /// The manifests' view of the simulator's split group: `percents` per rule, every arm matching the same customers.
    static func configuration(_ percents: [(rule: String, percent: Double)], group: String = "yearly-upsell",
                              extra: [ResultsConfiguration.Rule] = []) -> ResultsConfiguration {
        ResultsConfiguration(source: "manifests in manifests", rules: percents.map {
            ResultsConfiguration.Rule(flow: "cancel-flow", rule: $0.rule, splitGroup: group, percent: $0.percent,
                                      audience: "com.example.stillpoint.monthly|||")
        } + extra)
    }

    static func date(_ millis: Int64) -> UTCTime {
        UTCTime(milliseconds: millis)
    }

    /// The distinct outcome events the simulator wrote (duplicates are the same event).
    static func distinctOutcomes(_ simulator: EventSimulator) -> Int {
        var ids: Set<Substring> = []
        for (path, lines) in simulator.segments where path.contains("/outcomes/") {
            for line in lines {
                guard let range = line.range(of: #""eventId":""#) else { continue }
                ids.insert(line[range.upperBound...].prefix(36))
            }
        }
        return ids.count
    }

    // MARK: The chi-square tail

    @Test func theChiSquareTailMatchesPublishedCriticalValues() {
        // Critical values to 15 digits (R's qchisq; the 5%, 1% and 0.1% columns of every statistics table).
        let known: [(x: Double, df: Int, p: Double)] = [
            (3.841458820694124, 1, 0.05), (6.634896601021214, 1, 0.01), (10.827566170662733, 1, 0.001),
            (5.991464547107979, 2, 0.05), (9.210340371976183, 2, 0.01), (13.815510557964274, 2, 0.001),
            (7.814727903251178, 3, 0.05), (11.344866730144373, 3, 0.01), (16.266236196238129, 3, 0.001),
            (23.209251158954356, 10, 0.01), (0.015790774093431218, 1, 0.9), (0.58437437415518312, 3, 0.9),
        ]
        for value in known {
            let p = ChiSquare.survival(value.x, degreesOfFreedom: value.df)
            #expect(abs(p - value.p) / value.p < 1e-9, "χ²(\(value.df)) > \(value.x): \(p), expected \(value.p)")
        }
        #expect(ChiSquare.survival(0, degreesOfFreedom: 1) == 1)
    }

    @Test func theChiSquareTailKeepsItsPrecisionFarOutForOneAndTwoDegreesOfFreedom() {
        // Closed forms: with 1 df the tail is erfc(√(x/2)); with 2 df it is e^(−x/2). Far in the tail a
        // p-value must not be found as 1 − (almost 1): x = 60 has p ≈ 1e-14 and keeps 10 digits.
        for x in [0.001, 0.1, 0.5, 1, 2, 3.5, 5, 8, 12, 20, 32, 45, 60] {
            let one = ChiSquare.survival(x, degreesOfFreedom: 1)
            let two = ChiSquare.survival(x, degreesOfFreedom: 2)
            #expect(abs(one - erfc((x / 2).squareRoot())) / erfc((x / 2).squareRoot()) < 1e-10, "df 1 at \(x): \(one)")
            #expect(abs(two - exp(-x / 2)) / exp(-x / 2) < 1e-10, "df 2 at \(x): \(two)")
        }
        // 3 df: erfc(√(x/2)) + √(2x/π)·e^(−x/2).
        for x in [0.2, 1, 4, 9, 16, 30, 50] {
            let exact = erfc((x / 2).squareRoot()) + (2 * x / Double.pi).squareRoot() * exp(-x / 2)
            #expect(abs(ChiSquare.survival(x, degreesOfFreedom: 3) - exact) / exact < 1e-10, "df 3 at \(x)")
        }
    }

    // MARK: Sample-ratio mismatch

    @Test func aFortyEightFiftyTwoSplitConfiguredAsFiftyFiftyIsFlaggedOverTwentyThousandCustomers() throws {
        var treatment = Self.treatment
        treatment.weight = 48
        var control = Self.control
        control.weight = 52
        var simulator = EventSimulator(arms: [control, treatment], customers: 20_000)
        // Serve answers under a 50/50 layout; something else moves customers to 48/52.
        simulator.recordedLayout = "keep-message*:0-5000,upsell-yearly:5000-10000"
        simulator.run(seed: 48)
        let report = try ResultsReport.compute(source: simulator.source, environment: "production",
                                               now: Self.date(simulator.start + 80 * EventTime.day),
                                               configuration: Self.configuration([("keep-message", 50), ("upsell-yearly", 50)]))
        let comparison = try #require(report.comparisons.first)
        let check = try #require(comparison.sampleRatio)
        print("48/52 configured as 50/50: \(check.exposed), chi-square \(check.chiSquare ?? 0), p \(check.pValue ?? 1)")
        #expect(check.mismatch)
        #expect((check.pValue ?? 1) < SampleRatioTest.threshold)
        #expect(check.exposed.values.reduce(0, +) == 20_000)
        #expect(comparison.verdictWarning?.contains("sample-ratio mismatch") == true)
        #expect(report.warnings.contains { $0.contains("yearly-upsell: sample-ratio mismatch") })
        // Every format shows it, and the verdicts carry the warning.
        let text = report.text()
        #expect(text.contains("sample ratio: keep-message 10,"), "\(text)")
        #expect(text.contains("MISMATCH"))
        #expect(text.contains("  warning: sample-ratio mismatch"))
        let markdown = report.markdown()
        #expect(markdown.contains(":warning: sample ratio: keep-message"), "\(markdown)")
        let json = try #require(try JSONSerialization.jsonObject(with: report.jsonData()) as? [String: Any])
        let group = try #require((json["comparisons"] as? [[String: Any]])?.first)
        #expect((group["sampleRatio"] as? [String: Any])?["mismatch"] as? Bool == true)
        #expect(json["formatVersion"] as? String == "2.2")
    }

    @Test func aCorrectSplitIsFlaggedInFewerThanOneCheckInFiveHundred() throws {
        // Arms are assigned by a hash, so a correct split's counts are a multinomial draw from the
        // configured shares. 10,000 draws of 2,000 customers over four layouts: at the 0.001 threshold
        // about 10 are expected by chance; 20 (0.2%) would mean the test is too eager.
        let layouts: [[Double]] = [[50, 50], [45, 45, 10], [33.33, 33.33, 33.34], [10, 20, 30, 40]]
        let runs = 10_000
        var flagged = 0
        var random = SplitMix64(seed: 0x5A3D)
        for run in 0 ..< runs {
            let shares = layouts[run % layouts.count]
            var counts = [Int](repeating: 0, count: shares.count)
            for _ in 0 ..< 2000 {
                var draw = random.uniform() * 100
                var arm = 0
                while arm < shares.count - 1, draw >= shares[arm] {
                    draw -= shares[arm]
                    arm += 1
                }
                counts[arm] += 1
            }
            let outcome = try #require(SampleRatioTest.test(observed: counts, shares: shares))
            if outcome.mismatch { flagged += 1 }
        }
        print("Correct splits flagged as a sample-ratio mismatch: \(flagged)/\(runs) (\(Double(flagged) / Double(runs) * 100)%)")
        #expect(Double(flagged) / Double(runs) < 0.002)
    }

    @Test func tooFewExposuresOrArmsMatchingDifferentCustomersAreNotTested() {
        #expect(SampleRatioTest.test(observed: [3, 4], shares: [50, 50]) == nil)
        #expect(SampleRatioTest.test(observed: [30, 40], shares: [50, 50])?.mismatch == false)
        let rows = [("a", 500), ("b", 100)].map { rule, exposed in
            ResultsReport.Row(flow: "f", rule: rule, splitGroup: "g", arm: rule, splitControl: rule == "a", answers: ["message"], value: nil,
                              exposed: exposed, kept24h: .init(successes: 0, failures: 0, pending: exposed), tookOffer: nil,
                              renewed: .init(successes: 0, failures: 0, pending: exposed), discountGiven: [:],
                              paid: .init(decided: 0, pending: exposed, currencies: [:], otherCurrencyPayments: 0))
        }
        let configured = [ResultsConfiguration.Rule(flow: "f", rule: "a", splitGroup: "g", percent: 50, audience: "p1|||"),
                          ResultsConfiguration.Rule(flow: "f", rule: "b", splitGroup: "g", percent: 50, audience: "p2|||")]
        let check = ResultsReport.sampleRatioCheck(flow: "f", group: "g", arms: rows, configured: configured)
        #expect(check?.mismatch == false)
        #expect(check?.note?.contains("match different customers") == true)
    }

    // MARK: Arms and rules against the configuration

    @Test func aConfiguredArmNobodySawAndARuleTheConfigurationDoesNotHaveAreBothWarned() throws {
        var simulator = EventSimulator(arms: [Self.control, Self.treatment], customers: 600)
        // Serve answers under the configured 45/45/10 layout, but the holdout answers nobody.
        simulator.recordedLayout = "keep-message*:0-4500,upsell-yearly:4500-9000,holdout:9000-10000"
        simulator.run(seed: 9)
        var other = EventSimulator(arms: [EventSimulator.Arm(rule: "old-offer", keepRate: 0.5)], customers: 50)
        other.flow = "win-back"
        other.splitGroup = nil
        other.run(seed: 10)
        var source = simulator.source
        for (path, data) in other.source.files { source.files[path, default: Data()].append(data) }

        let configuration = Self.configuration([("keep-message", 45), ("upsell-yearly", 45), ("holdout", 10)])
        let report = try ResultsReport.compute(source: source, environment: "production", now: Self.date(simulator.start + 80 * EventTime.day),
                                               configuration: configuration)
        #expect(report.checks.configuration == "manifests in manifests")
        #expect(report.checks.armsWithoutExposures == [.init(flow: "cancel-flow", splitGroup: "yearly-upsell", rule: "holdout", percent: 10)])
        #expect(report.checks.rulesNotConfigured == [.init(flow: "win-back", rule: "old-offer", exposed: 50)])
        #expect(report.warnings.contains { $0.contains("no exposure in the window: cancel-flow/holdout (yearly-upsell, 10%)") })
        #expect(report.warnings.contains { $0.contains("does not have for this environment: win-back/old-offer (50 exposed)") })
        // An arm that is not live takes its share from nobody: the group's ratio is off, and said so.
        #expect(report.comparisons.first?.sampleRatio?.mismatch == true)

        // Without a configuration nothing is claimed about it.
        let unchecked = try ResultsReport.compute(source: source, environment: "production", now: Self.date(simulator.start + 80 * EventTime.day))
        #expect(unchecked.checks.configuration == nil)
        #expect(unchecked.checks.armsWithoutExposures.isEmpty && unchecked.checks.rulesNotConfigured.isEmpty)
        // The decisions carry the layout serve answered under: the ratio is still checked, against it.
        #expect(unchecked.comparisons.first?.sampleRatio?.mismatch == true)
    }

    // MARK: Took offer is pending until the deadline

    @Test func takingTheOfferIsPendingUntilTheRenewalDeadlineThenDecided() throws {
        let alice = JoinTests.alice
        let bob = JoinTests.bob
        let source = JoinTests.source(
            decisions: [JoinTests.decision(alice, "2026-11-10T10:00:00.000Z", rule: "offer", answer: "promotionalOffer", offer: "half"),
                        JoinTests.decision(bob, "2026-11-10T10:00:00.000Z", rule: "offer", answer: "promotionalOffer", offer: "half")],
            outcomes: [
                JoinTests.outcome(alice, "2026-11-01T00:00:00.000Z", "DID_RENEW", expires: "2026-12-01T00:00:00.000Z", price: 9990),
                JoinTests.outcome(bob, "2026-11-01T00:00:00.000Z", "DID_RENEW", expires: "2026-12-01T00:00:00.000Z", price: 9990),
                JoinTests.outcome(bob, "2026-11-12T09:00:00.000Z", "OFFER_REDEEMED", price: 4990, offer: "half"),
            ])
        // Minutes after the answer nobody has failed to take it: both are pending, not failures.
        let early = try #require(try JoinTests.report(source, now: "2026-11-10T10:05:00.000Z").rows.first?.tookOffer)
        #expect(early.successes == 0 && early.failures == 0 && early.pending == 2)
        #expect(early.rate == nil)
        let later = try #require(try JoinTests.report(source, now: "2026-11-20T00:00:00.000Z").rows.first?.tookOffer)
        #expect(later.successes == 1 && later.failures == 0 && later.pending == 1)
        // The deadline is the expiry current at the answer plus 7 days of grace.
        let atDeadline = try #require(try JoinTests.report(source, now: "2026-12-08T00:00:00.000Z").rows.first?.tookOffer)
        #expect(atDeadline.pending == 1)
        let after = try #require(try JoinTests.report(source, now: "2026-12-08T00:00:00.001Z").rows.first?.tookOffer)
        #expect(after.successes == 1 && after.failures == 1 && after.pending == 0)
    }

    @Test func aDayIntoAnOfferArmNobodyHasFailedToTakeItAndOnceDecidedTheRateHoldsTheTruth() throws {
        // Truth: 40% keep, and half of those who keep redeem the offer within the hour — 20% take it.
        var simulator = EventSimulator(arms: [Self.control, Self.treatment], customers: 4000)
        simulator.run(seed: 77)
        let early = try ResultsReport.compute(source: simulator.source, environment: "production", now: Self.date(simulator.start + EventTime.day))
        let earlyOffer = try #require(early.rows.first { $0.rule == "upsell-yearly" }?.tookOffer)
        #expect(earlyOffer.failures == 0, "\(earlyOffer)")
        #expect(earlyOffer.pending > 0 && earlyOffer.successes > 0)
        let decided = try ResultsReport.compute(source: simulator.source, environment: "production", now: Self.date(simulator.start + 80 * EventTime.day))
        let offer = try #require(decided.rows.first { $0.rule == "upsell-yearly" }?.tookOffer)
        #expect(offer.pending == 0)
        #expect(offer.interval?.contains(0.20) == true, "\(offer)")
    }

    // MARK: Pseudonym keys and clocks

    @Test func outcomesMadeWithAnotherSecretAreNamedAsSuch() throws {
        var simulator = EventSimulator(arms: [Self.control, Self.treatment], customers: 500)
        simulator.run(seed: 22)
        var source = simulator.source
        for path in source.files.keys where path.contains("/outcomes/") {
            source.files[path] = Data(String(decoding: source.files[path]!, as: UTF8.self)
                .replacingOccurrences(of: #""keyId":"0badc0de""#, with: #""keyId":"a50fe080""#).utf8)
        }
        let report = try ResultsReport.compute(source: source, environment: "production", now: Self.date(simulator.start + 80 * EventTime.day))
        #expect(report.checks.outcomeKeysWithoutDecisions == [.init(keyId: "a50fe080", outcomes: Self.distinctOutcomes(simulator),
                                                                    decisionKeyIds: ["0badc0de"])])
        #expect(report.warnings.contains { $0.contains("carry pseudonym key a50fe080, which no decision in the window carries (decisions carry 0badc0de)") })
        #expect(!report.warnings.contains { $0.contains("rotation") })
        // The truth the warning protects: nothing joined, so every customer looks kept.
        #expect(report.rows.allSatisfy { $0.kept24h.failures == 0 })

        let honest = try ResultsReport.compute(source: simulator.source, environment: "production", now: Self.date(simulator.start + 80 * EventTime.day))
        #expect(honest.checks.outcomeKeysWithoutDecisions.isEmpty)
    }

    @Test func outcomesStampedByAClockMovedForwardAreCountedWhateverTheReportsAsOf() throws {
        // An emulator's clock moved 60 days ahead stamps the outcomes; serve stamps decisions with the real time.
        var simulator = EventSimulator(arms: [Self.control, Self.treatment], customers: 800)
        simulator.outcomeClockOffset = 60 * EventTime.day
        simulator.run(seed: 35)
        let realNow = simulator.start + 11 * EventTime.day
        let every = Self.distinctOutcomes(simulator)
        for asOf in [realNow, simulator.start + 5 * EventTime.day, simulator.start + 90 * EventTime.day] {
            let report = try ResultsReport.compute(source: simulator.source, environment: "production", now: Self.date(asOf),
                                                   clock: Self.date(realNow))
            // Every outcome is later than the real time: the earliest, a renewal up to 29 days before an exposure, is moved to day 31.
            #expect(report.checks.outcomesAfterClock == every, "as of \(EventTime.format(asOf))")
            #expect(report.warnings.contains { $0.contains("dated after this run's clock") })
        }
        // The same customers on one clock, read as of many days by a run after the last event: never a false alarm.
        for seed in UInt64(0) ..< 20 {
            var honest = EventSimulator(arms: [Self.control, Self.treatment], customers: 100)
            honest.run(seed: 900 + seed)
            let clock = Self.date(honest.start + 100 * EventTime.day)
            for day in [1, 5, 20, 80] {
                let now = Self.date(honest.start + Int64(day) * EventTime.day)
                let report = try ResultsReport.compute(source: honest.source, environment: "production", now: now, clock: clock)
                #expect(report.checks.outcomesAfterClock == 0 && report.checks.outcomesBeforeFirstDecision.isEmpty)
            }
        }
    }

    @Test func decisionsStampedByAClockAheadOfTheOutcomesAreWarned() throws {
        var simulator = EventSimulator(arms: [Self.control, Self.treatment], customers: 300)
        simulator.decisionClockOffset = 100 * EventTime.day
        simulator.run(seed: 100)
        let report = try ResultsReport.compute(source: simulator.source, environment: "production",
                                               now: Self.date(simulator.start + 200 * EventTime.day))
        let key = try #require(report.checks.outcomesBeforeFirstDecision.first)
        #expect(key.keyId == "0badc0de" && key.outcomes == Self.distinctOutcomes(simulator))
        #expect(report.warnings.contains { $0.contains("are dated before its first decision") })
    }

    // MARK: What the people who decide read

    @Test func theEstimateOfCustomersNeededWaitsForEnoughDecidedCustomers() {
        // One simulated day in: 7 against 54 decided, the early deciders.
        let early = ResultsReport.difference(.init(successes: 6, failures: 1, pending: 400), .init(successes: 30, failures: 24, pending: 380), alpha: 0.05)
        #expect(early.verdict == .notDistinguishableYet)
        #expect(early.customersPerArmNeeded == nil && early.moreCustomersPerArm == nil)
        #expect(early.estimateWithheld?.contains("too few decided customers") == true)
        #expect(ResultsReport.sentence(early).contains("too few decided customers for an estimate (7 and 54; it needs 100 in each)"))
        // Enough decided, but most still pending: the decided are not yet a fair sample.
        let pendingMostly = ResultsReport.difference(.init(successes: 60, failures: 90, pending: 400), .init(successes: 55, failures: 95, pending: 380), alpha: 0.05)
        #expect(pendingMostly.estimateWithheld?.contains("still pending") == true)
        let ready = ResultsReport.difference(.init(successes: 60, failures: 90, pending: 10), .init(successes: 55, failures: 95, pending: 10), alpha: 0.05)
        #expect(ready.estimateWithheld == nil && ready.customersPerArmNeeded != nil)
    }

    @Test func everyReportCarriesALegendAndMoneyPerArmAndIsTheSameBytesForTheSameInput() throws {
        var simulator = EventSimulator(arms: [Self.control, Self.treatment], customers: 1500)
        simulator.run(seed: 15)
        let configuration = Self.configuration([("keep-message", 50), ("upsell-yearly", 50)])
        func report() throws -> ResultsReport {
            try ResultsReport.compute(source: simulator.source, environment: "production", now: Self.date(simulator.start + 80 * EventTime.day),
                                      configuration: configuration, clock: Self.date(simulator.start + 80 * EventTime.day))
        }
        let first = try report()
        let second = try report()
        #expect(try first.jsonData() == second.jsonData())
        #expect(first.text() == second.text())
        #expect(first.markdown() == second.markdown())

        let control = try #require(first.rows.first { $0.rule == "keep-message" })
        let offer = try #require(first.rows.first { $0.rule == "upsell-yearly" })
        let difference = try #require(first.comparisons.first?.arms.first?.paidPerCustomer["USD"]?.difference)
        let offerPaid = try #require(offer.paid.currencies["USD"]), controlPaid = try #require(control.paid.currencies["USD"])
        let expected = Double(offerPaid.milliunits) / Double(offer.paid.decided) - Double(controlPaid.milliunits) / Double(control.paid.decided)
        #expect(abs(difference - expected) < 1e-5)

        let text = first.text()
        for term in ["Legend", "kept 24 h", "took offer", "renewed", "pending", "higher/lower", "PAID PER CUSTOMER, 35 DAYS", "DISCOUNT GIVEN",
                     "paid per customer (35 days): USD"] {
            #expect(text.contains(term), "text lacks \(term)")
        }
        #expect(text.contains("sample ratio: keep-message"), "\(text)")
        let markdown = first.markdown()
        for term in ["**How to read this**", "*took offer*", "<details><summary>Money per rule</summary>", "| Paid in all | Discount given |",
                     "paid per customer (35 days): USD"] {
            #expect(markdown.contains(term), "markdown lacks \(term)")
        }
        #expect(ResultsReport.money(12_345_675) == "12,345.68")
        #expect(ResultsReport.money(-4_990) == "−4.99")
    }
}
