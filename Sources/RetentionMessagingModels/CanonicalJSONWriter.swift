/// Writes JSON byte for byte as `CanonicalJSON.encode` does, for the few values encoded on every
/// realtime request; the caller writes members in sorted key order.
public struct CanonicalJSONWriter {
    public private(set) var bytes: [UInt8] = []
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
        member(key, literal: String(value))
    }

    /// A string member whose bytes need no escaping (ASCII digits and punctuation, such as a
    /// timestamp), written between quotes as they are.
    public mutating func member(_ key: String, plainASCII value: [UInt8]) {
        member(key) { json in
            json.bytes.append(UInt8(ascii: "\""))
            json.bytes += value
            json.bytes.append(UInt8(ascii: "\""))
        }
    }

    /// A member whose value the caller has already spelt as JSON (a number, say), written as it is.
    public mutating func member(_ key: String, literal value: String) {
        member(key) { $0.bytes.append(contentsOf: value.utf8) }
    }

    /// A string with JSONEncoder's escaping: `"` and `\`, the short forms `\b \t \n \f \r`, other
    /// control characters as `\u00xx` in lowercase hex, everything else (slashes too) as it is.
    public mutating func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case 0x08: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "b")]
            case 0x09: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0x0A: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0C: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "f")]
            case 0x0D: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes += [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                          hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
        needsComma = true
    }
}
