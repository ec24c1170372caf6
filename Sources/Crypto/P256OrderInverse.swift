/// s⁻¹ mod n for the order n of P-256: the one inverse an ES256 check needs. OpenSSL's
/// `BN_mod_inverse` spends about 10 µs on it in general-purpose arithmetic; this is Bernstein and
/// Yang's divstep inversion, 62 steps at a time on one machine word each, then applied to the whole
/// numbers (about 1.5 µs). Its time depends on s, which is public in a signature check; it is not
/// for secrets. The caller confirms s · w ≡ 1 (mod n) with OpenSSL before using the result, so a
/// fault here can only cost time, never a wrong answer.
public enum P256OrderInverse {
    /// A 256-bit unsigned integer in four 64-bit limbs, least significant first.
    struct Limbs: Equatable {
        var l0: UInt64, l1: UInt64, l2: UInt64, l3: UInt64

        /// From 32 big-endian bytes.
        init(bigEndian bytes: UnsafeRawBufferPointer) {
            func word(_ index: Int) -> UInt64 {
                var value: UInt64 = 0
                for byte in bytes[(index * 8)..<(index * 8 + 8)] { value = value << 8 | UInt64(byte) }
                return value
            }
            l3 = word(0); l2 = word(1); l1 = word(2); l0 = word(3)
        }

        init(l0: UInt64, l1: UInt64, l2: UInt64, l3: UInt64) {
            self.l0 = l0; self.l1 = l1; self.l2 = l2; self.l3 = l3
        }

        /// 32 big-endian bytes.
        var bigEndian: [UInt8] {
            var bytes = [UInt8](repeating: 0, count: 32)
            for (index, word) in [l3, l2, l1, l0].enumerated() {
                for shift in 0..<8 { bytes[index * 8 + shift] = UInt8(truncatingIfNeeded: word >> (56 - 8 * shift)) }
            }
            return bytes
        }

        var isZero: Bool { (l0 | l1 | l2 | l3) == 0 }

        static func >= (a: Limbs, b: Limbs) -> Bool {
            if a.l3 != b.l3 { return a.l3 > b.l3 }
            if a.l2 != b.l2 { return a.l2 > b.l2 }
            if a.l1 != b.l1 { return a.l1 > b.l1 }
            return a.l0 >= b.l0
        }
    }

    /// n, the order of P-256.
    static let order = Limbs(l0: 0xF3B9_CAC2_FC63_2551, l1: 0xBCE6_FAAD_A717_9E84, l2: 0xFFFF_FFFF_FFFF_FFFF, l3: 0xFFFF_FFFF_0000_0000)

    /// A signed integer in five limbs of 62 bits, least significant first: l0…l3 in [0, 2^62) and
    /// l4 signed, once normalized. Wide enough for ±4n, which is all the inversion needs.
    struct Signed62 {
        var l0: Int64, l1: Int64, l2: Int64, l3: Int64, l4: Int64

        static let mask: Int64 = (1 << 62) - 1
        static let zero = Signed62(l0: 0, l1: 0, l2: 0, l3: 0, l4: 0)
        static let one = Signed62(l0: 1, l1: 0, l2: 0, l3: 0, l4: 0)

        init(l0: Int64, l1: Int64, l2: Int64, l3: Int64, l4: Int64) {
            self.l0 = l0; self.l1 = l1; self.l2 = l2; self.l3 = l3; self.l4 = l4
        }

        init(_ value: Limbs) {
            l0 = Int64(value.l0 & 0x3FFF_FFFF_FFFF_FFFF)
            l1 = Int64((value.l0 >> 62 | value.l1 << 2) & 0x3FFF_FFFF_FFFF_FFFF)
            l2 = Int64((value.l1 >> 60 | value.l2 << 4) & 0x3FFF_FFFF_FFFF_FFFF)
            l3 = Int64((value.l2 >> 58 | value.l3 << 6) & 0x3FFF_FFFF_FFFF_FFFF)
            l4 = Int64(value.l3 >> 56)
        }

        /// For a normalized value in [0, 2^256).
        var limbs: Limbs {
            let (a0, a1, a2, a3, a4) = (UInt64(l0), UInt64(l1), UInt64(l2), UInt64(l3), UInt64(l4))
            return Limbs(l0: a0 | a1 << 62, l1: a1 >> 2 | a2 << 60, l2: a2 >> 4 | a3 << 58, l3: a3 >> 6 | a4 << 56)
        }

        /// Limb `index`, 0 to 4.
        @inline(__always)
        subscript(index: Int) -> Int64 {
            get {
                switch index {
                case 0: l0
                case 1: l1
                case 2: l2
                case 3: l3
                default: l4
                }
            }
            set {
                switch index {
                case 0: l0 = newValue
                case 1: l1 = newValue
                case 2: l2 = newValue
                case 3: l3 = newValue
                default: l4 = newValue
                }
            }
        }

        /// The low 64 bits, in two's complement.
        @inline(__always)
        var low64: UInt64 { UInt64(bitPattern: l0) | UInt64(bitPattern: l1) << 62 }

        var isZero: Bool { (l0 | l1 | l2 | l3 | l4) == 0 }
        var isNegative: Bool { l4 < 0 }
        var isOne: Bool { l0 == 1 && (l1 | l2 | l3 | l4) == 0 }
        var isMinusOne: Bool { l0 == Self.mask && l1 == Self.mask && l2 == Self.mask && l3 == Self.mask && l4 == -1 }

        /// self + sign · other, normalized.
        @inline(__always)
        func adding(_ other: Signed62, negated: Bool = false) -> Signed62 {
            let sign: Int64 = negated ? -1 : 1
            var carry = l0 + sign * other.l0
            let r0 = carry & Self.mask
            carry = (carry >> 62) + l1 + sign * other.l1
            let r1 = carry & Self.mask
            carry = (carry >> 62) + l2 + sign * other.l2
            let r2 = carry & Self.mask
            carry = (carry >> 62) + l3 + sign * other.l3
            let r3 = carry & Self.mask
            return Signed62(l0: r0, l1: r1, l2: r2, l3: r3, l4: (carry >> 62) + l4 + sign * other.l4)
        }

        var negated: Signed62 { Signed62.zero.adding(self, negated: true) }
    }

    /// A signed 128-bit accumulator (the platform's `Int128` is not on every supported macOS).
    struct Accumulator {
        var low: UInt64
        var high: Int64

        @inline(__always)
        init(_ a: Int64, times b: Int64) {
            let product = a.multipliedFullWidth(by: b)
            low = product.low
            high = product.high
        }

        @inline(__always)
        mutating func add(_ a: Int64, times b: Int64) {
            let product = a.multipliedFullWidth(by: b)
            let (sum, carry) = low.addingReportingOverflow(product.low)
            low = sum
            high = high &+ product.high &+ (carry ? 1 : 0)
        }

        /// The low 62 bits, then the accumulator shifted right (arithmetically) by 62.
        @inline(__always)
        mutating func takeLimb() -> Int64 {
            let limb = Int64(bitPattern: low) & Signed62.mask
            low = low >> 62 | UInt64(bitPattern: high) << 2
            high >>= 62
            return limb
        }

        /// The value, once it fits in 64 bits.
        var value: Int64 { Int64(bitPattern: low) }
    }

    /// u·f + v·g and q·f + r·g of one batch: 2^62 times the new pair.
    struct Transition {
        var u: Int64, v: Int64, q: Int64, r: Int64
    }

    static let order62 = Signed62(order)

    /// n⁻¹ mod 2^62, by Newton's iteration (each step doubles the correct low bits; n ≡ n⁻¹ mod 8).
    static let orderInverse62: Int64 = {
        var inverse = order.l0
        for _ in 0..<5 { inverse = inverse &* (2 &- order.l0 &* inverse) }
        return Int64(bitPattern: inverse) & Signed62.mask
    }()

    /// 62 divsteps of Bernstein and Yang ("Fast constant-time gcd computation and modular
    /// inversion", 2019) on the low 64 bits of f (odd) and g, with δ carried between batches. Runs of
    /// even g are taken in one shift (this variant's time depends on the values, which are public in a
    /// signature check). Returns the matrix that takes (f, g) to 2^62 times their new values.
    @inline(__always)
    static func divsteps62(delta: inout Int64, f: UInt64, g: UInt64) -> Transition {
        var (f, g) = (f, g)
        var (u, v, q, r): (Int64, Int64, Int64, Int64) = (1, 0, 0, 1)
        var remaining = 62
        while true {
            // g even: g/2, δ + 1, and f's row doubles; for every trailing zero at once.
            let zeros = min(remaining, (g | UInt64(1) << UInt64(remaining)).trailingZeroBitCount)
            g >>= UInt64(zeros)
            u <<= Int64(zeros)
            v <<= Int64(zeros)
            delta += Int64(zeros)
            remaining -= zeros
            if remaining == 0 { break }
            // g odd.
            if delta > 0 {
                // (δ, f, g) ← (1 − δ, g, (g − f) / 2)
                (f, g) = (g, (g &- f) >> 1)
                (u, v, q, r) = (q << 1, r << 1, q - u, r - v)
                delta = 1 - delta
            } else {
                // (δ, f, g) ← (1 + δ, f, (g + f) / 2)
                g = (g &+ f) >> 1
                (u, v, q, r) = (u << 1, v << 1, q + u, r + v)
                delta += 1
            }
            remaining -= 1
            if remaining == 0 { break }
        }
        return Transition(u: u, v: v, q: q, r: r)
    }

    /// (u·a + v·b + ma·n, q·a + r·b + mb·n) / 2^62, for multiples of n that make the division exact
    /// (none for f and g, whose low 62 bits the transition clears by itself).
    @inline(__always)
    static func combine(_ t: Transition, _ a: Signed62, _ b: Signed62, plus ma: Int64, _ mb: Int64) -> (Signed62, Signed62) {
        let n = order62
        var ca = Accumulator(t.u, times: a.l0), cb = Accumulator(t.q, times: a.l0)
        ca.add(t.v, times: b.l0); ca.add(ma, times: n.l0)
        cb.add(t.r, times: b.l0); cb.add(mb, times: n.l0)
        _ = ca.takeLimb(); _ = cb.takeLimb()
        var outA = Signed62.zero, outB = Signed62.zero
        for index in 1...4 {
            ca.add(t.u, times: a[index]); ca.add(t.v, times: b[index]); ca.add(ma, times: n[index])
            cb.add(t.q, times: a[index]); cb.add(t.r, times: b[index]); cb.add(mb, times: n[index])
            outA[index - 1] = ca.takeLimb()
            outB[index - 1] = cb.takeLimb()
        }
        outA.l4 = ca.value
        outB.l4 = cb.value
        return (outA, outB)
    }

    /// (f, g) ← (u·f + v·g, q·f + r·g) / 2^62, exactly.
    @inline(__always)
    static func apply(_ t: Transition, f: inout Signed62, g: inout Signed62) {
        (f, g) = combine(t, f, g, plus: 0, 0)
    }

    /// (d, e) ← (u·d + v·e, q·d + r·e) / 2^62 mod n, kept in (−n, n): the division is exact after
    /// adding the multiple of n that clears the low 62 bits.
    @inline(__always)
    static func apply(_ t: Transition, d: inout Signed62, e: inout Signed62) {
        let lowD = UInt64(bitPattern: t.u) &* UInt64(bitPattern: d.l0) &+ UInt64(bitPattern: t.v) &* UInt64(bitPattern: e.l0)
        let lowE = UInt64(bitPattern: t.q) &* UInt64(bitPattern: d.l0) &+ UInt64(bitPattern: t.r) &* UInt64(bitPattern: e.l0)
        let inverse = UInt64(bitPattern: orderInverse62)
        let md = Int64(bitPattern: 0 &- lowD &* inverse) & Signed62.mask
        let me = Int64(bitPattern: 0 &- lowE &* inverse) & Signed62.mask
        let (newD, newE) = combine(t, d, e, plus: md, me)
        d = reduced(newD)
        e = reduced(newE)
    }

    /// x in (−2n, 2n) brought into (−n, n).
    @inline(__always)
    static func reduced(_ x: Signed62) -> Signed62 {
        if x.isNegative {
            let sum = x.adding(order62)
            return sum.isNegative || sum.isZero ? sum : x
        }
        let difference = x.adding(order62, negated: true)
        return difference.isNegative ? x : difference
    }

    /// s⁻¹ mod n for 32 big-endian bytes s with 0 < s < n; nil otherwise.
    public static func inverse(bigEndian s: UnsafeRawBufferPointer) -> [UInt8]? {
        guard s.count == 32 else { return nil }
        let value = Limbs(bigEndian: s)
        guard !value.isZero, !(value >= order) else { return nil }
        // Invariants: d · s ≡ f and e · s ≡ g (mod n). When g reaches 0, f = ±gcd(s, n) = ±1.
        var (f, g) = (order62, Signed62(value))
        var (d, e) = (Signed62.zero, Signed62.one)
        var delta: Int64 = 1
        // From δ = 1, 724 divsteps reach g = 0 for every odd f ≤ 2^256 and 0 ≤ g ≤ f (the bound
        // proved for Bernstein and Yang's iteration); 12 batches are 744. Past them, nil: the caller
        // then asks OpenSSL.
        for _ in 0..<12 {
            let transition = divsteps62(delta: &delta, f: f.low64, g: g.low64)
            apply(transition, f: &f, g: &g)
            apply(transition, d: &d, e: &e)
            if g.isZero { break }
        }
        guard g.isZero, f.isOne || f.isMinusOne else { return nil }
        var result = f.isOne ? d : d.negated
        if result.isNegative { result = result.adding(order62) }
        return result.limbs.bigEndian
    }
}
