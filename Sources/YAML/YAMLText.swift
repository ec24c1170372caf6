/// Writing text into YAML a person will read and the parser will read back exactly: the one place
/// the project turns untrusted text (a vendor's export, a message someone else wrote) into YAML.
public enum YAMLText {
    /// `text` as a double-quoted YAML scalar: `\` and `"` escaped, and every character YAML would
    /// fold, break a line on or refuse (C0 and C1 controls, DEL, the line and paragraph separators,
    /// a byte-order mark) written as an escape, so the scalar is one line and parses back to `text`.
    public static func doubleQuoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            case "\u{85}": out += "\\N"
            case "\u{2028}": out += "\\L"
            case "\u{2029}": out += "\\P"
            default:
                if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0xFEFF {
                    out += scalar.value <= 0xFF ? "\\x" + hex(scalar.value, digits: 2) : "\\u" + hex(scalar.value, digits: 4)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

    private static func hex(_ value: UInt32, digits: Int) -> String {
        let text = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
