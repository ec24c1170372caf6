public import Basics
public import CLIKit
import Foundation

extension Painter {
    /// Paints only where the console allows colour: `Console.useColor` is the one TTY/`NO_COLOR` decision.
    public init(_ console: Console) { self.init(enabled: console.useColor) }
}

/// Text that reaches a Markdown comment: user-supplied strings cannot close a table cell, open
/// HTML (`</details>`, the comment split marker) or break a line.
public enum MarkdownText {
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
