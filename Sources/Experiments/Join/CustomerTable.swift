/// What the join follows of each customer, in one open-addressing table: the latest expiry known, the
/// first of their survival watches and the first of their open exposures. One lookup per event finds
/// all three, where two dictionaries took several, each through `Hasher`; and a slot is 56 bytes, where
/// the two dictionaries spent 44 and 56 on one customer each.
///
/// Linear probing, at most three quarters full; a removal shifts the entries after it back, so no
/// tombstones build up. An index is valid until the next insertion or removal.
struct CustomerTable {
    /// One customer's entry; the key is stored flat so that the slot has no padding to speak of.
    struct Entry {
        fileprivate var a: UInt64 = 0
        fileprivate var b: UInt64 = 0
        fileprivate var c: UInt64 = 0
        fileprivate var d: UInt64 = 0
        /// The latest expiry known (`Event.absent` while none is).
        var expiry = Event.absent
        fileprivate var keyId: Int32 = 0
        /// The first of the customer's survival watches, or -1.
        var watch: Int32 = -1
        /// The first of the customer's open exposures, or -1.
        var head: Int32 = -1
        fileprivate var used = false

        var customer: CustomerKey { CustomerKey(a: a, b: b, c: c, d: d, keyId: keyId) }

        /// Nothing left to follow: the entry can go.
        var isEmpty: Bool { expiry == Event.absent && watch < 0 && head < 0 }

        fileprivate func holds(_ key: CustomerKey) -> Bool {
            used && a == key.a && b == key.b && c == key.c && d == key.d && keyId == key.keyId
        }
    }

    private var slots: [Entry]
    private(set) var count = 0

    init(capacity: Int = 1024) {
        var size = 16
        while size * 3 < capacity * 4 { size *= 2 }
        slots = Array(repeating: Entry(), count: size)
    }

    /// The pseudonym's words are an HMAC's output, but a test's or an import's may not be: every word
    /// is mixed, so that customers differing in any of them spread over the table.
    static func hash(_ key: CustomerKey) -> Int {
        let words = key.a ^ (key.b << 21 | key.b >> 43) ^ (key.c << 42 | key.c >> 22) ^ key.d ^ UInt64(UInt32(bitPattern: key.keyId)) << 7
        return Int(truncatingIfNeeded: HashMix.mix(words))
    }

    /// Where the customer's entry is, if they have one.
    func index(of key: CustomerKey) -> Int? {
        let mask = slots.count - 1
        var index = Self.hash(key) & mask
        while slots[index].used {
            if slots[index].holds(key) { return index }
            index = (index + 1) & mask
        }
        return nil
    }

    /// Where the entry is of the customer whose hash is `hash` and for whom `isTheOne` holds — found
    /// without their key: among the entries a search for the hash passes, those with the same hash.
    func index(hash: Int, where isTheOne: (Entry) -> Bool) -> Int? {
        let mask = slots.count - 1
        var index = hash & mask
        while slots[index].used {
            if Self.hash(slots[index].customer) == hash, isTheOne(slots[index]) { return index }
            index = (index + 1) & mask
        }
        return nil
    }

    /// Where the customer's entry is, made empty when they had none.
    mutating func insert(_ key: CustomerKey) -> Int {
        if (count + 1) * 4 > slots.count * 3 { grow() }
        let mask = slots.count - 1
        var index = Self.hash(key) & mask
        while slots[index].used {
            if slots[index].holds(key) { return index }
            index = (index + 1) & mask
        }
        slots[index] = Entry(a: key.a, b: key.b, c: key.c, d: key.d, keyId: key.keyId, used: true)
        count += 1
        return index
    }

    subscript(index: Int) -> Entry {
        get { slots[index] }
        _modify { yield &slots[index] }
    }

    /// Removes the entry at `index` when nothing is left in it.
    mutating func removeIfEmpty(at index: Int) {
        guard slots[index].isEmpty else { return }
        let mask = slots.count - 1
        var hole = index
        var next = (index + 1) & mask
        // Backward-shift deletion: every entry after the hole whose home lies at or before the hole
        // (cyclically) moves into it, so that no search stops early at the new gap.
        while slots[next].used {
            let home = Self.hash(slots[next].customer) & mask
            if (next - home) & mask >= (next - hole) & mask {
                slots[hole] = slots[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        slots[hole] = Entry()
        count -= 1
    }

    /// The customers whose entry satisfies `condition`, in slot order (what the join counts from them
    /// does not depend on the order).
    func customers(where condition: (Entry) -> Bool) -> [CustomerKey] {
        slots.compactMap { $0.used && condition($0) ? $0.customer : nil }
    }

    private mutating func grow() {
        let old = slots
        slots = Array(repeating: Entry(), count: old.count * 2)
        let mask = slots.count - 1
        for entry in old where entry.used {
            var index = Self.hash(entry.customer) & mask
            while slots[index].used { index = (index + 1) & mask }
            slots[index] = entry
        }
    }
}
