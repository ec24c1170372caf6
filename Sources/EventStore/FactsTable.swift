public import Foundation
import Crypto
public import StateStore
public import RetentionMessagingModels

/// The customer facts of one App and environment, as the reconcile job publishes them for every
/// `serve` replica: one fixed-size record per customer, sorted by the customer's pseudonym, so a
/// replica loads the file as it is and finds a customer with an index of the key's leading bits
/// (about eight records a slot) and a short search among neighbours — 64 bytes per customer, nothing
/// copied.
///
/// Layout (all integers little-endian):
/// - `RSFACTS1`, then the header's length (UInt32) and the header (canonical JSON: `FactsTable.Header`,
///   which lists the auto-renew products), padded with spaces to a multiple of 64 bytes;
/// - `count` records of 64 bytes: the pseudonym's first 10 bytes (80 bits: two of ten million customers
///   share them with a chance of about 4 in 10^11, and `encode` refuses the table if they do); the
///   auto-renew product (UInt16: 0 unknown, else its place in the header's list, from 1); the transaction's and the renewal
///   info's signed dates, the first purchase and the grace period's end (UInt32 seconds, 0 unknown);
///   the last redemption of each offer type 1–5 (UInt32 seconds, 0 none); the price (Int64 milliunits,
///   Int64.min unknown); the storefront and currency (3 ASCII bytes each, zeros unknown); ownership
///   (0 unknown, 1 purchased, 2 family shared); and one byte of flags (bit 0 billing retry known,
///   bit 1 in billing retry, bits 2–3 price increase: 0 unknown, 1 none, 2 pending, 3 agreed).
///
/// The file is immutable and named by its digest; a small pointer (`FactsPointer`) names the current one.
public struct FactsTable: Sendable {
    public static let magic = Array("RSFACTS1".utf8)
    public static let recordSize = 64
    public static let keySize = 10
    public static let formatVersion = 2

    public struct Header: Codable, Sendable, Hashable {
        public var formatVersion: Int
        public var bundleId: String
        public var environment: String
        /// The pseudonym key the customers are keyed with (`PseudonymKey.keyId`).
        public var keyId: String
        public var count: Int
        /// The newest signed date in the table (UNIX ms). The header holds nothing but what the events
        /// say, so the same events always make the same bytes (and the same digest).
        public var newestFact: Int64
        /// Every `autoRenewProductId` the records name, sorted; a record holds its place in this list.
        public var autoRenewProducts: [String]?

        public init(bundleId: String, environment: String, keyId: String, count: Int, newestFact: Int64, autoRenewProducts: [String] = []) {
            formatVersion = FactsTable.formatVersion
            self.bundleId = bundleId
            self.environment = environment
            self.keyId = keyId
            self.count = count
            self.newestFact = newestFact
            self.autoRenewProducts = autoRenewProducts
        }
    }

    public struct Refusal: Error, Sendable, CustomStringConvertible {
        public var description: String
        public init(_ description: String) { self.description = description }
    }

    public let header: Header
    private let bytes: Data
    private let recordsStart: Int
    /// How many leading bits of the key the index covers: about eight records a slot, so a lookup
    /// reads a few neighbouring records instead of walking a binary search across the whole table.
    private let indexBits: Int
    /// For each value of the key's first `indexBits` bits, the first record at or above it (one more
    /// entry than values, holding `count`).
    private let index: [UInt32]

    public var count: Int { header.count }

    // MARK: Writing

    /// The table's bytes for `facts` (pseudonym → facts); pseudonyms are 64 hex digits. The header's
    /// product list is made here from the facts.
    public static func encode(_ facts: [String: CustomerFacts], header: Header) throws(Refusal) -> [UInt8] {
        var keyed: [(key: [UInt8], facts: CustomerFacts)] = []
        keyed.reserveCapacity(facts.count)
        for (pseudonym, customer) in facts {
            guard let key = key(pseudonym) else { throw Refusal("'\(pseudonym.prefix(16))…' is not a pseudonym (64 hex digits)") }
            keyed.append((key, customer))
        }
        keyed.sort { $0.key.lexicographicallyPrecedes($1.key) }
        var header = header
        header.count = keyed.count
        header.autoRenewProducts = Set(keyed.compactMap(\.facts.autoRenewProductId)).sorted()
        var builder = try Builder(header: header)
        for item in keyed { try builder.append(key: item.key, item.facts) }
        return builder.bytes
    }

    /// Writes a table record by record, in ascending key order (what `encode` does after sorting;
    /// the benchmark writes millions this way without holding them twice).
    public struct Builder {
        public private(set) var bytes: [UInt8]
        private var last: [UInt8]?
        private let expected: Int
        private var written = 0
        /// Each auto-renew product's number in the records (its place in the header's list, from 1).
        private let products: [String: UInt16]

        /// `header.count` is the number of records that will be appended.
        public init(header: Header) throws(Refusal) {
            let listed = header.autoRenewProducts ?? []
            guard listed.count < Int(UInt16.max), Set(listed).count == listed.count else {
                throw Refusal("the header's auto-renew products must be distinct and fewer than \(UInt16.max)")
            }
            products = Dictionary(uniqueKeysWithValues: listed.enumerated().map { ($0.element, UInt16($0.offset + 1)) })
            let json: [UInt8]
            do { json = Array(try CanonicalJSON.encode(header)) } catch { throw Refusal("cannot encode the header: \(error)") }
            var out = FactsTable.magic
            FactsTable.appendInteger(UInt32(json.count), to: &out)
            out += json
            while out.count % FactsTable.recordSize != 0 { out.append(0x20) }
            out.reserveCapacity(out.count + header.count * FactsTable.recordSize)
            bytes = out
            expected = header.count
        }

        /// Appends one customer; keys are 10 bytes and must ascend; the auto-renew product must be in the header's list.
        public mutating func append(key: [UInt8], _ facts: CustomerFacts) throws(Refusal) {
            guard key.count == FactsTable.keySize else { throw Refusal("a key is \(FactsTable.keySize) bytes") }
            if let last {
                guard last.lexicographicallyPrecedes(key) else {
                    throw Refusal(last == key ? "two customers share the first \(FactsTable.keySize) bytes of their pseudonyms; the table cannot tell them apart"
                                  : "keys must be appended in ascending order")
                }
            }
            guard written < expected else { throw Refusal("more records than the header's count") }
            var product: UInt16 = 0
            if let id = facts.autoRenewProductId {
                guard let number = products[id] else { throw Refusal("the auto-renew product '\(id)' is not in the header's list") }
                product = number
            }
            bytes += FactsTable.record(key: key, product: product, facts)
            last = key
            written += 1
        }
    }

    /// The first 10 bytes of a pseudonym (64 hex digits); nil for anything else.
    public static func key(_ pseudonym: String) -> [UInt8]? {
        Key(pseudonym: pseudonym)?.bytes
    }

    fileprivate static func nibble(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        default: nil
        }
    }

    static func record(key: [UInt8], product: UInt16, _ facts: CustomerFacts) -> [UInt8] {
        var out = key
        appendInteger(product, to: &out)
        func seconds(_ milliseconds: Int64?) -> UInt32 {
            guard let milliseconds, milliseconds > 0 else { return 0 }
            return UInt32(clamping: milliseconds / 1000)
        }
        appendInteger(seconds(facts.transactionAsOf > .min ? facts.transactionAsOf : nil), to: &out)
        appendInteger(seconds(facts.renewalAsOf > .min ? facts.renewalAsOf : nil), to: &out)
        appendInteger(seconds(facts.firstPurchase), to: &out)
        appendInteger(seconds(facts.gracePeriodExpires), to: &out)
        for kind in OfferKind.allCases { appendInteger(seconds(facts.offersRedeemed[kind]), to: &out) }
        appendInteger(UInt64(bitPattern: facts.price ?? .min), to: &out)
        out += code(facts.storefront)
        out += code(facts.currency)
        out.append(facts.ownership == .purchased ? 1 : facts.ownership == .familyShared ? 2 : 0)
        var flags: UInt8 = 0
        if let retry = facts.inBillingRetry { flags |= 1 | (retry ? 2 : 0) }
        switch facts.priceIncrease {
        case nil: break
        case PriceIncreaseState.none?: flags |= 1 << 2
        case .pending?: flags |= 2 << 2
        case .agreed?: flags |= 3 << 2
        }
        out.append(flags)
        return out
    }

    private static func code(_ text: String?) -> [UInt8] {
        let bytes = Array((text ?? "").utf8)
        return bytes.count == 3 ? bytes : [0, 0, 0]
    }

    fileprivate static func appendInteger<T: FixedWidthInteger>(_ value: T, to out: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { out.append(contentsOf: $0) }
    }

    // MARK: Reading

    /// Reads a table, refusing one that is not this format, is cut short, is out of order, or is for
    /// another App, environment or pseudonym key than `expected` says.
    public init(_ data: Data, expecting expected: (bundleId: String?, environment: String, keyId: String)) throws(Refusal) {
        let bytes = data
        guard bytes.count >= 12, Array(bytes.prefix(8)) == Self.magic else {
            throw Refusal("not a facts table (it does not start with RSFACTS1)")
        }
        let length = Int(Self.readUInt32(bytes, at: 8))
        guard length > 0, 12 + length <= bytes.count else { throw Refusal("the table's header is cut short") }
        let header: Header
        do {
            header = try JSONDecoder().decode(Header.self, from: bytes.subdata(in: bytes.startIndex + 12..<bytes.startIndex + 12 + length))
        } catch {
            throw Refusal("the table's header does not parse: \(error)")
        }
        guard header.formatVersion == Self.formatVersion else {
            throw Refusal("the table is format \(header.formatVersion); this serve reads format \(Self.formatVersion)")
        }
        guard header.environment == expected.environment else {
            throw Refusal("the table is for environment \(header.environment), not \(expected.environment)")
        }
        if let bundleId = expected.bundleId, header.bundleId != bundleId {
            throw Refusal("the table is for App \(header.bundleId), not \(bundleId)")
        }
        guard header.keyId == expected.keyId else {
            throw Refusal("the table's customers are keyed with pseudonym key \(header.keyId), not this server's \(expected.keyId)")
        }
        let start = (12 + length + Self.recordSize - 1) / Self.recordSize * Self.recordSize
        guard header.count >= 0, bytes.count == start + header.count * Self.recordSize else {
            throw Refusal("the table holds \(max(0, bytes.count - start) / Self.recordSize) records' bytes, but its header says \(header.count)")
        }
        // One pass: every key above the one before it, and the index of first records by key prefix.
        let bits = Self.indexBits(count: header.count)
        var index = [UInt32](repeating: UInt32(header.count), count: (1 << bits) + 1)
        let ordered: Bool = bytes.withUnsafeBytes { raw in
            guard header.count > 0, let base = raw.baseAddress?.advanced(by: start) else { return true }
            var previous: Key?
            var nextSlot = 0
            let products = header.autoRenewProducts?.count ?? 0
            for position in 0..<header.count {
                let record = base.advanced(by: position * Self.recordSize)
                let key = Key(record: record)
                if let previous, !(previous < key) { return false }
                if Int(UInt16(littleEndian: record.loadUnaligned(fromByteOffset: 10, as: UInt16.self))) > products { return false }
                previous = key
                let slot = Int(key.high >> UInt64(64 - bits))
                while nextSlot <= slot { index[nextSlot] = UInt32(position); nextSlot += 1 }
            }
            return true
        }
        guard ordered else {
            throw Refusal("the table's records are not in order, or name a product its header does not list; it was not written by retention-sync facts publish")
        }
        self.header = header
        self.bytes = bytes
        recordsStart = start
        indexBits = bits
        self.index = index
    }

    /// About eight records an index slot, between 2^8 and 2^24 slots.
    static func indexBits(count: Int) -> Int {
        var bits = 8
        while bits < 24 && (count >> bits) > 8 { bits += 1 }
        return bits
    }

    /// A record's key: the pseudonym's first 10 bytes, as two big-endian integers, so that comparing
    /// keys is comparing integers.
    struct Key: Comparable {
        var high: UInt64
        var low: UInt16

        init(high: UInt64, low: UInt16) {
            self.high = high
            self.low = low
        }

        init(record: UnsafeRawPointer) {
            high = UInt64(bigEndian: record.loadUnaligned(as: UInt64.self))
            low = UInt16(bigEndian: record.loadUnaligned(fromByteOffset: 8, as: UInt16.self))
        }

        /// The key of a pseudonym's 64 hex digits, read in place; nil for anything else.
        init?(pseudonym: String) {
            var text = pseudonym
            guard let key = text.withUTF8({ Key(hex: $0) }) else { return nil }
            self = key
        }

        private init?(hex: UnsafeBufferPointer<UInt8>) {
            guard hex.count == 64 else { return nil }
            var high: UInt64 = 0, low: UInt16 = 0
            for position in 0..<64 {
                guard let value = FactsTable.nibble(hex[position]) else { return nil }
                if position < 16 { high = high << 4 | UInt64(value) } else if position < 20 { low = low << 4 | UInt16(value) }
            }
            self.init(high: high, low: low)
        }

        /// The 10 bytes a record starts with.
        var bytes: [UInt8] {
            (0..<8).map { UInt8(truncatingIfNeeded: high >> (56 - 8 * $0)) } + (0..<2).map { UInt8(truncatingIfNeeded: low >> (8 - 8 * $0)) }
        }

        static func < (lhs: Key, rhs: Key) -> Bool { (lhs.high, lhs.low) < (rhs.high, rhs.low) }
    }

    private static func readUInt32(_ data: Data, at offset: Int) -> UInt32 {
        data.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: UInt32.self) }.littleEndian
    }

    /// The facts of the customer with this pseudonym (64 hex digits); nil when the table has none.
    public func facts(for pseudonym: String) -> CustomerFacts? {
        guard let key = Key(pseudonym: pseudonym) else { return nil }
        return facts(for: key)
    }

    private func facts(for key: Key) -> CustomerFacts? {
        guard header.count > 0 else { return nil }
        let slot = Int(key.high >> UInt64(64 - indexBits))
        var low = Int(index[slot]), high = Int(index[slot + 1])
        return bytes.withUnsafeBytes { raw -> CustomerFacts? in
            let base = raw.baseAddress!.advanced(by: recordsStart)
            while low < high {
                let middle = (low + high) / 2
                let record = base.advanced(by: middle * Self.recordSize)
                let found = Key(record: record)
                if found == key { return decode(record) }
                if found < key { low = middle + 1 } else { high = middle }
            }
            return nil
        }
    }

    /// Every customer's key (hex of the pseudonym's first 10 bytes) and facts, in key order.
    public func all() -> [(key: String, facts: CustomerFacts)] {
        bytes.withUnsafeBytes { raw in
            (0..<header.count).map { index in
                let record = raw.baseAddress!.advanced(by: recordsStart + index * Self.recordSize)
                let key = UnsafeRawBufferPointer(start: record, count: Self.keySize).map { String(format: "%02x", $0) }.joined()
                return (key, decode(record))
            }
        }
    }

    private func decode(_ record: UnsafeRawPointer) -> CustomerFacts {
        func seconds(_ offset: Int) -> Int64? {
            let value = record.loadUnaligned(fromByteOffset: offset, as: UInt32.self).littleEndian
            return value == 0 ? nil : Int64(value) * 1000
        }
        func text(_ offset: Int) -> String? {
            let bytes = UnsafeRawBufferPointer(start: record + offset, count: 3)
            return bytes.allSatisfy({ $0 != 0 }) ? String(decoding: bytes, as: UTF8.self) : nil
        }
        var facts = CustomerFacts()
        let product = Int(UInt16(littleEndian: record.loadUnaligned(fromByteOffset: 10, as: UInt16.self)))
        if product > 0, let products = header.autoRenewProducts, product <= products.count { facts.autoRenewProductId = products[product - 1] }
        facts.transactionAsOf = seconds(12) ?? .min
        facts.renewalAsOf = seconds(16) ?? .min
        facts.firstPurchase = seconds(20)
        facts.gracePeriodExpires = seconds(24)
        for (index, kind) in OfferKind.allCases.enumerated() {
            if let date = seconds(28 + 4 * index) { facts.offersRedeemed[kind] = date }
        }
        let price = Int64(littleEndian: record.loadUnaligned(fromByteOffset: 48, as: Int64.self))
        facts.price = price == .min ? nil : price
        facts.storefront = text(56)
        facts.currency = text(59)
        let ownership = record.load(fromByteOffset: 62, as: UInt8.self)
        facts.ownership = ownership == 1 ? .purchased : ownership == 2 ? .familyShared : nil
        let flags = record.load(fromByteOffset: 63, as: UInt8.self)
        facts.inBillingRetry = flags & 1 == 0 ? nil : flags & 2 != 0
        switch (flags >> 2) & 3 {
        case 1: facts.priceIncrease = PriceIncreaseState.none
        case 2: facts.priceIncrease = .pending
        case 3: facts.priceIncrease = .agreed
        default: facts.priceIncrease = nil
        }
        return facts
    }
}

/// The small object that names the current facts table of an environment: serve polls it, and loads
/// the table it names only when it changes. Written after the table, so it never names a table that
/// is not whole.
public struct FactsPointer: Codable, Sendable, Hashable {
    /// The table's key in the store, `facts/v1/environment=<E>/table-<digest>.rsfacts`.
    public var table: String
    /// `sha256:<hex>` of the table's bytes.
    public var digest: String
    public var count: Int
    /// When `facts publish` wrote it (UNIX ms).
    public var builtAt: Int64
    public var keyId: String

    public init(table: String, digest: String, count: Int, builtAt: Int64, keyId: String) {
        self.table = table
        self.digest = digest
        self.count = count
        self.builtAt = builtAt
        self.keyId = keyId
    }

    /// The current table of `environment` in `store`, checked against its pointer's digest and against
    /// `expected`; nil when no table is published, or when the pointer still names `unlessDigest`.
    public static func current(in store: any ObjectStore, environment: String,
                               expecting expected: (bundleId: String?, environment: String, keyId: String),
                               unlessDigest known: String? = nil) async throws -> (pointer: FactsPointer, table: FactsTable)? {
        guard let pointerBytes = try await store.get(key(environment: environment)) else { return nil }
        let pointer = try JSONDecoder().decode(FactsPointer.self, from: pointerBytes)
        if pointer.digest == known { return nil }
        guard let bytes = try await store.get(pointer.table) else {
            throw FactsTable.Refusal("\(store.location)/\(pointer.table), which the pointer names, is missing")
        }
        guard digest(bytes) == pointer.digest else {
            throw FactsTable.Refusal("\(store.location)/\(pointer.table) does not match the digest its pointer gives; it was damaged or replaced")
        }
        return (pointer, try FactsTable(bytes, expecting: expected))
    }

    /// Where an environment's facts live under the events' root.
    public static func folder(environment: String) -> String { "facts/v1/environment=\(environment)" }
    public static func key(environment: String) -> String { folder(environment: environment) + "/current.json" }

    /// Hashed in place: a table of millions of customers is not copied to be checked.
    public static func digest(_ bytes: some ContiguousBytes) -> String {
        var state = SHA256State()
        bytes.withUnsafeBytes { state.update($0) }
        return "sha256:" + state.digest().hexString
    }
}
