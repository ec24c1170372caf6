import Testing
@testable import Experiments

/// The join's own tables behave as the standard library's would, through growth and removals.
@Suite struct JoinTablesTests {
    /// Customers whose words differ in one place only, as a test's hand-written pseudonyms do, and
    /// customers with the same words under another key.
    static func customer(_ n: UInt64) -> CustomerKey {
        switch n % 4 {
        case 0: CustomerKey(a: 0, b: 0, c: 0, d: n, keyId: 1)
        case 1: CustomerKey(a: n, b: n, c: n, d: n, keyId: 1)
        case 2: CustomerKey(a: 0, b: 0, c: 0, d: n - 2, keyId: 2)
        default: CustomerKey(a: n &* 0x9E37_79B9_7F4A_7C15, b: ~n, c: n << 32, d: 0, keyId: 1)
        }
    }

    @Test func theJoinFindsEveryCustomerItFollowsThroughGrowthAndRemovals() {
        var table = CustomerTable(capacity: 16)
        var model: [CustomerKey: (expiry: Int64, head: Int32)] = [:]
        var random: UInt64 = 0x5EED
        func next() -> UInt64 {
            random = random &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return random >> 33
        }
        for step in 0 ..< 60_000 {
            let key = Self.customer(next() % 3_000)
            switch next() % 3 {
            case 0:
                let slot = table.insert(key)
                table[slot].expiry = Int64(step)
                table[slot].head = Int32(step % 1000)
                model[key] = (Int64(step), Int32(step % 1000))
            case 1:
                if let slot = table.index(of: key) {
                    table[slot].expiry = Event.absent
                    table[slot].head = -1
                    table.removeIfEmpty(at: slot)
                }
                model[key] = nil
            default:
                // An entry that still holds something stays.
                if let slot = table.index(of: key) {
                    table[slot].expiry = Event.absent
                    table.removeIfEmpty(at: slot)
                    model[key]?.expiry = Event.absent
                }
            }
        }
        #expect(table.count == model.count)
        for n in 0 ..< 3_000 as Range<UInt64> {
            let key = Self.customer(n)
            let slot = table.index(of: key)
            #expect(slot.map { table[$0].expiry } == model[key]?.expiry, "customer \(n)")
            #expect(slot.map { table[$0].head } == model[key]?.head, "customer \(n)")
        }
        #expect(Set(table.customers { _ in true }) == Set(model.keys))
    }

    @Test func theJoinCountsEachCustomerOnceThroughTheFingerprintSetsGrowth() {
        var set = FingerprintSet(capacity: 16)
        var model = Set<UInt64>()
        var random: UInt64 = 0xFACE
        for step in 0 ..< 200_000 {
            random = random &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            // Repeats, zero, and fingerprints crowded into one part (the same top bits).
            let fingerprint = step % 7 == 0 ? random >> 50 : step % 11 == 0 ? 0 : step % 5 == 0 ? (random >> 44) | 0xFC00_0000_0000_0000 : random
            let inserted = set.insert(fingerprint)
            #expect(inserted == model.insert(fingerprint).inserted)
        }
        #expect(set.count == model.count)
        for fingerprint in model.prefix(1000) {
            let insertedAgain = set.insert(fingerprint)
            #expect(!insertedAgain)
        }
    }
}
