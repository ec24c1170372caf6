import Foundation

/// What one arm's decided customers paid in one currency, as the sums a mean and its variance need:
/// `count` customers (those who paid nothing included), `total` = Σx and `squares` = Σx², in milliunits.
public struct MeanEstimate: Sendable, Hashable {
    public var count: Int
    public var total: Double
    public var squares: Double

    public init(count: Int, total: Double, squares: Double) {
        self.count = count
        self.total = total
        self.squares = squares
    }

    /// The sums back from what a report keeps of them: the total and the standard deviation
    /// (`Σx² = (n − 1)s² + (Σx)²/n`).
    public init(count: Int, total: Double, standardDeviation: Double) {
        let n = Double(count)
        self.init(count: count, total: total,
                  squares: count > 1 ? (n - 1) * standardDeviation * standardDeviation + total * total / n : total * total)
    }

    public var mean: Double { count > 0 ? total / Double(count) : 0 }

    /// The sample variance (n − 1 in the denominator); 0 below two customers.
    public var variance: Double {
        guard count > 1 else { return 0 }
        let n = Double(count)
        return max(0, (squares - total * total / n) / (n - 1))
    }

    /// The normal 95% interval on the mean (fixed-sample, as the Wilson interval of a rate is), or nil
    /// below two customers.
    public var interval: ProportionInterval? {
        guard count > 1 else { return nil }
        let half = 1.959964 * (variance / Double(count)).squareRoot()
        return ProportionInterval(low: mean - half, high: mean + half)
    }
}

/// An always-valid confidence sequence for the difference of two means, `treatment − control` — the
/// same normal-mixture boundary as `DifferenceConfidenceSequence` uses for rates, with the plug-in
/// variance `V = s²ₜ/nₜ + s²꜀/n꜀` (sample variances) and the mixing standard deviation set to
/// `mixingStandardDeviations` of the customers' pooled standard deviation, so the boundary does not
/// depend on the currency's unit. Five points on a 35% rate, the rates' mixing parameter, is 0.1
/// standard deviations of a yes-or-no outcome: money uses the same relative size, tightest at about
/// 1,600 decided customers per arm. The guarantee is asymptotic (a mean of payments is near normal
/// once each arm has a hundred customers — `SampleSizeEstimate.minimumDecidedPerArm` withholds
/// verdicts before); the test suite measures its coverage by simulation.
public enum MeanDifferenceConfidenceSequence {
    public static let mixingStandardDeviations = 0.1

    /// The interval on `treatment − control`, or nil while an arm has fewer than two customers.
    public static func interval(treatment: MeanEstimate, control: MeanEstimate,
                                alpha: Double = DifferenceConfidenceSequence.defaultAlpha) -> ProportionInterval? {
        guard treatment.count > 1, control.count > 1 else { return nil }
        let difference = treatment.mean - control.mean
        let variance = treatment.variance / Double(treatment.count) + control.variance / Double(control.count)
        guard variance > 0 else { return ProportionInterval(low: difference, high: difference) }
        let pooled = (Double(treatment.count - 1) * treatment.variance + Double(control.count - 1) * control.variance)
            / Double(treatment.count + control.count - 2)
        let tau = mixingStandardDeviations * pooled.squareRoot()
        let half = DifferenceConfidenceSequence.halfWidth(variance: variance, alpha: alpha, tau: tau)
        return ProportionInterval(low: difference - half, high: difference + half)
    }
}
