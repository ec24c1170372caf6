/// How many customers per arm it would take before the always-valid interval on the difference
/// (`DifferenceConfidenceSequence`) excludes zero, at the current rates.
///
/// What it assumes, precisely: the observed rates of both arms are the true rates and stay as they are;
/// both arms grow to the same size `n`; the interval is centred on the observed difference `d̂`, with
/// the variance the interval itself uses at that size (`p̃(1−p̃)/n` per arm, `p̃ = (p̂n+1)/(n+2)`). It answers with the smallest `n` whose half-width is below
/// `|d̂|`. Since the real estimate will wander around the truth, reaching `n` gives roughly even odds
/// of a verdict, not a promise; and when the true difference is smaller than observed it takes longer.
/// With no observed difference there is nothing to estimate (nil).
public enum SampleSizeEstimate {
    /// Estimates above this are reported as this bound: the experiment cannot settle the question.
    public static let ceiling = 100_000_000

    public static func customersPerArm(treatmentRate: Double, controlRate: Double,
                                       alpha: Double = DifferenceConfidenceSequence.defaultAlpha,
                                       tau: Double = DifferenceConfidenceSequence.mixingStandardDeviation) -> Int? {
        let difference = abs(treatmentRate - controlRate)
        guard difference > 0 else { return nil }
        func separates(_ n: Int) -> Bool {
            let treatment = DifferenceConfidenceSequence.Arm(successes: 0, trials: n)
            let variance = treatment.smoothedVarianceTerm(rate: treatmentRate) + treatment.smoothedVarianceTerm(rate: controlRate)
            return DifferenceConfidenceSequence.halfWidth(variance: variance, alpha: alpha, tau: tau) < difference
        }
        guard separates(ceiling) else { return ceiling }
        // The half-width falls as n grows (for n beyond a handful), so the first n that separates is found by bisection.
        var low = 1
        var high = ceiling
        while low < high {
            let middle = low + (high - low) / 2
            if separates(middle) { high = middle } else { low = middle + 1 }
        }
        return low
    }
}
