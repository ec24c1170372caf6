/// Plain-scalar resolution by the YAML 1.2 core schema, written out by hand so `NO`, `on` and `yes`
/// stay strings and no regular-expression engine sits on the hot path.
enum CoreSchema {
    static func resolve(plain text: String) -> YAMLScalar.Resolved {
        switch text {
        case "", "~", "null", "Null", "NULL": return .null
        case "true", "True", "TRUE": return .bool(true)
        case "false", "False", "FALSE": return .bool(false)
        case ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF": return .float(.infinity)
        case "-.inf", "-.Inf", "-.INF": return .float(-.infinity)
        case ".nan", ".NaN", ".NAN": return .float(.nan)
        default: break
        }
        let bytes = Array(text.utf8)
        switch integer(bytes) {
        case .value(let int): return .int(int)
        case .tooLarge: return .string(text)
        case .notAnInteger: break
        }
        if isFloat(bytes), let double = Double(text) { return .float(double) }
        return .string(text)
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    private enum Integer {
        case value(Int64)
        case tooLarge
        case notAnInteger
    }

    /// `[-+]?[0-9]+`, `0o[0-7]+`, `0x[0-9a-fA-F]+`; a literal too large for Int64 stays a string
    /// rather than becoming a float that silently loses digits.
    private static func integer(_ bytes: [UInt8]) -> Integer {
        if bytes.count > 2, bytes[0] == UInt8(ascii: "0") {
            let rest = String(decoding: bytes[2...], as: UTF8.self)
            if bytes[1] == UInt8(ascii: "o"), bytes[2...].allSatisfy({ $0 >= 0x30 && $0 <= 0x37 }) {
                return Int64(rest, radix: 8).map(Integer.value) ?? .tooLarge
            }
            if bytes[1] == UInt8(ascii: "x"), bytes[2...].allSatisfy({ $0.isHexDigit }) {
                return Int64(rest, radix: 16).map(Integer.value) ?? .tooLarge
            }
        }
        var digits = bytes[...]
        if let first = digits.first, first == UInt8(ascii: "-") || first == UInt8(ascii: "+") {
            digits = digits.dropFirst()
        }
        guard !digits.isEmpty, digits.allSatisfy(isDigit) else { return .notAnInteger }
        return Int64(String(decoding: bytes, as: UTF8.self)).map(Integer.value) ?? .tooLarge
    }

    /// `[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`
    private static func isFloat(_ bytes: [UInt8]) -> Bool {
        var index = 0
        func digits() -> Int {
            let start = index
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            return index - start
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") { index += 1 }
        let whole = digits()
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            let fraction = digits()
            if whole == 0 && fraction == 0 { return false }
        } else if whole == 0 {
            return false
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") { index += 1 }
            if digits() == 0 { return false }
        }
        return index == bytes.count
    }
}

private extension UInt8 {
    var isHexDigit: Bool {
        (self >= 0x30 && self <= 0x39) || (self >= 0x41 && self <= 0x46) || (self >= 0x61 && self <= 0x66)
    }
}
