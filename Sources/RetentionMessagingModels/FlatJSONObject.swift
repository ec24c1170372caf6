/// A strict reader for the one shape the realtime path reads on every request: a JSON object whose
/// values are plain ASCII strings (no escapes) or integers. Anything else (escapes, other bytes,
/// nesting, fractions, `null`, a repeated key, trailing bytes) gives nil, and the caller falls back to
/// `JSONDecoder`, so this only decides faster what `JSONDecoder` would decide, never differently.
public struct FlatJSONObject {
    public enum Value: Equatable {
        case string(String)
        case integer(Int64)
    }

    /// Keys and values in the order written.
    public private(set) var fields: [(key: String, value: Value)] = []

    public init?<Bytes: Collection>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        let parsed = bytes.withContiguousStorageIfAvailable { Self.parse($0) }
            ?? Array(bytes).withUnsafeBufferPointer { Self.parse($0) }
        guard let parsed else { return nil }
        fields = parsed
    }

    /// Where `key`'s string value lies in `bytes` (without its quotes), when `bytes` is an object
    /// this reader accepts and that value is a string: the bytes `string(key)` would make a String
    /// of, for a caller that reads them as they are.
    public static func stringRange(_ key: String, in bytes: [UInt8]) -> Range<Int>? {
        var found: Range<Int>?
        let accepted = bytes.withUnsafeBufferPointer { buffer in
            parse(buffer, materializing: { $0 != key }) { field, range in
                if field == key { found = range }
            } != nil
        }
        return accepted ? found : nil
    }

    public subscript(key: String) -> Value? {
        fields.first { $0.key == key }?.value
    }

    public func string(_ key: String) -> String? {
        if case .string(let text)? = self[key] { return text }
        return nil
    }

    public func integer(_ key: String) -> Int64? {
        if case .integer(let number)? = self[key] { return number }
        return nil
    }

    /// False only when all eight bytes are printable ASCII other than a quote and a backslash (the
    /// bit tricks of "Bit Twiddling Hacks": a byte below 0x20, above 0x7E, or equal to either).
    private static func mayEndOrRefuse(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        func hasZeroByte(_ value: UInt64) -> Bool { (value &- ones) & ~value & highs != 0 }
        let below = (word &- ones &* 0x20) & ~word & highs != 0
        let above = ((word &+ ones &* (0x7F - 0x7E)) | word) & highs != 0
        return below || above || hasZeroByte(word ^ (ones &* 0x22)) || hasZeroByte(word ^ (ones &* 0x5C))
    }

    /// The fields, or nil when `bytes` is not such an object. A string value whose key
    /// `materializing` refuses is not made a String: its range goes to `skipped` instead (and the
    /// field holds an empty string).
    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>, materializing: (String) -> Bool = { _ in true },
                              skipped: (String, Range<Int>) -> Void = { _, _ in }) -> [(key: String, value: Value)]? {
        var scanner = Scanner(bytes: bytes)
        guard scanner.take(UInt8(ascii: "{")) else { return nil }
        var fields: [(key: String, value: Value)] = []
        if !scanner.take(UInt8(ascii: "}")) {
            repeat {
                guard let key = scanner.string(), scanner.take(UInt8(ascii: ":")), !fields.contains(where: { $0.key == key }) else { return nil }
                scanner.skipSpace()
                guard scanner.index < bytes.count else { return nil }
                if bytes[scanner.index] == UInt8(ascii: "\"") {
                    guard let range = scanner.stringRange() else { return nil }
                    if materializing(key) {
                        fields.append((key, .string(String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self))))
                    } else {
                        skipped(key, range)
                        fields.append((key, .string("")))
                    }
                } else {
                    guard let number = scanner.integer() else { return nil }
                    fields.append((key, .integer(number)))
                }
            } while scanner.take(UInt8(ascii: ","))
            guard scanner.take(UInt8(ascii: "}")) else { return nil }
        }
        scanner.skipSpace()
        return scanner.index == bytes.count ? fields : nil
    }

    /// A cursor over the object's bytes that reads the few tokens a flat object has.
    private struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        mutating func skipSpace() {
            while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x09 || bytes[index] == 0x0A || bytes[index] == 0x0D {
                index += 1
            }
        }

        mutating func take(_ byte: UInt8) -> Bool {
            skipSpace()
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        mutating func stringRange() -> Range<Int>? {
            guard take(UInt8(ascii: "\"")) else { return nil }
            let start = index
            // Eight bytes at a time past those that need no look (a signedPayload is 5 KB of them);
            // the byte loop below decides at the first word that holds any other.
            if let base = bytes.baseAddress {
                var at = index
                while at + 8 <= bytes.count, !FlatJSONObject.mayEndOrRefuse(UnsafeRawPointer(base).loadUnaligned(fromByteOffset: at, as: UInt64.self)) {
                    at += 8
                }
                index = at
            }
            while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                // Printable ASCII but the backslash; escapes and other bytes are left to JSONDecoder.
                guard bytes[index] >= 0x20, bytes[index] < 0x7F, bytes[index] != UInt8(ascii: "\\") else { return nil }
                index += 1
            }
            guard index < bytes.count else { return nil }
            index += 1
            return start..<(index - 1)
        }

        mutating func string() -> String? {
            stringRange().map { String(decoding: UnsafeBufferPointer(rebasing: bytes[$0]), as: UTF8.self) }
        }

        mutating func integer() -> Int64? {
            let negative = index < bytes.count && bytes[index] == UInt8(ascii: "-")
            if negative { index += 1 }
            let start = index
            var magnitude: UInt64 = 0
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                let (times, overflow1) = magnitude.multipliedReportingOverflow(by: 10)
                let (sum, overflow2) = times.addingReportingOverflow(UInt64(bytes[index] - UInt8(ascii: "0")))
                guard !overflow1, !overflow2 else { return nil }
                magnitude = sum
                index += 1
            }
            let digits = index - start
            // JSON has no leading zeros; a fraction or exponent is not an integer here.
            guard digits > 0, digits == 1 || bytes[start] != UInt8(ascii: "0") else { return nil }
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") || bytes[index] == UInt8(ascii: "e")
                || bytes[index] == UInt8(ascii: "E") { return nil }
            if negative {
                guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
                return magnitude == UInt64(Int64.max) + 1 ? .min : -Int64(magnitude)
            }
            guard magnitude <= UInt64(Int64.max) else { return nil }
            return Int64(magnitude)
        }
    }
}
