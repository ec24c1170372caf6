/// s⁻¹ mod n for the order n of P-256: the one inverse an ES256 check needs. OpenSSL's
/// `BN_mod_inverse` spends about 10 µs on it in general-purpose arithmetic; this binary extended
/// Euclid on four 64-bit limbs needs a fraction of that. The caller confirms s · w ≡ 1 (mod n)
/// with OpenSSL before using the result, so a fault here can only cost time, never a wrong answer.
enum P256OrderInverse {
    /// A 256-bit unsigned integer in four 64-bit limbs, least significant first.
    struct Limbs: Equatable {
        var l0: UInt64, l1: UInt64, l2: UInt64, l3: UInt64

        static let one = Limbs(l0: 1, l1: 0, l2: 0, l3: 0)
        static let zero = Limbs(l0: 0, l1: 0, l2: 0, l3: 0)

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

        var isEven: Bool { l0 & 1 == 0 }
        var isZero: Bool { (l0 | l1 | l2 | l3) == 0 }

        static func >= (a: Limbs, b: Limbs) -> Bool {
            if a.l3 != b.l3 { return a.l3 > b.l3 }
            if a.l2 != b.l2 { return a.l2 > b.l2 }
            if a.l1 != b.l1 { return a.l1 > b.l1 }
            return a.l0 >= b.l0
        }

        /// self + other, with the carry out of the top limb.
        @inline(__always)
        func adding(_ other: Limbs) -> (Limbs, UInt64) {
            var carry: UInt64 = 0
            @inline(__always) func add(_ a: UInt64, _ b: UInt64) -> UInt64 {
                let (partial, first) = a.addingReportingOverflow(b)
                let (sum, second) = partial.addingReportingOverflow(carry)
                carry = (first || second) ? 1 : 0
                return sum
            }
            let s0 = add(l0, other.l0), s1 = add(l1, other.l1), s2 = add(l2, other.l2), s3 = add(l3, other.l3)
            return (Limbs(l0: s0, l1: s1, l2: s2, l3: s3), carry)
        }

        /// self − other, for self ≥ other.
        @inline(__always)
        func subtracting(_ other: Limbs) -> Limbs {
            var borrow: UInt64 = 0
            @inline(__always) func subtract(_ a: UInt64, _ b: UInt64) -> UInt64 {
                let (partial, first) = a.subtractingReportingOverflow(b)
                let (difference, second) = partial.subtractingReportingOverflow(borrow)
                borrow = (first || second) ? 1 : 0
                return difference
            }
            let d0 = subtract(l0, other.l0), d1 = subtract(l1, other.l1), d2 = subtract(l2, other.l2), d3 = subtract(l3, other.l3)
            return Limbs(l0: d0, l1: d1, l2: d2, l3: d3)
        }

        /// self >> 1, with `top` shifted in as the new most significant bit.
        func halved(top: UInt64 = 0) -> Limbs {
            Limbs(l0: l0 >> 1 | l1 << 63, l1: l1 >> 1 | l2 << 63, l2: l2 >> 1 | l3 << 63, l3: l3 >> 1 | top << 63)
        }
    }

    /// n, the order of P-256.
    static let order = Limbs(l0: 0xF3B9_CAC2_FC63_2551, l1: 0xBCE6_FAAD_A717_9E84, l2: 0xFFFF_FFFF_FFFF_FFFF, l3: 0xFFFF_FFFF_0000_0000)

    /// x / 2 mod n, for x < n (n is odd: an odd x becomes (x + n) / 2).
    @inline(__always)
    static func half(_ x: Limbs) -> Limbs {
        if x.isEven { return x.halved() }
        let (sum, carry) = x.adding(order)
        return sum.halved(top: carry)
    }

    /// (a − b) mod n, for a, b < n.
    @inline(__always)
    static func difference(_ a: Limbs, _ b: Limbs) -> Limbs {
        a >= b ? a.subtracting(b) : a.adding(order).0.subtracting(b)
    }

    /// s⁻¹ mod n for 32 big-endian bytes s with 0 < s < n; nil otherwise.
    static func inverse(bigEndian s: UnsafeRawBufferPointer) -> [UInt8]? {
        guard s.count == 32 else { return nil }
        let value = Limbs(bigEndian: s)
        guard !value.isZero, !(value >= order) else { return nil }
        // Invariants: x1 · s ≡ u and x2 · s ≡ v (mod n); gcd(u, v) = 1 throughout.
        var (u, v, x1, x2) = (value, order, Limbs.one, Limbs.zero)
        while u != .one && v != .one {
            while u.isEven {
                u = u.halved()
                x1 = half(x1)
            }
            while v.isEven {
                v = v.halved()
                x2 = half(x2)
            }
            if u >= v {
                u = u.subtracting(v)
                x1 = difference(x1, x2)
            } else {
                v = v.subtracting(u)
                x2 = difference(x2, x1)
            }
            if u.isZero || v.isZero { return nil }
        }
        return (u == .one ? x1 : x2).bigEndian
    }
}
