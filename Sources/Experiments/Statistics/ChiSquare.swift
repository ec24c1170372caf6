import Foundation

/// The chi-square distribution's upper tail, from the regularized upper incomplete gamma function
/// `Q(a, x) = Γ(a, x) / Γ(a)`: for `k` degrees of freedom, `P(X > x) = Q(k/2, x/2)`.
///
/// `Q` is computed as in Press, Teukolsky, Vetterling & Flannery (*Numerical Recipes*, 3rd ed., §6.2):
/// the series for `P = 1 − Q` when `x < a + 1`, where it converges fast, and otherwise the continued
/// fraction for `Q` itself, evaluated by the modified Lentz method — so a small tail probability is
/// never found as `1 − (something close to 1)` and keeps its relative precision (p-values near 1e-10
/// come out right, which the sample-ratio check needs). `log Γ` is Lanczos' approximation (g = 7, 9
/// terms; relative error below 1e-15 for positive arguments). No library is involved.
public enum ChiSquare {
    /// `P(X > x)` for a chi-square variable with `degreesOfFreedom` degrees of freedom.
    public static func survival(_ x: Double, degreesOfFreedom: Int) -> Double {
        precondition(degreesOfFreedom > 0, "a chi-square distribution has at least one degree of freedom")
        guard x > 0 else { return 1 }
        return regularizedUpperGamma(Double(degreesOfFreedom) / 2, x / 2)
    }

    /// `Q(a, x) = Γ(a, x) / Γ(a)` for `a > 0`, `x ≥ 0`.
    public static func regularizedUpperGamma(_ a: Double, _ x: Double) -> Double {
        precondition(a > 0 && x >= 0, "Q(a, x) needs a > 0 and x ≥ 0")
        if x == 0 { return 1 }
        if x < a + 1 { return max(0, 1 - lowerSeries(a, x)) }
        return min(1, upperContinuedFraction(a, x))
    }

    /// `P(a, x)` by its series: `e^{−x} x^a / Γ(a+1) · Σ x^n / ((a+1)…(a+n))`.
    static func lowerSeries(_ a: Double, _ x: Double) -> Double {
        var term = 1 / a
        var sum = term
        var denominator = a
        for _ in 0 ..< 10_000 {
            denominator += 1
            term *= x / denominator
            sum += term
            if abs(term) < abs(sum) * 1e-15 { break }
        }
        return sum * exp(-x + a * log(x) - logGamma(a))
    }

    /// `Q(a, x)` by its continued fraction `e^{−x} x^a / Γ(a) · 1/(x+1−a− 1·(1−a)/(x+3−a− 2·(2−a)/(x+5−a− …)))`.
    static func upperContinuedFraction(_ a: Double, _ x: Double) -> Double {
        let tiny = 1e-300
        var b = x + 1 - a
        var c = 1 / tiny
        var d = 1 / b
        var h = d
        for i in 1 ... 10_000 {
            let an = -Double(i) * (Double(i) - a)
            b += 2
            d = an * d + b
            if abs(d) < tiny { d = tiny }
            c = b + an / c
            if abs(c) < tiny { c = tiny }
            d = 1 / d
            let delta = d * c
            h *= delta
            if abs(delta - 1) < 1e-15 { break }
        }
        return exp(-x + a * log(x) - logGamma(a)) * h
    }

    static let lanczos: [Double] = [
        0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
        -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6,
        1.5056327351493116e-7,
    ]

    /// `log Γ(z)` for `z > 0`, by Lanczos' approximation (with the reflection formula below 1/2).
    static func logGamma(_ z: Double) -> Double {
        if z < 0.5 {
            return log(Double.pi / abs(sin(Double.pi * z))) - logGamma(1 - z)
        }
        let shifted = z - 1
        var sum = lanczos[0]
        for index in 1 ..< lanczos.count {
            sum += lanczos[index] / (shifted + Double(index))
        }
        let t = shifted + 7.5
        return 0.5 * log(2 * Double.pi) + (shifted + 0.5) * log(t) - t + log(sum)
    }
}

/// The sample-ratio check experimentation platforms run (Optimizely, Statsig, Eppo, GrowthBook): are
/// the customers exposed to each arm in the shares the split was configured with? Arms are assigned by
/// a hash, so the counts are a multinomial draw from the configured shares; Pearson's chi-square
/// goodness-of-fit statistic `Σ (observed − expected)² / expected` has `arms − 1` degrees of freedom.
/// A p-value below 0.001 (the threshold those platforms use) is a mismatch: something other than
/// chance moves customers between arms — an arm not live, a rule that catches some of one arm's
/// customers first, a changed split, lost events — and the arms' comparison cannot be trusted.
/// Because the threshold is strict, a correct split is flagged in 0.1% of checks (the test suite
/// measures it over thousands of simulated splits).
public enum SampleRatioTest {
    public static let threshold = 0.001
    /// Pearson's statistic follows the chi-square distribution once every expected count is at least
    /// 5 (Cochran's rule); below that the check is not run.
    public static let minimumExpectedCount = 5.0

    public struct Outcome: Sendable, Equatable {
        public var chiSquare: Double
        public var degreesOfFreedom: Int
        public var pValue: Double
        public var mismatch: Bool
    }

    /// The check for `observed` counts against `shares` (any positive weights, e.g. percents), or nil
    /// when there is nothing to test: fewer than two arms, or an expected count below the minimum.
    public static func test(observed: [Int], shares: [Double]) -> Outcome? {
        precondition(observed.count == shares.count, "one share per observed count")
        let totalShare = shares.reduce(0, +)
        let total = Double(observed.reduce(0, +))
        guard observed.count >= 2, totalShare > 0, shares.allSatisfy({ $0 > 0 }) else { return nil }
        let expected = shares.map { total * $0 / totalShare }
        guard expected.allSatisfy({ $0 >= minimumExpectedCount }) else { return nil }
        let statistic = zip(observed, expected).reduce(0.0) { sum, pair in
            let difference = Double(pair.0) - pair.1
            return sum + difference * difference / pair.1
        }
        let df = observed.count - 1
        let p = ChiSquare.survival(statistic, degreesOfFreedom: df)
        return Outcome(chiSquare: statistic, degreesOfFreedom: df, pValue: p, mismatch: p < threshold)
    }
}
