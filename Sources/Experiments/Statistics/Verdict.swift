/// What a comparison of an arm with its control may say. A winner is named only when the always-valid
/// interval on the difference (`DifferenceConfidenceSequence`) lies entirely on one side of zero;
/// anything else is "not distinguishable yet" — never a winner from noise.
public enum Verdict: String, Sendable, Codable, Hashable {
    /// The arm's rate is higher than the control's (the interval is above zero).
    case better
    /// The arm's rate is lower than the control's (the interval is below zero).
    case worse
    case notDistinguishableYet
    /// An arm (or the control) has no customer with a decided outcome yet.
    case noData

    public init(difference interval: ProportionInterval?) {
        guard let interval else {
            self = .noData
            return
        }
        if interval.low > 0 {
            self = .better
        } else if interval.high < 0 {
            self = .worse
        } else {
            self = .notDistinguishableYet
        }
    }
}
