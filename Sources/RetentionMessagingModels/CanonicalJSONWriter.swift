/// Writes JSON byte for byte as `CanonicalJSON.encode` does, for the few values encoded on every
/// realtime request; the caller writes members in sorted key order.
public struct CanonicalJSONWriter {
    /// What is written so far; a caller may append JSON it spelt out itself (constant keys, say).
    public var bytes: [UInt8] = []
    private var needsComma = false

    public init(capacity: Int = 128) {
        bytes.reserveCapacity(capacity)
    }

    public mutating func object(_ members: (inout CanonicalJSONWriter) -> Void) {
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
        members(&self)
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    /// A member whose value `value` writes.
    public mutating func member(_ key: String, _ value: (inout CanonicalJSONWriter) -> Void) {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        string(key)
        bytes.append(UInt8(ascii: ":"))
        value(&self)
        needsComma = true
    }

    public mutating func member(_ key: String, string value: String) {
        member(key) { $0.string(value) }
    }

    public mutating func member(_ key: String, integer value: Int64) {
        member(key) { $0.integer(value) }
    }

    /// An integer's decimal digits, written without making a `String` of them.
    public mutating func integer(_ value: Int64) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        // The magnitude as unsigned, so Int64.min has one too.
        var rest = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[23 - count] = UInt8(truncatingIfNeeded: 0x30 + rest % 10)
                rest /= 10
                count += 1
            } while rest > 0
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[(24 - count)...]))
        }
        needsComma = true
    }

    /// A member whose value the caller has already spelt as JSON (a number, say), written as it is.
    public mutating func member(_ key: String, literal value: String) {
        member(key) { $0.bytes.append(contentsOf: value.utf8) }
    }

    /// A string with JSONEncoder's escaping: `"` and `\`, the short forms `\b \t \n \f \r`, other
    /// control characters as `\u00xx` in lowercase hex, everything else (slashes too) as it is.
    /// Runs of bytes that need no escaping (all of an identifier, a digest, a pseudonym) are copied
    /// at once.
    public mutating func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            var start = 0
            for index in utf8.indices {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                if start < index { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index])) }
                escape(byte)
                start = index + 1
            }
            if start < utf8.count { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...])) }
        }
        bytes.append(UInt8(ascii: "\""))
        needsComma = true
    }

    private mutating func escape(_ byte: UInt8) {
        bytes.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
        case 0x08: bytes.append(UInt8(ascii: "b"))
        case 0x09: bytes.append(UInt8(ascii: "t"))
        case 0x0A: bytes.append(UInt8(ascii: "n"))
        case 0x0C: bytes.append(UInt8(ascii: "f"))
        case 0x0D: bytes.append(UInt8(ascii: "r"))
        default:
            let hex = Array("0123456789abcdef".utf8)
            bytes += [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
        }
    }
}
