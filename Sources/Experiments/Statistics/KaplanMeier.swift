import Foundation

/// The Kaplan–Meier estimate of the share still subscribed by time since exposure, with Greenwood's
/// variance and a pointwise 95% interval on the complementary log-log scale (E. L. Kaplan & P. Meier,
/// "Nonparametric estimation from incomplete observations", JASA 53(282), 1958; M. Greenwood, "The
/// natural duration of cancer", 1926; J. D. Kalbfleisch & R. L. Prentice, "The Statistical Analysis
/// of Failure Time Data", 2002, §1.4 — the transform keeps the interval inside [0, 1] and near its
/// nominal coverage where the plain `S ± 1.96·se` is not).
///
/// A customer whose observation ends before they are lost — the report's `now`, or their expiry
/// while a renewal may still come — is censored: at risk until then, and neither lost nor kept after.
public enum KaplanMeier {
    /// The estimate at one whole day after exposure.
    public struct Point: Sendable, Codable, Equatable {
        /// Whole days since the exposure: 0 is the exposure itself.
        public var day: Int
        /// Customers still subscribed and still observed at that instant.
        public var atRisk: Int
        /// Customers lost, and customers whose observation ended, in the day before it (`day − 1` to `day`).
        public var lost: Int
        public var censored: Int
        /// The estimated share of the row's exposed customers still subscribed `day` days after exposure.
        public var subscribed: Double
        /// Pointwise 95%; absent while no customer is lost yet (or every one is), where Greenwood's
        /// variance is zero and says nothing.
        public var interval: ProportionInterval?
    }

    /// The curve from customers lost and censored by whole `binsPerDay`-ths of a day since exposure
    /// (a loss and a censoring in one bin: the censored customer counts as at risk for the loss), one
    /// point a day from 0 to the longest any customer was observed.
    public static func curve(lost: [Int32: Int], censored: [Int32: Int], binsPerDay: Int32 = 24, z: Double = WilsonInterval.z95) -> [Point] {
        let bins = Set(lost.keys).union(censored.keys).sorted()
        guard let last = bins.last else { return [] }
        var atRisk = lost.values.reduce(0, +) + censored.values.reduce(0, +)
        var survival = 1.0, greenwood = 0.0
        var points = [Point(day: 0, atRisk: atRisk, lost: 0, censored: 0, subscribed: 1, interval: nil)]
        var next = bins.makeIterator()
        var bin = next.next()
        for day in stride(from: 1, through: Int(last / binsPerDay), by: 1) {
            var lostToday = 0, censoredToday = 0
            while let current = bin, current < Int32(day) * binsPerDay {
                let d = lost[current] ?? 0, c = censored[current] ?? 0
                if d > 0 {
                    survival *= 1 - Double(d) / Double(atRisk)
                    greenwood += d < atRisk ? Double(d) / (Double(atRisk) * Double(atRisk - d)) : .infinity
                }
                atRisk -= d + c
                lostToday += d
                censoredToday += c
                bin = next.next()
            }
            points.append(Point(day: day, atRisk: atRisk, lost: lostToday, censored: censoredToday, subscribed: rounded(survival),
                                interval: interval(survival, greenwood: greenwood, z: z)))
        }
        return points
    }

    /// exp(−exp(log(−log S) ± z·σ)), σ² = Greenwood's sum / (log S)².
    static func interval(_ survival: Double, greenwood: Double, z: Double) -> ProportionInterval? {
        guard survival > 0, survival < 1, greenwood.isFinite, greenwood > 0 else { return nil }
        let logS = log(survival)
        let sigma = greenwood.squareRoot() / abs(logS)
        let center = log(-logS)
        return ProportionInterval(low: rounded(exp(-exp(center + z * sigma))), high: rounded(exp(-exp(center - z * sigma))))
    }
}
