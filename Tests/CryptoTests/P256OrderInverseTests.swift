@testable import Crypto
import Testing

@Suite("The inverse modulo P-256's order that an ES256 check needs")
struct P256OrderInverseTests {
    typealias Limbs = P256OrderInverse.Limbs
    static let n = P256OrderInverse.order

    static func inverse(_ value: Limbs) -> Limbs? {
        value.bigEndian.withUnsafeBytes { P256OrderInverse.inverse(bigEndian: $0) }.map { bytes in bytes.withUnsafeBytes { Limbs(bigEndian: $0) } }
    }

    /// A value in [1, n − 1] from a seeded generator.
    static func random(_ generator: inout SplitMix) -> Limbs {
        while true {
            let value = Limbs(l0: generator.next(), l1: generator.next(), l2: generator.next(), l3: generator.next())
            if !value.isZero && !(value >= n) { return value }
        }
    }

    struct SplitMix {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    @Test("known inverses: 1 and n − 1 are their own, 2's is (n + 1) / 2")
    func knownValues() throws {
        #expect(Self.inverse(.one) == .one)
        let minusOne = Self.n.subtracting(.one)
        #expect(Self.inverse(minusOne) == minusOne)
        let two = Limbs(l0: 2, l1: 0, l2: 0, l3: 0)
        #expect(Self.inverse(two) == Self.n.adding(.one).0.halved())
    }

    @Test("0, n and values above n have no inverse here")
    func outOfRange() {
        #expect(Self.inverse(.zero) == nil)
        #expect(Self.inverse(Self.n) == nil)
        #expect(Self.inverse(Limbs(l0: .max, l1: .max, l2: .max, l3: .max)) == nil)
        #expect([UInt8](repeating: 1, count: 31).withUnsafeBytes { P256OrderInverse.inverse(bigEndian: $0) } == nil)
    }

    @Test("over 20,000 seeded values: inverting twice gives the value back, and the inverse of 2·s is half the inverse of s")
    func randomValues() throws {
        var generator = SplitMix(state: 20_261_128)
        for _ in 0..<20_000 {
            let value = Self.random(&generator)
            let inverse = try #require(Self.inverse(value))
            #expect(!(inverse >= Self.n) && inverse != value || value == .one || value == Self.n.subtracting(.one))
            #expect(Self.inverse(inverse) == value)
            let (sum, carry) = value.adding(value)
            let doubled = carry == 1 || sum >= Self.n ? sum.subtracting(Self.n) : sum
            #expect(Self.inverse(doubled) == P256OrderInverse.half(inverse))
        }
    }
}
