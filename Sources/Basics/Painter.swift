/// The one ANSI painter: every view and the diagnostics renderer paint through it, and whether it
/// paints is decided once by the caller (a terminal, no `NO_COLOR`).
public struct Painter: Sendable {
    public enum Color: String, Sendable { case red = "31", green = "32", yellow = "33", cyan = "36" }

    public var enabled: Bool

    public init(enabled: Bool) { self.enabled = enabled }

    public func color(_ color: Color, _ text: String, bold: Bool = false) -> String {
        enabled ? "\u{1B}[\(bold ? "1;" : "")\(color.rawValue)m\(text)\u{1B}[0m" : text
    }

    public func bold(_ text: String) -> String { enabled ? "\u{1B}[1m\(text)\u{1B}[0m" : text }
}

/// Text that reaches a terminal: control characters (escape sequences, newlines, NUL, DEL, C1)
/// in names and other user-supplied strings are shown as `\u{…}`, so they can neither move the
/// cursor nor forge a line of output.
public enum TerminalText {
    public static func safe(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            if isControl(scalar) {
                out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// C0 and C1 controls, DEL, and the bidirectional embeddings, overrides and isolates.
    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
            || (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
    }
}
