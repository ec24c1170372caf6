/// Base64url without padding (RFC 4648 section 5), as JWS uses it.
public enum Base64URL {
    public static func encode(_ bytes: [UInt8]) -> String {
        Base64.encode(bytes, alphabet: Base64.urlAlphabet, pad: false)
    }

    /// Decodes unpadded (or padded) base64url; nil for any character outside the alphabet or an
    /// impossible length.
    public static func decode(_ text: String) -> [UInt8]? {
        Base64.decode(Array(text.utf8), table: Base64.urlTable)
    }

    /// The same, over the bytes of the text (a part of a compact JWS, without copying it to a String).
    public static func decode(_ bytes: ArraySlice<UInt8>) -> [UInt8]? {
        Base64.decode(bytes, table: Base64.urlTable)
    }
}

/// Standard base64 (RFC 4648 section 4), as the certificates in a JWS `x5c` header use it.
public enum Base64 {
    public static func encode(_ bytes: [UInt8]) -> String {
        encode(bytes, alphabet: standardAlphabet, pad: true)
    }

    /// Decodes padded or unpadded standard base64; nil for anything else.
    public static func decode(_ text: String) -> [UInt8]? {
        decode(Array(text.utf8), table: standardTable)
    }

    static let standardAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    static let urlAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    static let standardTable = table(standardAlphabet)
    static let urlTable = table(urlAlphabet)

    /// Byte → 6-bit value, 0xff for bytes outside the alphabet.
    private static func table(_ alphabet: [UInt8]) -> [UInt8] {
        var table = [UInt8](repeating: 0xff, count: 256)
        for (value, char) in alphabet.enumerated() { table[Int(char)] = UInt8(value) }
        return table
    }

    static func encode(_ bytes: [UInt8], alphabet: [UInt8], pad: Bool) -> String {
        var out = [UInt8]()
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index + 3 <= bytes.count {
            let n = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
            out.append(alphabet[Int(n >> 6 & 63)])
            out.append(alphabet[Int(n & 63)])
            index += 3
        }
        let rest = bytes.count - index
        if rest == 1 {
            let n = UInt32(bytes[index]) << 16
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)]]
            if pad { out += Array("==".utf8) }
        } else if rest == 2 {
            let n = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)]]
            if pad { out += Array("=".utf8) }
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func decode<Bytes: RandomAccessCollection>(_ text: Bytes, table: [UInt8]) -> [UInt8]? where Bytes.Element == UInt8 {
        var chars = text[...]
        var padding = 0
        while chars.last == UInt8(ascii: "="), padding < 2 {
            chars.removeLast()
            padding += 1
        }
        if padding > 0, (chars.count + padding) % 4 != 0 { return nil }
        guard chars.count % 4 != 1 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(chars.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for char in chars {
            let value = table[Int(char)]
            guard value != 0xff else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        // Leftover bits must be zero, so each byte string has exactly one encoding.
        guard accumulator & ((1 << UInt32(bits)) - 1) == 0 else { return nil }
        return out
    }
}
