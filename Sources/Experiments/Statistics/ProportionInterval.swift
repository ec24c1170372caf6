/// A two-sided interval on a rate or on a difference of rates, as fractions (0.31 is 31%).
public struct ProportionInterval: Sendable, Hashable, Codable {
    public var low: Double
    public var high: Double

    public init(low: Double, high: Double) {
        self.low = low
        self.high = high
    }

    public func contains(_ value: Double) -> Bool {
        low <= value && value <= high
    }

    /// True when every value in the interval is on one side of zero.
    public var excludesZero: Bool {
        low > 0 || high < 0
    }
}
