@testable import Crypto
import Testing

/// The test's own 256-bit arithmetic, to check the inversion with.
extension P256OrderInverse.Limbs {
    static let one = Self(l0: 1, l1: 0, l2: 0, l3: 0)
    static let zero = Self(l0: 0, l1: 0, l2: 0, l3: 0)

    var isEven: Bool { l0 & 1 == 0 }

    /// self + other, with the carry out of the top limb.
    func adding(_ other: Self) -> (Self, UInt64) {
        var carry: UInt64 = 0
        var words = [l0, l1, l2, l3]
        for (index, word) in [other.l0, other.l1, other.l2, other.l3].enumerated() {
            let (partial, first) = words[index].addingReportingOverflow(word)
            let (sum, second) = partial.addingReportingOverflow(carry)
            carry = (first || second) ? 1 : 0
            words[index] = sum
        }
        return (Self(l0: words[0], l1: words[1], l2: words[2], l3: words[3]), carry)
    }

    /// self − other, for self ≥ other: self + ¬other + 1, modulo 2^256.
    func subtracting(_ other: Self) -> Self {
        adding(Self(l0: ~other.l0, l1: ~other.l1, l2: ~other.l2, l3: ~other.l3)).0.adding(.one).0
    }

    /// self >> 1, with `top` shifted in as the new most significant bit.
    func halved(top: UInt64 = 0) -> Self {
        Self(l0: l0 >> 1 | l1 << 63, l1: l1 >> 1 | l2 << 63, l2: l2 >> 1 | l3 << 63, l3: l3 >> 1 | top << 63)
    }
}

@Suite("The inverse modulo P-256's order that an ES256 check needs")
struct P256OrderInverseTests {
    typealias Limbs = P256OrderInverse.Limbs
    static let n = P256OrderInverse.order

    static func inverse(_ value: Limbs) -> Limbs? {
        value.bigEndian.withUnsafeBytes { P256OrderInverse.inverse(bigEndian: $0) }.map { bytes in bytes.withUnsafeBytes { Limbs(bigEndian: $0) } }
    }

    /// (a + b) mod n, for a, b < n.
    static func sum(_ a: Limbs, _ b: Limbs) -> Limbs {
        let (sum, carry) = a.adding(b)
        return carry == 1 || sum >= n ? sum.subtracting(n) : sum
    }

    /// a · b mod n by doubling and adding, bit by bit from the top: slow, and independent of the
    /// code under test.
    static func product(_ a: Limbs, _ b: Limbs) -> Limbs {
        var result = Limbs.zero
        for word in [b.l3, b.l2, b.l1, b.l0] {
            for bit in (0..<64).reversed() {
                result = sum(result, result)
                if word >> UInt64(bit) & 1 == 1 { result = sum(result, a) }
            }
        }
        return result
    }

    /// x / 2 mod n (n is odd: an odd x becomes (x + n) / 2).
    static func half(_ x: Limbs) -> Limbs {
        if x.isEven { return x.halved() }
        let (sum, carry) = x.adding(n)
        return sum.halved(top: carry)
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

    @Test("over 20,000 seeded values: s · s⁻¹ ≡ 1, inverting twice gives s back, and the inverse of 2·s is half the inverse of s")
    func randomValues() throws {
        var generator = SplitMix(state: 20_261_128)
        for _ in 0..<20_000 {
            let value = Self.random(&generator)
            let inverse = try #require(Self.inverse(value))
            #expect(!(inverse >= Self.n))
            #expect(Self.product(value, inverse) == .one)
            #expect(Self.inverse(inverse) == value)
            #expect(Self.inverse(Self.sum(value, value)) == Self.half(inverse))
        }
    }

    @Test("values that take the most steps: small ones, powers of two, all ones below n, n − 2^k, sparse and dense bit patterns")
    func structuredValues() throws {
        var values: [Limbs] = [Limbs(l0: 3, l1: 0, l2: 0, l3: 0), Limbs(l0: .max, l1: .max, l2: .max, l3: 0xFFFF_FFFE_FFFF_FFFF)]
        for k in 0..<256 {
            var power = Limbs.zero
            switch k / 64 {
            case 0: power.l0 = 1 << UInt64(k % 64)
            case 1: power.l1 = 1 << UInt64(k % 64)
            case 2: power.l2 = 1 << UInt64(k % 64)
            default: power.l3 = 1 << UInt64(k % 64)
            }
            if !(power >= Self.n) { values.append(power) }
            if Self.n >= power, Self.n != power { values.append(Self.n.subtracting(power)) }
        }
        // Sparse and dense bit patterns, and values just below n: long runs of equal bits are what
        // make the divsteps' matrices and coefficients largest (an overflow would stop serve).
        var generator = SplitMix(state: 7_240_000)
        func pattern() -> UInt64 {
            switch generator.next() % 5 {
            case 0: 0
            case 1: .max
            case 2: generator.next() & generator.next() & generator.next()
            case 3: generator.next() | generator.next() | generator.next()
            default: generator.next()
            }
        }
        for round in 0..<3_000 {
            let value = round % 3 == 0 ? Self.n.subtracting(Limbs(l0: pattern(), l1: 0, l2: 0, l3: 0))
                : Limbs(l0: pattern(), l1: pattern(), l2: pattern(), l3: pattern())
            if !value.isZero && !(value >= Self.n) { values.append(value) }
        }
        for value in values {
            let inverse = try #require(Self.inverse(value))
            #expect(Self.product(value, inverse) == .one)
        }
    }
}
