public import Experiments

extension ResultsReport {
    /// The adjusted differences of one arm, in one sentence every view shows under the plain one:
    /// `adjusted for tenureBand (1-3m, 3-12m, 12m+ against 0-1m), always-valid: kept at 24 h +9.8 points
    /// (+6.0 to +13.6), 28% narrower; renewed …; paid per customer USD +0.95 (+0.60 to +1.30), 22% narrower`
    /// — or why there is none; nil when no difference has a plain one yet.
    public static func adjustedSentence(_ arm: ArmComparison) -> String? {
        // Each metric's name, adjusted difference, and how its numbers read (with the unit after the first).
        let rate = (format: points, unit: " points"), money = (format: signedMoney, unit: "")
        let metrics = ([("kept at 24 h", arm.kept24h.adjusted, rate), ("renewed", arm.renewed.adjusted, rate)]
            + arm.paidPerCustomer.keys.sorted().map { ("paid per customer \($0)", arm.paidPerCustomer[$0]?.adjusted, money) })
            .compactMap { name, adjusted, style in adjusted.map { (name, $0, style) } }
        guard !metrics.isEmpty else { return nil }
        let reasons = Set(metrics.compactMap(\.1.withheld))
        if reasons.count == 1, metrics.allSatisfy({ $0.1.withheld != nil }), let reason = reasons.first {
            return "adjusted for pre-exposure facts: not shown — \(reason)"
        }
        let estimated = metrics.filter { $0.1.withheld == nil }
        let shared = Set(estimated.map { covariatesPhrase($0.1.covariates) }).count == 1
        let clauses = metrics.map { name, adjusted, style -> String in
            guard let value = adjusted.difference, let interval = adjusted.interval else {
                return "\(name) not shown — \(adjusted.withheld ?? "no estimate")"
            }
            var clause = "\(name) \(style.format(value))\(style.unit) (\(style.format(interval.low)) to \(style.format(interval.high)))"
            if let ratio = adjusted.widthRatio { clause += ", " + widthPhrase(ratio) }
            if !shared { clause += " for \(covariatesPhrase(adjusted.covariates))" }
            return clause
        }
        let guarantee = estimated.first?.1.guarantee ?? "always-valid"
        let heading = shared ? "adjusted for \(covariatesPhrase(estimated[0].1.covariates)), \(guarantee)" : "adjusted, \(guarantee)"
        return "\(heading): \(clauses.joined(separator: "; "))"
    }

    /// `tenureBand (1-3m, 12m+ against 0-1m), billing (retry against none)`.
    static func covariatesPhrase(_ covariates: [RegressionAdjustment.Covariate]) -> String {
        covariates.map { "\($0.name) (\($0.levels.joined(separator: ", ")) against \($0.reference))" }.joined(separator: ", ")
    }

    /// `28% narrower`, `3% wider`, `as wide`: the adjusted interval against the plain one.
    static func widthPhrase(_ ratio: Double) -> String {
        let percent = Int(((1 - ratio) * 100).rounded())
        return percent > 0 ? "\(percent)% narrower" : percent < 0 ? "\(-percent)% wider" : "as wide"
    }
}
