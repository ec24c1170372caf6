/// What a customer-facing text may hold: Apple shows it as written, so a control character is at
/// best invisible and at worst breaks the display, and text made only of blanks shows nothing.
enum TextCheck {
    /// Control characters (C0, DEL, C1 such as NEL) and Unicode noncharacters (U+FFFE, U+FFFF, …).
    static func isForbidden(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        if value < 0x20 || (0x7F...0x9F).contains(value) { return true }
        if (0xFDD0...0xFDEF).contains(value) { return true }
        return value & 0xFFFE == 0xFFFE
    }

    /// The first forbidden character and its 1-based position, if any.
    static func firstForbidden(in text: String) -> (scalar: Unicode.Scalar, position: Int)? {
        for (offset, scalar) in text.unicodeScalars.enumerated() where isForbidden(scalar) {
            return (scalar, offset + 1)
        }
        return nil
    }

    /// Whether the text holds nothing a reader can see: only spaces, line breaks and zero-width characters.
    static func isBlank(_ text: String) -> Bool {
        text.unicodeScalars.allSatisfy { $0.properties.isWhitespace || $0.properties.isDefaultIgnorableCodePoint }
    }

    static func name(of scalar: Unicode.Scalar) -> String {
        let code = "U+" + String(repeating: "0", count: max(0, 4 - String(scalar.value, radix: 16).count))
            + String(scalar.value, radix: 16, uppercase: true)
        let known: [UInt32: String] = [0x00: "NUL", 0x07: "BEL", 0x08: "BACKSPACE", 0x09: "TAB", 0x0A: "LINE FEED",
                                       0x0D: "CARRIAGE RETURN", 0x1B: "ESC", 0x7F: "DEL", 0x85: "NEL", 0xFFFE: "a noncharacter",
                                       0xFFFF: "a noncharacter"]
        return known[scalar.value].map { "\(code) \($0)" } ?? code
    }
}
