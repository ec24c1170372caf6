/// Each row's decided outcomes per combination of pre-exposure facts, named, as the adjusted
/// differences read them; rows by `flow`, `rule` and layout.
struct FactTables {
    /// The facts adjusted for, by their names in the decision events, in the order of a cell's levels.
    static let covariates = ["storefront", "tenureBand", "offerWithin90Days", "billing"]
    /// A fact serve did not know is a level of its own, never a guess.
    static let unknown = "unknown"

    private(set) var kept: [String: [RegressionAdjustment.Cell]] = [:]
    private(set) var renewed: [String: [RegressionAdjustment.Cell]] = [:]
    /// Per row: each combination's customers whose money is decided, and what they paid per currency.
    private(set) var paid: [String: [(levels: [String], decided: Int, currencies: [String: (total: Double, squares: Double)])]] = [:]
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
                if outcomes.paidDecided > 0 {
                    let currencies = Dictionary(uniqueKeysWithValues: outcomes.paid.compactMap { currency, sums in
                        join.string(currency).map { ($0, sums) }
                    })
                    paid[key, default: []].append((levels, outcomes.paidDecided, currencies))
                }
            }
        }
    }

    /// A row's cells for the money paid in `currency`: every customer whose money is decided, those who
    /// paid in another currency or nothing at 0, as the plain paid per customer counts them.
    func paid(_ key: String, currency: String) -> [RegressionAdjustment.Cell] {
        (paid[key] ?? []).map { cell in
            let sums = cell.currencies[currency] ?? (0, 0)
            return RegressionAdjustment.Cell(levels: cell.levels, count: cell.decided, total: sums.total, squares: sums.squares)
        }
    }

    static func key(flow: String, rule: String, layout: String?) -> String {
        "\(flow)\u{0}\(rule)\u{0}\(layout ?? "")"
    }
}

extension ResultsReport {
    /// The customers' standard deviation within the two arms, pooled, as the plain difference of means
    /// sets its mixing parameter from.
    static func pooledStandardDeviation(_ treatment: [RegressionAdjustment.Cell], _ control: [RegressionAdjustment.Cell]) -> Double {
        var squares = 0.0
        var count = 0
        for cells in [treatment, control] {
            let n = cells.reduce(0) { $0 + $1.count }
            let total = cells.reduce(0) { $0 + $1.total }
            guard n > 0 else { continue }
            squares += cells.reduce(0) { $0 + $1.squares } - total * total / Double(n)
            count += n
        }
        return count > 2 ? max(0, squares / Double(count - 2)).squareRoot() : 0
    }

    static let adjustedMethod = "Lin's regression adjustment (2013), the regression form of CUPED: per arm, least squares of the outcome (1 or 0 "
        + "for a rate, the milliunits paid in the currency for money) "
        + "on indicator columns of the facts serve knew before the answer (\(FactTables.covariates.joined(separator: ", ")); unknown a level "
        + "of its own), centred on both arms' customers, over the same decided customers as the plain difference; a level needs "
        + "\(RegressionAdjustment.minimumLevelCustomers) decided customers with it and \(RegressionAdjustment.minimumLevelCustomers) "
        + "without it in each arm, else it counts with the fact's most common level; HC2 robust variance; the interval is the plain "
        + "difference's normal mixture (for money, its mixing standard deviation 0.1 of the customers' pooled standard deviation) "
        + "over that estimate and variance, valid at every look; shown beside the plain difference, "
        + "which alone decides verdicts, the recommendation and promote"

    /// Fills `adjusted` on every split comparison's rate and money differences that have a plain difference.
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
                for (currency, plain) in arm.paidPerCustomer.sorted(by: { $0.key < $1.key }) {
                    let treatment = facts.paid(key, currency: currency), control = facts.paid(base, currency: currency)
                    arm.paidPerCustomer[currency]?.adjusted = adjusted(
                        plain: plain, treatment: treatment, control: control, alpha: comparison.alpha,
                        overflow: overflow, tau: MeanDifferenceConfidenceSequence.mixingStandardDeviations * pooledStandardDeviation(treatment, control),
                        bound: .infinity)
                }
                comparisons[index].arms[armIndex] = arm
            }
        }
    }

    /// The adjusted difference beside `plain`, with its always-valid interval at `alpha` (mixing standard
    /// deviation `tau`), kept within ±`bound` as a rate's difference is.
    static func adjusted(plain: Difference, treatment: [RegressionAdjustment.Cell], control: [RegressionAdjustment.Cell],
                         alpha: Double, overflow: Bool,
                         tau: Double = DifferenceConfidenceSequence.mixingStandardDeviation, bound: Double = 1) -> AdjustedDifference? {
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
            guard estimate.variance > 0, tau > 0 else {
                return withheld("every decided customer of both arms had the same outcome: nothing to adjust")
            }
            let half = DifferenceConfidenceSequence.halfWidth(variance: estimate.variance, alpha: alpha, tau: tau)
            let interval = ProportionInterval(low: rounded(max(-bound, estimate.difference - half)),
                                              high: rounded(min(bound, estimate.difference + half)))
            let plainWidth = plainInterval.high - plainInterval.low
            return AdjustedDifference(difference: rounded(estimate.difference), interval: interval, guarantee: "always-valid",
                                      covariates: estimate.covariates,
                                      widthRatio: plainWidth > 0 ? rounded((interval.high - interval.low) / plainWidth) : nil, withheld: nil)
        }
    }
}
