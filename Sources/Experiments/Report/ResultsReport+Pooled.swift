import Foundation

extension ResultsReport {
    /// The rows of each split group's period (flow, group, period start, layout), in the order
    /// `compare` keeps the periods.
    static func periods(_ rows: [Row]) -> [[Row]] {
        var groups: [String: [Row]] = [:]
        for row in rows {
            guard let group = row.splitGroup else { continue }
            groups["\(row.flow)\u{0}\(group)\u{0}\(row.periodSince ?? "")\u{0}\(row.splitLayout ?? "")", default: []].append(row)
        }
        return groups.keys.sorted().compactMap { groups[$0] }
    }

    /// The split arms customers were exposed to in the report (rule names, sorted): what `--versus` accepts.
    public var splitArms: [String] {
        Array(Set(rows.filter { $0.splitGroup != nil }.map(\.rule))).sorted()
    }

    /// `results --versus ARM`: in every period of a group that has ARM, each other arm against ARM —
    /// kept at 24 h, renewed and paid per customer, with the always-valid interval at 5% shared by the
    /// period's comparisons (as a group's comparisons with its control share it) and the verdict.
    public func versusComparisons(_ reference: String) -> [VersusComparison] {
        Self.periods(rows).compactMap { arms in
            guard let base = arms.first(where: { $0.rule == reference }) else { return nil }
            let others = arms.filter { $0.rule != reference }
            let alpha = DifferenceConfidenceSequence.defaultAlpha / Double(max(1, others.count))
            let compared = others.map { arm in
                ArmComparison(rule: arm.rule, arm: arm.arm,
                              kept24h: Self.difference(arm.kept24h, base.kept24h, alpha: alpha),
                              renewed: Self.difference(arm.renewed, base.renewed, alpha: alpha),
                              paidPerCustomer: Self.paidDifference(arm.paid, base.paid, alpha: alpha))
            }
            return VersusComparison(flow: base.flow, splitGroup: base.splitGroup ?? "", reference: reference, alpha: rounded(alpha),
                                    arms: compared, splitLayout: base.splitLayout, periodSince: base.periodSince)
        }
    }

    static let pooledLabel = "all periods (stratified)"

    static let pooledMethod = "stratified by period: within each period the arm against that period's control, as the per-period "
        + "comparison has it; the periods' differences combined with inverse-variance weights (each period's weight 1/V, V the "
        + "variance of its difference: for a rate the plug-in variance with one success and one failure added per arm, for money "
        + "s²/n of each arm); the combined variance 1/Σ(1/V); the interval the same normal mixture as the per-period one (for money "
        + "its mixing standard deviation 0.1 of the customers' pooled standard deviation) over that estimate and variance, valid at "
        + "every look, at 5% shared by the group's pooled comparisons; shown beside the per-period comparisons, which alone decide "
        + "verdicts, the recommendation, guardrails and promote"

    /// Per split group seen in two periods or more, each arm that was in two or more of the periods
    /// with the same control, against that control, the periods combined (see `pooledMethod`).
    static func pooled(_ comparisons: [SplitComparison], rows: [Row]) -> [PooledComparison] {
        var byGroup: [String: [SplitComparison]] = [:]
        for comparison in comparisons {
            guard let control = comparison.control else { continue }
            byGroup["\(comparison.flow)\u{0}\(comparison.splitGroup)\u{0}\(control)", default: []].append(comparison)
        }
        func row(_ flow: String, _ rule: String, _ comparison: SplitComparison) -> Row? {
            rows.first { $0.flow == flow && $0.rule == rule && $0.splitLayout == comparison.splitLayout && $0.periodSince == comparison.periodSince }
        }
        return byGroup.keys.sorted().compactMap { key -> PooledComparison? in
            let periods = byGroup[key] ?? []
            guard periods.count >= 2, let first = periods.first, let control = first.control else { return nil }
            var armPeriods: [String: [(arm: Row, control: Row, comparison: SplitComparison)]] = [:]
            for comparison in periods {
                guard let base = row(first.flow, control, comparison) else { continue }
                for arm in comparison.arms {
                    if let armRow = row(first.flow, arm.rule, comparison) { armPeriods[arm.rule, default: []].append((armRow, base, comparison)) }
                }
            }
            let pooledRules = armPeriods.keys.sorted().filter { (armPeriods[$0] ?? []).count >= 2 }
            guard !pooledRules.isEmpty else { return nil }
            let alpha = DifferenceConfidenceSequence.defaultAlpha / Double(pooledRules.count)
            let arms = pooledRules.map { rule in pooledArm(rule: rule, periods: armPeriods[rule] ?? [], alpha: alpha) }
            return PooledComparison(flow: first.flow, splitGroup: first.splitGroup, control: control, label: pooledLabel,
                                    method: "inverse-variance weights per period", alpha: rounded(alpha), arms: arms)
        }
    }

    private static func pooledArm(rule: String, periods: [(arm: Row, control: Row, comparison: SplitComparison)], alpha: Double) -> PooledArm {
        let kept = periods.map { rateStratum($0.arm.kept24h, $0.control.kept24h) }
        let renewed = periods.map { rateStratum($0.arm.renewed, $0.control.renewed) }
        let currencies = Set(periods.flatMap { Array($0.arm.paid.currencies.keys) + Array($0.control.paid.currencies.keys) }).sorted()
        var paid: [String: Difference] = [:]
        for currency in currencies {
            let strata = periods.map { moneyStratum($0.arm.paid, $0.control.paid, currency: currency) }
            // The customers' standard deviation pooled over every period, as the per-period mixture sets it.
            let (squares, degrees) = strata.compactMap { $0 }.reduce((0.0, 0.0)) { ($0.0 + $1.pooledVariance * $1.degrees, $0.1 + $1.degrees) }
            let tau = MeanDifferenceConfidenceSequence.mixingStandardDeviations * (degrees > 0 ? (squares / degrees).squareRoot() : 0)
            paid[currency] = combine(strata.map { $0.map { ($0.difference, $0.variance) } }, alpha: alpha, tau: tau, bound: .infinity).difference
        }
        let keptPooled = combine(kept, alpha: alpha, tau: DifferenceConfidenceSequence.mixingStandardDeviation, bound: 1)
        let renewedPooled = combine(renewed, alpha: alpha, tau: DifferenceConfidenceSequence.mixingStandardDeviation, bound: 1)
        let weights = periods.indices.map { index in
            PooledPeriod(splitLayout: periods[index].comparison.splitLayout, periodSince: periods[index].comparison.periodSince,
                         kept24hWeight: keptPooled.weights[index].map(rounded), renewedWeight: renewedPooled.weights[index].map(rounded))
        }
        return PooledArm(rule: rule, arm: periods.first?.arm.arm, kept24h: keptPooled.difference, renewed: renewedPooled.difference,
                         paidPerCustomer: paid, periods: weights)
    }

    /// A period's rate difference (arm − control) and its variance, as `DifferenceConfidenceSequence` makes them.
    static func rateStratum(_ arm: Rate, _ control: Rate) -> (difference: Double, variance: Double)? {
        let treatment = DifferenceConfidenceSequence.Arm(successes: arm.successes, trials: arm.successes + arm.failures)
        let base = DifferenceConfidenceSequence.Arm(successes: control.successes, trials: control.successes + control.failures)
        guard treatment.trials > 0, base.trials > 0 else { return nil }
        return (treatment.rate - base.rate, treatment.smoothedVarianceTerm + base.smoothedVarianceTerm)
    }

    /// A period's difference of paid per decided customer in `currency`, its variance, and the pooled
    /// variance of the customers with its degrees of freedom; nil below two decided customers an arm.
    private static func moneyStratum(_ arm: Paid, _ control: Paid, currency: String)
        -> (difference: Double, variance: Double, pooledVariance: Double, degrees: Double)? {
        func estimate(_ paid: Paid) -> MeanEstimate {
            let amount = paid.currencies[currency]
            return MeanEstimate(count: paid.decided, total: Double(amount?.milliunits ?? 0), standardDeviation: amount?.standardDeviation ?? 0)
        }
        let (treatment, base) = (estimate(arm), estimate(control))
        guard treatment.count > 1, base.count > 1 else { return nil }
        let variance = treatment.variance / Double(treatment.count) + base.variance / Double(base.count)
        let degrees = Double(treatment.count + base.count - 2)
        let pooled = (Double(treatment.count - 1) * treatment.variance + Double(base.count - 1) * base.variance) / degrees
        return (treatment.mean - base.mean, variance, pooled, degrees)
    }

    /// The inverse-variance combination of `strata` (nil: a period without data) with its always-valid
    /// interval at `alpha`, and each period's share of the weight. A period whose variance is 0 (every
    /// customer alike in both arms) has no weight to give: with such periods only, there is no estimate.
    static func combine(_ strata: [(difference: Double, variance: Double)?], alpha: Double, tau: Double,
                        bound: Double) -> (difference: Difference, weights: [Double?]) {
        let raw = strata.map { stratum in stratum.flatMap { $0.variance > 0 ? 1 / $0.variance : nil } }
        let total = raw.compactMap { $0 }.reduce(0, +)
        guard total > 0, tau > 0 else {
            return (Difference(difference: nil, interval: nil, verdict: .noData, customersPerArmNeeded: nil, moreCustomersPerArm: nil,
                               estimateWithheld: nil), raw.map { _ in nil })
        }
        var estimate = 0.0
        for (stratum, weight) in zip(strata, raw) {
            if let stratum, let weight { estimate += weight / total * stratum.difference }
        }
        let variance = 1 / total
        let half = DifferenceConfidenceSequence.halfWidth(variance: variance, alpha: alpha, tau: tau)
        let interval = ProportionInterval(low: rounded(max(-bound, estimate - half)), high: rounded(min(bound, estimate + half)))
        return (Difference(difference: rounded(estimate), interval: interval, verdict: Verdict(difference: interval),
                           customersPerArmNeeded: nil, moreCustomersPerArm: nil, estimateWithheld: nil),
                raw.map { $0.map { $0 / total } })
    }
}
