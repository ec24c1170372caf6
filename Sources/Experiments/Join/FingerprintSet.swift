/// A set of 64-bit fingerprints whose bits are already random, with open addressing over arrays of
/// words: 8 bytes a slot, where a `PairSet` spends 17 on a 128-bit key. A slot holding 0 is empty, so
/// the fingerprint 0 itself is kept apart, in `holdsZero`.
///
/// The slots are split into 64 parts by a fingerprint's top six bits, each growing on its own: the set
/// never holds two copies of all its slots at once (a part being doubled is a 64th of them), where one
/// array doubling held one and a half times the set's size at the moment it grew.
struct FingerprintSet {
    private static let partBits = 6
    private var parts: [[UInt64]]
    private var partCounts: [Int]
    private var holdsZero = false
    private(set) var count = 0

    init(capacity: Int = 1024) {
        var size = 16
        while size * (1 << Self.partBits) < capacity * 2 { size *= 2 }
        parts = Array(repeating: Array(repeating: 0, count: size), count: 1 << Self.partBits)
        partCounts = Array(repeating: 0, count: 1 << Self.partBits)
    }

    /// Inserts the fingerprint; false when it was already there.
    mutating func insert(_ fingerprint: UInt64) -> Bool {
        if fingerprint == 0 {
            if holdsZero { return false }
            holdsZero = true
            count += 1
            return true
        }
        let part = Int(truncatingIfNeeded: fingerprint >> (64 - Self.partBits))
        let inserted = parts[part].withUnsafeMutableBufferPointer { slots in
            let mask = slots.count - 1
            var index = Int(truncatingIfNeeded: fingerprint) & mask
            while true {
                let stored = slots[index]
                if stored == fingerprint { return false }
                if stored == 0 { break }
                index = (index + 1) & mask
            }
            slots[index] = fingerprint
            return true
        }
        guard inserted else { return false }
        count += 1
        partCounts[part] += 1
        if partCounts[part] * 4 > parts[part].count * 3 { grow(part) }
        return true
    }

    private mutating func grow(_ part: Int) {
        let old = parts[part]
        var slots = [UInt64](repeating: 0, count: old.count * 2)
        let mask = slots.count - 1
        for fingerprint in old where fingerprint != 0 {
            var index = Int(truncatingIfNeeded: fingerprint) & mask
            while slots[index] != 0 { index = (index + 1) & mask }
            slots[index] = fingerprint
        }
        parts[part] = slots
    }
}
