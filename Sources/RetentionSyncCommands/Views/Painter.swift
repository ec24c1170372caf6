import Foundation

/// The one ANSI painter every view uses. Whether it paints is `Console.useColor`, the one
/// TTY/`NO_COLOR` decision.
struct Painter: Sendable {
    enum Color: String, Sendable { case red = "31", green = "32", yellow = "33" }

    var enabled: Bool

    init(enabled: Bool) { self.enabled = enabled }
    init(_ console: Console) { enabled = console.useColor }

    func color(_ color: Color, _ text: String) -> String {
        enabled ? "\u{1B}[\(color.rawValue)m\(text)\u{1B}[0m" : text
    }

    func bold(_ text: String) -> String { enabled ? "\u{1B}[1m\(text)\u{1B}[0m" : text }
}

/// Text that reaches a terminal: control characters (escape sequences, newlines, NUL, DEL, C1)
/// in names and other user-supplied strings are shown as `\u{…}`, so they can neither move the
/// cursor nor forge a line of output.
enum TerminalText {
    static func safe(_ text: String) -> String {
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

    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.properties.generalCategory == .format && scalar.value >= 0x202A && scalar.value <= 0x2069
    }
}

/// Text that reaches a Markdown comment: user-supplied strings cannot close a table cell, open
/// HTML (`</details>`, the comment split marker) or break a line.
enum MarkdownText {
    /// For running text and table cells.
    static func escape(_ text: String) -> String {
        TerminalText.safe(text).replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "<", with: "&lt;")
    }

    /// A code span, delimited so that backticks inside cannot end it early; inside a table, `|` is escaped too.
    static func code(_ text: String, inTable: Bool = false) -> String {
        var body = TerminalText.safe(text)
        if inTable { body = body.replacingOccurrences(of: "|", with: "\\|") }
        // In a code span `<` is literal; breaking up `</` and `<!--` keeps tools that scan the raw
        // text (the comment splitter, a reader of the fold) from seeing a tag.
        body = body.replacingOccurrences(of: "</", with: "<\u{200B}/").replacingOccurrences(of: "<!--", with: "<\u{200B}!--")
        guard body.contains("`") else { return "`\(body)`" }
        return "`` \(body) ``"
    }
}
