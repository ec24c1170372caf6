/// The Wilson score interval for a binomial proportion (E. B. Wilson, "Probable inference, the law of
/// succession, and statistical inference", JASA 22(158), 1927; recommended over the Wald interval by
/// Brown, Cai & DasGupta, "Interval Estimation for a Binomial Proportion", Statistical Science 16(2), 2001).
///
/// It inverts the score test, so it stays inside [0, 1] and keeps close to its nominal coverage for
/// small counts and rates near 0 or 1, where `p ± z·sqrt(p(1-p)/n)` collapses to a point.
/// It is a fixed-sample interval: valid at one look, which is how a rate is read; comparisons that
/// people watch daily use `DifferenceConfidenceSequence` instead.
public enum WilsonInterval {
    /// The standard normal quantile for a two-sided 95% interval, Φ⁻¹(0.975).
    public static let z95 = 1.959963984540054

    /// The interval for `successes` out of `trials`, or nil when there are no trials.
    public static func interval(successes: Int, trials: Int, z: Double = z95) -> ProportionInterval? {
        guard trials > 0 else { return nil }
        precondition(successes >= 0 && successes <= trials, "successes must lie in 0...trials")
        let n = Double(trials)
        let p = Double(successes) / n
        let z2 = z * z
        let denominator = 1 + z2 / n
        let center = (p + z2 / (2 * n)) / denominator
        let half = z / denominator * (p * (1 - p) / n + z2 / (4 * n * n)).squareRoot()
        // The exact ends are 0 and 1 when every or no trial succeeded; rounding must not move them.
        let low = successes == 0 ? 0 : max(0, center - half)
        let high = successes == trials ? 1 : min(1, center + half)
        return ProportionInterval(low: low, high: high)
    }
}
