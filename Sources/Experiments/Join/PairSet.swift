/// A set of 128-bit keys whose bits are already random (UUIDs, pseudonyms, fingerprints), with open
/// addressing and no rehashing through `Hasher`: the join asks it several times per event, and
/// SipHash was a fifth of the benchmark's time.
struct PairSet {
    private var highs: [UInt64]
    private var lows: [UInt64]
    private var used: [Bool]
    private(set) var count = 0

    init(capacity: Int = 1024) {
        var size = 16
        while size < capacity * 2 { size *= 2 }
        highs = Array(repeating: 0, count: size)
        lows = Array(repeating: 0, count: size)
        used = Array(repeating: false, count: size)
    }

    private func slot(_ high: UInt64, _ low: UInt64) -> (index: Int, found: Bool) {
        let mask = used.count - 1
        var z = (high ^ (low &* 0x9E37_79B9_7F4A_7C15))
        z = (z ^ (z >> 31)) &* 0xBF58_476D_1CE4_E5B9
        var index = Int(truncatingIfNeeded: z ^ (z >> 29)) & mask
        while used[index] {
            if highs[index] == high, lows[index] == low { return (index, true) }
            index = (index + 1) & mask
        }
        return (index, false)
    }

    func contains(_ high: UInt64, _ low: UInt64) -> Bool {
        slot(high, low).found
    }

    /// Inserts the key; false when it was already there.
    mutating func insert(_ high: UInt64, _ low: UInt64) -> Bool {
        let (index, found) = slot(high, low)
        if found { return false }
        highs[index] = high
        lows[index] = low
        used[index] = true
        count += 1
        if count * 4 > used.count * 3 { grow() }
        return true
    }

    private mutating func grow() {
        let oldHighs = highs
        let oldLows = lows
        let oldUsed = used
        highs = Array(repeating: 0, count: oldUsed.count * 2)
        lows = highs
        used = Array(repeating: false, count: oldUsed.count * 2)
        count = 0
        for index in oldUsed.indices where oldUsed[index] {
            _ = insert(oldHighs[index], oldLows[index])
        }
    }
}
