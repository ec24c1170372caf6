/// Each row's decided outcomes per combination of pre-exposure facts, named, as the adjusted
/// differences read them; rows by `flow`, `rule` and layout.
struct FactTables {
    /// The facts adjusted for, by their names in the decision events, in the order of a cell's levels.
    static let covariates = ["storefront", "tenureBand", "offerWithin90Days", "billing"]
    /// A fact serve did not know is a level of its own, never a guess.
    static let unknown = "unknown"

    private(set) var kept: [String: [RegressionAdjustment.Cell]] = [:]
    private(set) var renewed: [String: [RegressionAdjustment.Cell]] = [:]
    /// Rows with customers beyond the 65,535 combinations the join numbers.
    private(set) var overflowing: Set<String> = []

    init(_ join: ResultsJoin) {
        let names = join.factCells.map { cell in
            [cell.storefront, cell.tenureBand, cell.offerWithin90Days, cell.billing].map { join.string($0) ?? Self.unknown }
        }
        for (arm, tally) in join.tallies {
            let key = Self.key(flow: join.string(arm.flow) ?? "", rule: join.string(arm.rule) ?? "", layout: join.string(arm.layout))
            for id in tally.byFacts.keys.sorted() {
                guard let outcomes = tally.byFacts[id] else { continue }
                guard id != FactCell.overflow else {
                    overflowing.insert(key)
                    continue
                }
                let levels = names[Int(id)]
                let keptCount = outcomes.kept + outcomes.notKept
                if keptCount > 0 {
                    kept[key, default: []].append(.init(levels: levels, count: keptCount, total: Double(outcomes.kept), squares: Double(outcomes.kept)))
                }
                let renewedCount = outcomes.renewed + outcomes.notRenewed
                if renewedCount > 0 {
                    renewed[key, default: []].append(.init(levels: levels, count: renewedCount, total: Double(outcomes.renewed),
                                                           squares: Double(outcomes.renewed)))
                }
            }
        }
    }

    static func key(flow: String, rule: String, layout: String?) -> String {
        "\(flow)\u{0}\(rule)\u{0}\(layout ?? "")"
    }
}

extension ResultsReport {
    static let adjustedMethod = "Lin's regression adjustment (2013), the regression form of CUPED: per arm, least squares of the outcome "
        + "on indicator columns of the facts serve knew before the answer (\(FactTables.covariates.joined(separator: ", ")); unknown a level "
        + "of its own), centred on both arms' customers, over the same decided customers as the plain difference; a level needs "
        + "\(RegressionAdjustment.minimumLevelCustomers) decided customers with it and \(RegressionAdjustment.minimumLevelCustomers) "
        + "without it in each arm, else it counts with the fact's most common level; HC2 robust variance; the interval is the plain "
        + "difference's normal mixture over that estimate and variance, valid at every look; shown beside the plain difference, "
        + "which alone decides verdicts, the recommendation and promote"

    /// Fills `adjusted` on every split comparison's rate differences that have a plain difference.
    static func adjust(_ comparisons: inout [SplitComparison], facts: FactTables) {
        for index in comparisons.indices {
            let comparison = comparisons[index]
            guard let control = comparison.control else { continue }
            let base = FactTables.key(flow: comparison.flow, rule: control, layout: comparison.splitLayout)
            for armIndex in comparison.arms.indices {
                var arm = comparison.arms[armIndex]
                let key = FactTables.key(flow: comparison.flow, rule: arm.rule, layout: comparison.splitLayout)
                let overflow = facts.overflowing.contains(key) || facts.overflowing.contains(base)
                arm.kept24h.adjusted = adjusted(plain: arm.kept24h, treatment: facts.kept[key] ?? [], control: facts.kept[base] ?? [],
                                                alpha: comparison.alpha, overflow: overflow)
                arm.renewed.adjusted = adjusted(plain: arm.renewed, treatment: facts.renewed[key] ?? [], control: facts.renewed[base] ?? [],
                                                alpha: comparison.alpha, overflow: overflow)
                comparisons[index].arms[armIndex] = arm
            }
        }
    }

    /// The adjusted difference beside `plain`, with its always-valid interval at `alpha`.
    static func adjusted(plain: Difference, treatment: [RegressionAdjustment.Cell], control: [RegressionAdjustment.Cell],
                         alpha: Double, overflow: Bool) -> AdjustedDifference? {
        guard let plainInterval = plain.interval else { return nil }
        func withheld(_ reason: String) -> AdjustedDifference {
            AdjustedDifference(difference: nil, interval: nil, guarantee: nil, covariates: [], widthRatio: nil, withheld: reason)
        }
        if overflow {
            return withheld("customers had more than 65,535 combinations of pre-exposure facts: not adjusted")
        }
        switch RegressionAdjustment.estimate(covariates: FactTables.covariates, treatment: treatment, control: control) {
        case .withheld(let reason):
            return withheld(reason)
        case .estimate(let estimate):
            guard estimate.variance > 0 else { return withheld("every decided customer of both arms had the same outcome: nothing to adjust") }
            let half = DifferenceConfidenceSequence.halfWidth(variance: estimate.variance, alpha: alpha)
            let interval = ProportionInterval(low: rounded(max(-1, estimate.difference - half)), high: rounded(min(1, estimate.difference + half)))
            let plainWidth = plainInterval.high - plainInterval.low
            return AdjustedDifference(difference: rounded(estimate.difference), interval: interval, guarantee: "always-valid",
                                      covariates: estimate.covariates,
                                      widthRatio: plainWidth > 0 ? rounded((interval.high - interval.low) / plainWidth) : nil, withheld: nil)
        }
    }
}
