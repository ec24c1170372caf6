import Foundation

/// An always-valid confidence sequence for the difference of two proportions, `treatment − control`:
/// the normal-mixture sequential probability ratio test (mSPRT) of Johari, Koomen, Pekelis & Walsh
/// ("Always Valid Inference: Continuous Monitoring of A/B Tests", Operations Research 70(3), 2022 —
/// the method behind Optimizely's Stats Engine), inverted into an interval. It is the same boundary as
/// the two-sided normal-mixture confidence sequence of Howard, Ramdas, McAuliffe & Sekhon
/// ("Time-uniform, nonparametric, nonasymptotic confidence sequences", Annals of Statistics 49(2), 2021).
///
/// With `d̂` the observed difference and `V` its variance, the mixture likelihood ratio against a
/// difference `θ` with a `N(θ, τ²)` mixture over alternatives is
/// `sqrt(V/(V+τ²)) · exp(τ²(d̂−θ)² / (2V(V+τ²)))`, a martingale under `θ`; by Ville's inequality it
/// exceeds `1/α` at *any* time with probability at most `α`. The interval is every `θ` it has not rejected:
///
///     d̂ ± sqrt( 2V(V+τ²)/τ² · ( log(1/α) + ½·log((V+τ²)/V) ) )
///
/// so it holds the true difference at every look at once, however often people look and whenever they
/// stop — unlike a fixed-sample interval, which looked at daily for a month "finds" a difference that is
/// not there far more often than 5% of the time.
///
/// `V` is the plug-in variance `p̃ₜ(1−p̃ₜ)/nₜ + p̃꜀(1−p̃꜀)/n꜀` with add-one-success-and-failure rates
/// `p̃ = (x+1)/(n+2)` (Agresti & Caffo, 2000), so an arm with all or no successes still has variance;
/// the guarantee is therefore asymptotic (as for the mSPRT on Bernoulli data in practice), and the test
/// suite measures it by simulation with daily looks.
///
/// Mixing parameter: `τ = 0.05` (five percentage points). The width is smallest when `τ² ≈ 8·V`
/// (the curve is flat: within 7% of its minimum for `τ²/V` between 2 and 100). Keep rates near 30–40%
/// give `V ≈ 0.46/n`, so `τ = 0.05` is tightest at about 1,500 customers per arm — the scale of one
/// month of a retention flow — and stays within 10% of the tightest for roughly 200 to 20,000 per arm;
/// five points is also the size of difference a team would act on.
public enum DifferenceConfidenceSequence {
    public static let mixingStandardDeviation = 0.05
    public static let defaultAlpha = 0.05

    /// Counts of one arm: customers with a decided outcome, and how many of them succeeded.
    public struct Arm: Sendable, Hashable {
        public var successes: Int
        public var trials: Int

        public init(successes: Int, trials: Int) {
            self.successes = successes
            self.trials = trials
        }

        var rate: Double { Double(successes) / Double(trials) }
        var smoothedVarianceTerm: Double {
            smoothedVarianceTerm(rate: rate)
        }

        /// The arm's share of the variance if `rate` of its `trials` succeeded.
        func smoothedVarianceTerm(rate: Double) -> Double {
            let n = Double(trials)
            let p = (rate * n + 1) / (n + 2)
            return p * (1 - p) / n
        }
    }

    /// The interval on `treatment − control`, or nil while an arm has no decided customer.
    public static func interval(treatment: Arm, control: Arm, alpha: Double = defaultAlpha,
                                tau: Double = mixingStandardDeviation) -> ProportionInterval? {
        guard treatment.trials > 0, control.trials > 0 else { return nil }
        let difference = treatment.rate - control.rate
        let variance = treatment.smoothedVarianceTerm + control.smoothedVarianceTerm
        let half = halfWidth(variance: variance, alpha: alpha, tau: tau)
        return ProportionInterval(low: max(-1, difference - half), high: min(1, difference + half))
    }

    /// The always-valid p-value of "no difference": `1/Λ` with `Λ` the mixture likelihood ratio at
    /// θ = 0, capped at 1 — at most `α` exactly when the interval at `α` excludes 0. Valid at any look,
    /// so a multiple-testing procedure over several of them (Holm's) keeps its guarantee at any look.
    public static func pValue(treatment: Arm, control: Arm, tau: Double = mixingStandardDeviation) -> Double? {
        guard treatment.trials > 0, control.trials > 0 else { return nil }
        let difference = treatment.rate - control.rate
        let variance = treatment.smoothedVarianceTerm + control.smoothedVarianceTerm
        let tau2 = tau * tau
        let logLikelihoodRatio = 0.5 * log(variance / (variance + tau2)) + tau2 * difference * difference / (2 * variance * (variance + tau2))
        return min(1, exp(-logLikelihoodRatio))
    }

    /// The half-width of the interval when the difference's variance is `variance`.
    public static func halfWidth(variance: Double, alpha: Double = defaultAlpha, tau: Double = mixingStandardDeviation) -> Double {
        let tau2 = tau * tau
        let squared = 2 * variance * (variance + tau2) / tau2 * (log(1 / alpha) + 0.5 * log((variance + tau2) / variance))
        return squared.squareRoot()
    }
}
