extension ResultsReport {
    /// In each segment of each split group's period, every arm against the segment's own control (the
    /// rule marked `splitControl`, else the arm answering `none`): the always-valid difference, and a
    /// verdict from Holm's step-down procedure over the report's segment comparisons of the same
    /// metric and family, so the chance of any false "higher" or "lower" among them stays under 5%
    /// however many segments are shown. The confirmatory family is the comparisons of periods whose
    /// layout declares `breakdown` (declared in the manifest before their decisions were made); every
    /// other comparison is exploratory, a family of its own. Each interval is drawn at the level its
    /// comparison was tested at (5%/m for the first, widening as hypotheses are rejected), so an
    /// interval excludes 0 exactly when the verdict names a direction.
    static func segmentComparisons(_ rows: [Row], breakdown: ResultsBreakdown? = nil)
        -> (comparisons: [SegmentComparison], confirmatory: Int, exploratory: Int) {
        var groups: [String: [Row]] = [:]
        for row in rows {
            guard let group = row.splitGroup else { continue }
            let key = [row.flow, group, row.periodSince ?? "", row.splitLayout ?? "", row.value ?? ""].joined(separator: "\u{0}")
            groups[key, default: []].append(row)
        }
        var comparisons: [SegmentComparison] = []
        var pairs: [(comparison: Int, arm: Int, armRow: Row, control: Row)] = []
        for key in groups.keys.sorted() {
            let arms = (groups[key] ?? []).sorted { $0.rule < $1.rule }
            let first = arms[0]
            let control = arms.first(where: \.splitControl) ?? arms.first { $0.answers == ["none"] }
            var comparison = SegmentComparison(flow: first.flow, splitGroup: first.splitGroup ?? "", splitLayout: first.splitLayout,
                                               periodSince: first.periodSince, value: first.value ?? "", valueName: first.valueName,
                                               control: control?.rule, arms: [],
                                               confirmatory: breakdown.map { SplitLayoutText.confirmed(first.splitLayout).contains($0.rawValue) } ?? false)
            if let control {
                for arm in arms where arm.rule != control.rule {
                    pairs.append((comparisons.count, comparison.arms.count, arm, control))
                    comparison.arms.append(SegmentArm(rule: arm.rule, arm: arm.arm, kept24h: noData, renewed: noData))
                }
            }
            comparisons.append(comparison)
        }
        let families = [true, false].map { confirmatory in pairs.filter { comparisons[$0.comparison].confirmatory == confirmatory } }
        for metric in [\SegmentArm.kept24h, \SegmentArm.renewed] {
            let rate: (Row) -> Rate = metric == \SegmentArm.kept24h ? { $0.kept24h } : { $0.renewed }
            for family in families {
                let tested = family.map { pair in (pair, pValue(rate(pair.armRow), rate(pair.control))) }
                for (pair, level) in zip(tested.map(\.0), holmLevels(tested.map(\.1))) {
                    var difference = difference(rate(pair.armRow), rate(pair.control), alpha: level ?? DifferenceConfidenceSequence.defaultAlpha)
                    if level == nil { difference.verdict = .noData }
                    comparisons[pair.comparison].arms[pair.arm][keyPath: metric] = difference
                }
                for (pair, p) in tested {
                    if metric == \SegmentArm.kept24h {
                        comparisons[pair.comparison].arms[pair.arm].kept24hPValue = p.map(roundedP)
                    } else {
                        comparisons[pair.comparison].arms[pair.arm].renewedPValue = p.map(roundedP)
                    }
                }
            }
        }
        return (comparisons, families[0].count, families[1].count)
    }

    private static let noData = Difference(difference: nil, interval: nil, verdict: .noData, customersPerArmNeeded: nil,
                                           moreCustomersPerArm: nil, estimateWithheld: nil)

    private static func pValue(_ arm: Rate, _ control: Rate) -> Double? {
        DifferenceConfidenceSequence.pValue(treatment: .init(successes: arm.successes, trials: arm.successes + arm.failures),
                                            control: .init(successes: control.successes, trials: control.successes + control.failures))
    }

    private static func roundedP(_ p: Double) -> Double {
        p < 1e-12 ? 0 : (p * 1e12).rounded() / 1e12
    }

    /// Holm's step-down procedure at 5% over `pValues` (nil: not tested): for each, the level it was
    /// tested at — `α/(m − i)` for the i-th smallest while every smaller one was rejected, and the level
    /// of the first that was not for it and all after it.
    static func holmLevels(_ pValues: [Double?]) -> [Double?] {
        let alpha = DifferenceConfidenceSequence.defaultAlpha
        let order = pValues.indices.filter { pValues[$0] != nil }.sorted { (pValues[$0]!, $0) < (pValues[$1]!, $1) }
        var levels = [Double?](repeating: nil, count: pValues.count)
        var stopped: Double?
        for (step, index) in order.enumerated() {
            let level = stopped ?? alpha / Double(order.count - step)
            if stopped == nil, pValues[index]! > level { stopped = level }
            levels[index] = level
        }
        return levels
    }
}
