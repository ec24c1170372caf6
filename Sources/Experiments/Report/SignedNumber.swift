import Foundation

/// Numbers as every results format prints them: one minus sign (U+2212) for negatives, `+` for
/// positives when asked, and no `−0.0` for a value that rounds to zero.
public enum SignedNumber {
    /// `value` with `digits` decimals: `+1.2`, `−0.5`, `0.0` (unsigned when `signed` is false and
    /// the value is not negative).
    public static func text(_ value: Double, digits: Int, signed: Bool = true) -> String {
        let magnitude = String(format: "%.\(digits)f", abs(value))
        let isZero = magnitude.allSatisfy { $0 == "0" || $0 == "." }
        if isZero { return (signed ? "+" : "") + magnitude }
        return (value < 0 ? "\u{2212}" : (signed ? "+" : "")) + magnitude
    }

    /// A relative change as a whole percent: `+12%`, `−5%`.
    public static func percent(_ fraction: Double) -> String {
        text(fraction * 100, digits: 0) + "%"
    }
}
