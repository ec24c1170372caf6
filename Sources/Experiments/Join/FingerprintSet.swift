/// A set of 64-bit fingerprints whose bits are already random, with open addressing over one array of
/// words: 8 bytes a slot, where a `PairSet` spends 17 on a 128-bit key. A slot holding 0 is empty, so
/// the fingerprint 0 itself is kept apart, in `holdsZero`.
struct FingerprintSet {
    private var slots: [UInt64]
    private var holdsZero = false
    private(set) var count = 0

    init(capacity: Int = 1024) {
        var size = 16
        while size < capacity * 2 { size *= 2 }
        slots = Array(repeating: 0, count: size)
    }

    /// Inserts the fingerprint; false when it was already there.
    mutating func insert(_ fingerprint: UInt64) -> Bool {
        if fingerprint == 0 {
            if holdsZero { return false }
            holdsZero = true
            count += 1
            return true
        }
        let mask = slots.count - 1
        var index = Int(truncatingIfNeeded: fingerprint) & mask
        while true {
            let stored = slots[index]
            if stored == fingerprint { return false }
            if stored == 0 { break }
            index = (index + 1) & mask
        }
        slots[index] = fingerprint
        count += 1
        if count * 4 > slots.count * 3 { grow() }
        return true
    }

    private mutating func grow() {
        let old = slots
        slots = Array(repeating: 0, count: old.count * 2)
        let mask = slots.count - 1
        for fingerprint in old where fingerprint != 0 {
            var index = Int(truncatingIfNeeded: fingerprint) & mask
            while slots[index] != 0 { index = (index + 1) & mask }
            slots[index] = fingerprint
        }
    }
}
