import EventContract
import Foundation

/// Reads one NDJSON line of either stream into an `Event`. A flat, allocation-free scanner rather than
/// `JSONDecoder`, because the benchmark's thirteen million lines must parse in seconds; it accepts any
/// JSON object (nested values of unknown keys are skipped: the contract is forward compatible) and
/// refuses, with a reason, anything that is not JSON.
struct EventLineParser {
    var interner = Interner()
    private var scratch: [UInt8] = []
    private let keys = FieldTable()

    struct Refusal: Error {
        var reason: String
    }

    /// The members the join reads; every other member of a line is skipped.
    static let read: [EventField] = [
        .answer, .arm, .customer, .eventId, .flow, .keyId, .localeRequested, .messageIdentifier, .offerIdentifier,
        .alternateProductId, .productId, .rule, .splitControl, .splitGroup, .splitLayout, .time,
        .autoRenewProductId, .currency, .effectiveDate, .expiresDate, .notificationType, .offerType, .price, .purchaseDate, .subtype,
        .storefront, .tenureBand, .billing, .offerWithin90Days, .latencyMicros,
    ]

    /// How `results --by offers` names a decision's `offerWithin90Days`.
    static let offerRecentNames = (yes: "offer within 90 days", no: "no offer within 90 days")
    private var offerRecentIds: (yes: Int32, no: Int32)?

    private enum Value {
        case string(Range<Int>, escaped: Bool)
        case integer(Int64)
        case otherNumber
        case bool(Bool)
        case null
        case nested
    }

    /// The event on `line`, or nil for a blank line.
    mutating func parse(_ line: UnsafeBufferPointer<UInt8>, isOutcome: Bool) throws(Refusal) -> Event? {
        var index = 0
        let end = line.count
        func skipSpace() {
            while index < end, line[index] == 0x20 || line[index] == 0x09 || line[index] == 0x0D { index += 1 }
        }
        skipSpace()
        if index == end { return nil }
        var event = Event()
        event.isOutcome = isOutcome
        guard line[index] == UInt8(ascii: "{") else { throw Refusal(reason: "not a JSON object") }
        index += 1
        skipSpace()
        if index < end, line[index] == UInt8(ascii: "}") {
            index += 1
        } else {
            while true {
                skipSpace()
                guard index < end, line[index] == UInt8(ascii: "\"") else { throw Refusal(reason: "expected a key at byte \(index + 1)") }
                let keyRange = try scanString(line, &index)
                skipSpace()
                guard index < end, line[index] == UInt8(ascii: ":") else { throw Refusal(reason: "expected ':' at byte \(index + 1)") }
                index += 1
                skipSpace()
                let value = try scanValue(line, &index)
                if let field = keys.field(line, keyRange.range) {
                    try assign(field, value, line, &event)
                }
                skipSpace()
                guard index < end else { throw Refusal(reason: "the object is not closed") }
                if line[index] == UInt8(ascii: ",") { index += 1; continue }
                guard line[index] == UInt8(ascii: "}") else { throw Refusal(reason: "expected ',' or '}' at byte \(index + 1)") }
                index += 1
                break
            }
        }
        skipSpace()
        guard index == end else { throw Refusal(reason: "bytes after the object at byte \(index + 1)") }
        return event
    }

    private func scanString(_ line: UnsafeBufferPointer<UInt8>, _ index: inout Int) throws(Refusal) -> (range: Range<Int>, escaped: Bool) {
        index += 1
        let start = index
        var escaped = false
        // A string's opening quote was read, so the line is not empty and has a base address.
        guard let base = line.baseAddress else { throw Refusal(reason: "a string is not closed") }
        while index < line.count {
            // Eight bytes at a time up to the first quote, backslash or control character among them.
            while index + 8 <= line.count {
                let special = Self.specialBytes(UInt64(littleEndian: UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)))
                if special == 0 {
                    index += 8
                    continue
                }
                index += special.trailingZeroBitCount >> 3
                break
            }
            guard index < line.count else { break }
            let byte = line[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return (start ..< index - 1, escaped)
            }
            if byte == UInt8(ascii: "\\") {
                escaped = true
                index += 2
                continue
            }
            guard byte >= 0x20 else { throw Refusal(reason: "a control character inside a string at byte \(index + 1)") }
            index += 1
        }
        throw Refusal(reason: "a string is not closed")
    }

    /// The high bit of each byte of `word` that is a quote, a backslash or a control character (below
    /// 0x20); the lowest one marked is exact, higher ones may be false (a borrow), so only it is used.
    static func specialBytes(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let quote = word ^ (0x22 &* ones)
        let backslash = word ^ (0x5C &* ones)
        let quotes = (quote &- ones) & ~quote
        let backslashes = (backslash &- ones) & ~backslash
        let controls = (word &- 0x20 &* ones) & ~word
        return (quotes | backslashes | controls) & 0x8080_8080_8080_8080
    }

    private func scanValue(_ line: UnsafeBufferPointer<UInt8>, _ index: inout Int) throws(Refusal) -> Value {
        guard index < line.count else { throw Refusal(reason: "a value is missing") }
        func literal(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard index + count <= line.count else { return false }
            for offset in 0 ..< count where line[index + offset] != word.utf8Start[offset] { return false }
            index += count
            return true
        }
        switch line[index] {
        case UInt8(ascii: "\""):
            let scanned = try scanString(line, &index)
            return .string(scanned.range, escaped: scanned.escaped)
        case UInt8(ascii: "n"):
            if literal("null") { return .null }
        case UInt8(ascii: "t"):
            if literal("true") { return .bool(true) }
        case UInt8(ascii: "f"):
            if literal("false") { return .bool(false) }
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            while index < line.count {
                switch line[index] {
                case UInt8(ascii: "\""):
                    _ = try scanString(line, &index)
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 {
                        index += 1
                        return .nested
                    }
                default: break
                }
                index += 1
            }
            throw Refusal(reason: "a nested value is not closed")
        case UInt8(ascii: "-"), UInt8(ascii: "0") ... UInt8(ascii: "9"):
            let negative = line[index] == UInt8(ascii: "-")
            if negative { index += 1 }
            var magnitude: Int64 = 0
            var digits = 0
            var overflow = false
            while index < line.count, line[index] >= 0x30, line[index] <= 0x39 {
                let (times, o1) = magnitude.multipliedReportingOverflow(by: 10)
                let (sum, o2) = times.addingReportingOverflow(Int64(line[index] - 0x30))
                overflow = overflow || o1 || o2
                magnitude = sum
                digits += 1
                index += 1
            }
            guard digits > 0 else { throw Refusal(reason: "a number without digits at byte \(index + 1)") }
            var fractional = false
            while index < line.count, line[index] == UInt8(ascii: ".") || line[index] == UInt8(ascii: "e") || line[index] == UInt8(ascii: "E")
                    || line[index] == UInt8(ascii: "+") || line[index] == UInt8(ascii: "-")
                    || (fractional && line[index] >= 0x30 && line[index] <= 0x39) {
                fractional = true
                index += 1
            }
            return fractional || overflow ? .otherNumber : .integer(negative ? -magnitude : magnitude)
        default:
            break
        }
        throw Refusal(reason: "not a JSON value at byte \(index + 1)")
    }

    /// The bytes of a string value, with escapes decoded when there are any.
    private static func withBytes<R>(_ line: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, escaped: Bool, scratch: inout [UInt8],
                                     _ body: (UnsafeBufferPointer<UInt8>) throws(Refusal) -> R) throws(Refusal) -> R {
        if !escaped { return try body(UnsafeBufferPointer(rebasing: line[range])) }
        scratch.removeAll(keepingCapacity: true)
        var index = range.lowerBound
        func hex4(_ at: Int) throws(Refusal) -> UInt32 {
            guard at + 4 <= range.upperBound else { throw Refusal(reason: "a \\u escape is cut short") }
            var value: UInt32 = 0
            for byte in line[at ..< at + 4] {
                guard let digit = Self.hexValue(byte) else { throw Refusal(reason: "a \\u escape has a non-hex digit") }
                value = value << 4 | UInt32(digit)
            }
            return value
        }
        while index < range.upperBound {
            let byte = line[index]
            guard byte == UInt8(ascii: "\\") else {
                scratch.append(byte)
                index += 1
                continue
            }
            guard index + 1 < range.upperBound else { throw Refusal(reason: "a string ends in a backslash") }
            let code = line[index + 1]
            index += 2
            switch code {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scratch.append(code)
            case UInt8(ascii: "b"): scratch.append(0x08)
            case UInt8(ascii: "f"): scratch.append(0x0C)
            case UInt8(ascii: "n"): scratch.append(0x0A)
            case UInt8(ascii: "r"): scratch.append(0x0D)
            case UInt8(ascii: "t"): scratch.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4(index)
                index += 4
                if (0xD800 ..< 0xDC00).contains(scalar), index + 6 <= range.upperBound,
                   line[index] == UInt8(ascii: "\\"), line[index + 1] == UInt8(ascii: "u") {
                    let low = try hex4(index + 2)
                    if (0xDC00 ..< 0xE000).contains(low) {
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        index += 6
                    }
                }
                scratch.append(contentsOf: Array(String(Character(Unicode.Scalar(scalar) ?? "\u{FFFD}")).utf8))
            default: throw Refusal(reason: "an unknown escape \\\(Character(Unicode.Scalar(code)))")
            }
        }
        return try scratch.withUnsafeBufferPointer(body)
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30 ... 0x39: byte - 0x30
        case 0x61 ... 0x66: byte - 0x61 + 10
        case 0x41 ... 0x46: byte - 0x41 + 10
        default: nil
        }
    }

    private static func words(_ bytes: UnsafeBufferPointer<UInt8>, from: Int, count: Int) -> UInt64? {
        var value: UInt64 = 0
        var invalid: UInt8 = 0
        var index = from
        while index < from + count {
            // A branch-free digit: 0xFF marks a byte that is not hex, and one test at the end finds it.
            let digit = hexDigits[Int(bytes[index])]
            invalid |= digit
            value = value << 4 | UInt64(digit & 0x0F)
            index += 1
        }
        return invalid & 0xF0 == 0 ? value : nil
    }

    private static let hexDigits: [UInt8] = (0 ... 255).map { hexValue(UInt8($0)) ?? 0xFF }

    private mutating func assign(_ field: EventField, _ value: Value, _ line: UnsafeBufferPointer<UInt8>, _ event: inout Event) throws(Refusal) {
        func name(_ field: EventField) -> String { field.rawValue }
        switch value {
        case .null, .nested:
            return
        case .bool(let flag):
            if field == .splitControl { event.splitControl = flag }
            if field == .offerWithin90Days {
                // Interned once per parser: the two names, not a new string per line.
                if offerRecentIds == nil {
                    offerRecentIds = (interner.intern(Self.offerRecentNames.yes), interner.intern(Self.offerRecentNames.no))
                }
                event.offerRecent = flag ? offerRecentIds!.yes : offerRecentIds!.no
            }
            return
        case .integer(let number):
            switch field {
            case .price: event.price = number
            case .offerType: event.offerType = number
            case .latencyMicros: event.latencyMicros = number
            default: break
            }
            return
        case .otherNumber:
            if field == .price || field == .offerType { throw Refusal(reason: "\(name(field)) is not an integer") }
            return
        case .string(let range, let escaped):
            // The scratch buffer is moved out while the body interns into `self`.
            var buffer: [UInt8] = []
            swap(&buffer, &scratch)
            defer { swap(&buffer, &scratch) }
            try Self.withBytes(line, range, escaped: escaped, scratch: &buffer) { (bytes) throws(Refusal) in
                try assign(field, string: bytes, &event)
            }
        }
    }

    private mutating func assign(_ field: EventField, string bytes: UnsafeBufferPointer<UInt8>, _ event: inout Event) throws(Refusal) {
        switch field {
        case .time, .effectiveDate, .expiresDate, .purchaseDate:
            guard let millis = EventTime.parse(bytes) else {
                throw Refusal(reason: "\(field.rawValue) is not an ISO 8601 UTC time like 2026-11-24T13:05:01.123Z")
            }
            switch field {
            case .time: event.time = millis
            case .effectiveDate: event.effectiveDate = millis
            case .purchaseDate: event.purchaseDate = millis
            default: event.expiresDate = millis
            }
        case .customer:
            if bytes.count == 64, let a = Self.words(bytes, from: 0, count: 16), let b = Self.words(bytes, from: 16, count: 16),
               let c = Self.words(bytes, from: 32, count: 16), let d = Self.words(bytes, from: 48, count: 16) {
                event.customer.a = a
                event.customer.b = b
                event.customer.c = c
                event.customer.d = d
                event.hasCustomer = true
            }
        case .eventId:
            event.hasId = true
            event.id = Self.eventKey(bytes)
        case .answer:
            event.answer = Self.answer(bytes)
        case .keyId: event.customer.keyId = interner.intern(bytes)
        case .arm: event.arm = interner.intern(bytes)
        case .flow: event.flow = interner.intern(bytes)
        case .rule: event.rule = interner.intern(bytes)
        case .splitGroup: event.splitGroup = interner.intern(bytes)
        case .splitLayout: event.splitLayout = interner.intern(bytes)
        case .localeRequested: event.locale = interner.intern(bytes)
        case .messageIdentifier: event.message = interner.intern(bytes)
        case .offerIdentifier: event.offer = interner.intern(bytes)
        case .alternateProductId: event.alternateProduct = interner.intern(bytes)
        case .productId: event.product = interner.intern(bytes)
        case .autoRenewProductId: event.autoRenewProduct = interner.intern(bytes)
        case .currency: event.currency = interner.intern(bytes)
        case .notificationType: event.notificationType = interner.intern(bytes)
        case .subtype: event.subtype = interner.intern(bytes)
        case .storefront: event.storefront = interner.intern(bytes)
        case .tenureBand: event.tenureBand = interner.intern(bytes)
        case .billing: event.billing = interner.intern(bytes)
        case .splitControl, .price, .offerType, .offerWithin90Days:
            throw Refusal(reason: "\(field.rawValue) is a string; the contract has a \(field == .splitControl || field == .offerWithin90Days ? "boolean" : "integer")")
        default:
            break
        }
    }

    /// An event's identifier: a UUID's own bits, else a hash of whatever the writer put there.
    private static func eventKey(_ bytes: UnsafeBufferPointer<UInt8>) -> EventKey {
        if bytes.count == 36, bytes[8] == 0x2D, bytes[13] == 0x2D, bytes[18] == 0x2D, bytes[23] == 0x2D,
           let p1 = words(bytes, from: 0, count: 8), let p2 = words(bytes, from: 9, count: 4),
           let p3 = words(bytes, from: 14, count: 4), let p4 = words(bytes, from: 19, count: 4),
           let p5 = words(bytes, from: 24, count: 12) {
            return EventKey(high: p1 << 32 | p2 << 16 | p3, low: p4 << 48 | p5)
        }
        // Not a UUID: two independent 64-bit hashes stand in for its bits.
        var h1: UInt64 = 0xcbf2_9ce4_8422_2325
        var h2: UInt64 = 0x8422_2325_cbf2_9ce4
        for byte in bytes {
            h1 = (h1 ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
            h2 = (h2 &+ UInt64(byte)) &* 0x9E37_79B9_7F4A_7C15
            h2 ^= h2 >> 29
        }
        return EventKey(high: h1, low: h2 | 1 << 63)
    }

    private static func answer(_ bytes: UnsafeBufferPointer<UInt8>) -> Answer {
        for (name, answer) in Answer.names where name.count == bytes.count && name.elementsEqual(bytes) {
            return answer
        }
        return .other
    }
}

/// The members `EventLineParser` reads, in an open-addressing table by a hash of a name's length and
/// first and last eight bytes: a key is compared with one name (or two), whatever it is.
private struct FieldTable {
    private static let size = 128
    private var slots = Array(repeating: Int8(-1), count: size)
    private let fields = EventLineParser.read
    private let names = EventLineParser.read.map { Array($0.rawValue.utf8) }

    init() {
        for (number, name) in names.enumerated() {
            var slot = name.withUnsafeBufferPointer { Self.hash($0, 0 ..< $0.count) } & (Self.size - 1)
            while slots[slot] >= 0 { slot = (slot + 1) & (Self.size - 1) }
            slots[slot] = Int8(number)
        }
    }

    /// The first eight bytes of a key (all of it, when shorter), the last eight, and its length, mixed.
    private static func hash(_ line: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Int {
        var first: UInt64 = 0
        var last: UInt64 = 0
        if range.count >= 8, let base = line.baseAddress {
            first = UnsafeRawPointer(base + range.lowerBound).loadUnaligned(as: UInt64.self)
            last = UnsafeRawPointer(base + range.upperBound - 8).loadUnaligned(as: UInt64.self)
        } else {
            for index in range { first = first << 8 | UInt64(line[index]) }
        }
        return Int(truncatingIfNeeded: HashMix.mix(first ^ (last << 29 | last >> 35) ^ UInt64(range.count) << 56))
    }

    /// The member a key names, if the parser reads it.
    func field(_ line: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> EventField? {
        guard let base = line.baseAddress else { return nil }
        var slot = Self.hash(line, range) & (Self.size - 1)
        while slots[slot] >= 0 {
            let number = Int(slots[slot])
            let matches = names[number].withUnsafeBufferPointer { name in
                guard name.count == range.count, let start = name.baseAddress else { return false }
                return memcmp(start, base + range.lowerBound, name.count) == 0
            }
            if matches { return fields[number] }
            slot = (slot + 1) & (Self.size - 1)
        }
        return nil
    }
}
