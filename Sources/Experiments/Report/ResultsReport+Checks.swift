import EventContract
import Foundation

extension ResultsReport.Checks {
    /// How far an outcome may be dated after the run's clock before it counts as from the future:
    /// Apple's `signedDate` and this machine's clock differ by seconds, not minutes.
    public static let clockTolerance: Int64 = 5 * 60 * 1000

    /// The checks' findings as warnings every format shows.
    func warnings(into warnings: inout [String]) {
        for key in outcomeKeysWithoutDecisions {
            warnings.append("\(ResultsReport.count(key.outcomes)) outcome\(key.outcomes == 1 ? "" : "s") carry pseudonym key \(key.keyId), which no "
                            + "decision in the window carries (decisions carry \(key.decisionKeyIds.joined(separator: ", "))): outcomes pull, or "
                            + "the serve that received notifications, ran with a different RETENTION_SYNC_PSEUDONYM_SECRET than the serve that "
                            + "recorded the decisions, so these outcomes never join a customer; give every serve replica and the outcomes job the same secret")
        }
        if outcomesAfterClock > 0 {
            warnings.append("\(ResultsReport.count(outcomesAfterClock)) outcome\(outcomesAfterClock == 1 ? " is" : "s are") dated after this run's clock "
                            + "(\(clock), by more than \(clockToleranceSeconds / 60) minutes): whatever stamped them runs ahead of this run — "
                            + "usually an emulator whose clock was moved forward after its customers were simulated; read as of the emulator's "
                            + "time (--as-of with the now GET /emulator/clock answers), and those outcomes count; customers simulated after "
                            + "the move cannot join, which is why the emulator refuses that with 409")
        }
        for key in outcomesBeforeFirstDecision {
            warnings.append("pseudonym key \(key.keyId): all \(ResultsReport.count(key.outcomes)) outcomes in the window are dated before its first "
                            + "decision (\(key.firstDecision); the last outcome is \(key.lastOutcome)): either nothing has recorded outcomes since "
                            + "serve began (run outcomes pull, or send Apple's notifications to serve), or decisions and outcomes are stamped by "
                            + "different clocks (an emulator's moved clock)")
        }
        if !armsWithoutExposures.isEmpty {
            let arms = armsWithoutExposures.map { "\($0.flow)/\($0.rule) (\($0.splitGroup), \(ResultsReport.percentText($0.percent)))" }
            warnings.append("configured split arm\(arms.count == 1 ? "" : "s") with no exposure in the window: \(arms.joined(separator: ", ")): "
                            + "\(arms.count == 1 ? "it is" : "they are") not live (left out while content waits for App Review, not applied yet) "
                            + "or an earlier rule answers \(arms.count == 1 ? "its" : "their") customers; see `retention-sync status`")
        }
        if !rulesNotConfigured.isEmpty {
            let rules = rulesNotConfigured.map { "\($0.flow)/\($0.rule) (\(ResultsReport.count($0.exposed)) exposed)" }
            let one = rules.count == 1
            warnings.append("customers were exposed to \(one ? "a rule" : "rules") not in the configuration read (\(configuration ?? "")) "
                            + "for this environment: \(rules.joined(separator: ", ")). "
                            + "\(one ? "It was" : "They were") renamed or removed after those exposures, or these manifests are not the ones "
                            + "serve answers from. An arm removed from a split group on purpose is expected here only until customers are "
                            + "exposed under the group's new layout; its earlier periods do not warn")
        }
    }
}

extension ResultsReport {
    /// Per currency either side was paid in: the arm's paid per decided customer minus the control's,
    /// with the always-valid interval and its verdict, withheld as a rate's estimate is while too few
    /// customers are decided.
    static func paidDifference(_ arm: Paid, _ control: Paid, alpha: Double) -> [String: Difference] {
        var result: [String: Difference] = [:]
        for currency in Set(arm.currencies.keys).union(control.currencies.keys) {
            func estimate(_ paid: Paid) -> MeanEstimate {
                let amount = paid.currencies[currency]
                return MeanEstimate(count: paid.decided, total: Double(amount?.milliunits ?? 0), standardDeviation: amount?.standardDeviation ?? 0)
            }
            let treatment = estimate(arm), base = estimate(control)
            let interval = MeanDifferenceConfidenceSequence.interval(treatment: treatment, control: base, alpha: alpha)
            let verdict = Verdict(difference: interval)
            let withheld = verdict == .notDistinguishableYet || verdict == .noData
                ? SampleSizeEstimate.withheld(arm: (decided: arm.decided, pending: arm.pending),
                                              control: (decided: control.decided, pending: control.pending)) : nil
            result[currency] = Difference(difference: interval == nil ? nil : rounded(treatment.mean - base.mean),
                                          interval: interval.map { ProportionInterval(low: rounded($0.low), high: rounded($0.high)) },
                                          verdict: verdict, customersPerArmNeeded: nil, moreCustomersPerArm: nil,
                                          estimateWithheld: withheld,
                                          relative: interval != nil && base.mean > 0 ? rounded((treatment.mean - base.mean) / base.mean) : nil)
        }
        return result
    }

    /// What reached a group's customers other than its arms' answers: App Store Connect's retention
    /// offers after a holdout's `none`, and answers too late for Apple, when they differ between arms.
    static func fallbackWarnings(flow: String, group: String, arms: [Row], into warnings: inout [String]) {
        for arm in arms where arm.answers == ["none"] && arm.tookAppStoreConnectOffer > 0 {
            warnings.append("\(flow) split group \(group): \(count(arm.tookAppStoreConnectOffer)) of the \(count(arm.exposed)) customers of the "
                            + "holdout \(arm.rule) took an App Store Connect retention offer after it answered none: Apple showed them the "
                            + "retention message and offers configured in App Store Connect, so the holdout measures that layer, not Apple's "
                            + "default — compare arms against it as such, or remove the retention offers there while the experiment runs")
        }
        let late = arms.map(\.answeredLate)
        guard late.contains(where: { $0 > 0 }) else { return }
        let exposed = arms.map(\.exposed)
        let shares = zip(arms, late).map { "\($0.rule) \(count($1)) of \(count($0.exposed))" }.joined(separator: ", ")
        if let p = independence(late, exposed), p < SampleRatioTest.threshold {
            warnings.append("\(flow) split group \(group): answers later than Apple's 700 ms differ between arms (\(shares); \(pValueText(p))): "
                            + "Apple showed those customers its fallback instead, more in some arms than others, so the arms' customers "
                            + "did not all see what the arms answer — find what makes one arm slow")
        } else {
            warnings.append("\(flow) split group \(group): some answers came later than Apple's 700 ms (\(shares)): those customers saw "
                            + "Apple's fallback, not the arm's answer")
        }
    }

    /// Pearson's chi-square test of independence of a 2 × k table (late and not late, per arm): the
    /// p-value, or nil when an expected count is below 5.
    static func independence(_ late: [Int], _ exposed: [Int]) -> Double? {
        let total = Double(exposed.reduce(0, +)), lateTotal = Double(late.reduce(0, +))
        guard total > 0, exposed.count > 1 else { return nil }
        var statistic = 0.0
        for (l, n) in zip(late, exposed) {
            for (observed, share) in [(Double(l), lateTotal / total), (Double(n - l), 1 - lateTotal / total)] {
                let expected = Double(n) * share
                guard expected >= SampleRatioTest.minimumExpectedCount else { return nil }
                statistic += (observed - expected) * (observed - expected) / expected
            }
        }
        return ChiSquare.survival(statistic, degreesOfFreedom: exposed.count - 1)
    }

    /// The sample-ratio check of one group against its configured arms, or nil when the configuration
    /// does not name the group.
    static func sampleRatioCheck(flow: String, group: String, arms: [Row], configured: [ResultsConfiguration.Rule],
                                 armsMatchDifferently: Bool) -> SampleRatio? {
        let configuredArms = configured.filter { $0.flow == flow && $0.splitGroup == group && $0.percent != nil }
            .sorted { $0.rule < $1.rule }
        guard !configuredArms.isEmpty else { return nil }
        let exposedByRule = Dictionary(arms.map { ($0.rule, $0.exposed) }, uniquingKeysWith: +)
        let observed = configuredArms.map { exposedByRule[$0.rule] ?? 0 }
        var check = SampleRatio(configuredPercents: Dictionary(uniqueKeysWithValues: configuredArms.map { ($0.rule, $0.percent ?? 0) }),
                                exposed: Dictionary(uniqueKeysWithValues: zip(configuredArms.map(\.rule), observed).map { ($0, $1) }),
                                chiSquare: nil, degreesOfFreedom: nil, pValue: nil, threshold: SampleRatioTest.threshold, mismatch: false, note: nil)
        if configuredArms.count < 2 {
            check.note = "one arm configured in this environment: nothing to compare"
        } else if armsMatchDifferently {
            check.note = "the arms match different customers (products, locales, window or customer conditions differ), so their "
                + "exposures are not expected in the configured ratio; not tested"
        } else if let outcome = SampleRatioTest.test(observed: observed, shares: configuredArms.map { $0.percent ?? 0 }) {
            check.chiSquare = rounded(outcome.chiSquare)
            check.degreesOfFreedom = outcome.degreesOfFreedom
            check.pValue = outcome.pValue < 1e-12 ? 0 : (outcome.pValue * 1e12).rounded() / 1e12
            check.mismatch = outcome.mismatch
        } else {
            check.note = "too few exposures to test (an arm expects fewer than \(Int(SampleRatioTest.minimumExpectedCount)))"
        }
        return check
    }

    public static func pValueText(_ p: Double) -> String {
        p < 0.000001 ? "p < 0.000001" : String(format: "p = %.6f", p)
    }

    /// `a 9,600 / b 10,400 against 50% / 50% configured`.
    public static func ratioText(_ check: SampleRatio) -> String {
        let rules = check.configuredPercents.keys.sorted()
        return rules.map { "\($0) \(count(check.exposed[$0] ?? 0))" }.joined(separator: " / ") + " against "
            + rules.map { percentText(check.configuredPercents[$0] ?? 0) }.joined(separator: " / ") + " configured"
    }

    public static func percentText(_ percent: Double) -> String {
        percent == percent.rounded() ? "\(Int(percent))%" : String(format: "%.2f%%", percent)
    }
}

extension SampleSizeEstimate {
    /// The estimate is given only once the arm and the control each have this many customers with a
    /// decided outcome. Below it the observed difference is mostly noise: at keep rates near 35% the
    /// standard error of a difference between two arms of 100 is 6.7 points, more than the 2–10 points a
    /// retention message moves, and the estimate (which grows as 1/difference²) swings by a factor of
    /// ten from one day to the next.
    public static let minimumDecidedPerArm = 100

    /// Why there is no estimate for these arms yet, or nil when it can be given: each side needs
    /// `minimumDecidedPerArm` decided customers and at least as many decided as pending — the first
    /// customers to be decided are not a random sample (for "renewed": those whose period ended first,
    /// or who let it lapse), so until most of an arm is decided its rate leans toward them.
    public static func withheld(arm: (decided: Int, pending: Int), control: (decided: Int, pending: Int)) -> String? {
        if arm.decided < minimumDecidedPerArm || control.decided < minimumDecidedPerArm {
            return "too few decided customers for an estimate (\(ResultsReport.count(arm.decided)) and \(ResultsReport.count(control.decided)); "
                + "it needs \(minimumDecidedPerArm) in each)"
        }
        if arm.decided < arm.pending || control.decided < control.pending {
            return "most customers are still pending, and the first decided are not a fair sample; no estimate yet"
        }
        return nil
    }
}

extension ResultsReport {
    /// A whole number with thousands separators, `12,345`: how every count in the report is written.
    public static func count(_ value: Int) -> String {
        let digits = Array(String(value))
        var out = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(digit)
        }
        return out
    }
}

extension ResultsReport {
    /// Fills in the group's one-line recommendation, by the
    /// rule `promote` applies on renewal: one arm distinguishably better and every other worse, or
    /// every arm worse (the control wins); otherwise what is missing.
    static func recommend(_ comparison: inout SplitComparison) {
        let control = comparison.control ?? ""
        if let warning = comparison.verdictWarning {
            comparison.recommendation = "Do not decide yet: \(warning)"
            return
        }
        let arms = comparison.arms
        let better = arms.filter { $0.renewed.verdict == .better }
        let undecided = arms.filter { $0.renewed.verdict != .better && $0.renewed.verdict != .worse }
        func lift(_ arm: ArmComparison) -> String {
            let points = SignedNumber.text((arm.renewed.difference ?? 0) * 100, digits: 1) + " points"
            return arm.renewed.relative.map { points + ", \(SignedNumber.percent($0)) relative" } ?? points
        }
        if better.count == 1, undecided.isEmpty {
            comparison.recommendation = "Promote \(better[0].rule): it renews more than \(control) (\(lift(better[0]))), every other arm less; "
                + "retention-sync promote \(comparison.splitGroup) writes the change"
        } else if better.isEmpty, undecided.isEmpty, !arms.isEmpty {
            comparison.recommendation = "Keep \(control): every arm renews less than it; retention-sync promote \(comparison.splitGroup) writes the change"
        } else if better.count > 1 {
            comparison.recommendation = "\(better.map(\.rule).joined(separator: " and ")) both renew more than \(control); which of them is better "
                + "is not established yet — keep running"
        } else if let arm = undecided.first {
            let more = arm.renewed.moreCustomersPerArm.map { "; about \(count($0)) more customers per arm at the current rates" }
            comparison.recommendation = "Keep running: \(arm.rule) is not told apart from \(control) on renewal yet"
                + (more ?? arm.renewed.estimateWithheld.map { "; \($0)" } ?? "")
        }
    }
}
