/// A small deterministic generator (Steele, Lea & Flood's SplitMix64), so every simulated run and
/// every generated case is reproducible from its seed on every platform.
public struct SplitMix64: Sendable {
    public var state: UInt64

    public init(seed: UInt64) {
        state = seed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    public mutating func uniform() -> Double {
        Double(next() >> 11) * 0x1p-53
    }

    public mutating func chance(_ probability: Double) -> Bool {
        uniform() < probability
    }

    /// In 0..<bound (a positive bound), in the bound's own integer type.
    public mutating func below<Bound: BinaryInteger>(_ bound: Bound) -> Bound {
        Bound(next() % UInt64(bound))
    }

    public mutating func hex(_ digits: Int) -> String {
        var text = ""
        while text.count < digits {
            let word = String(next(), radix: 16)
            text += String(repeating: "0", count: 16 - word.count) + word
        }
        return String(text.prefix(digits))
    }

    public mutating func uuid() -> String {
        let h = hex(32)
        let c = Array(h)
        return "\(String(c[0..<8]))-\(String(c[8..<12]))-\(String(c[12..<16]))-\(String(c[16..<20]))-\(String(c[20..<32]))"
    }
}
