import Basics
public import Manifests
import Foundation
import RetentionMessagingModels
import YAML

/// The three ways diagnostics are shown.
public enum DiagnosticFormat: String, Sendable, CaseIterable {
    /// `file:line:column: error: message`, for people at a terminal.
    case text
    /// A versioned JSON object, for scripts.
    case json
    /// GitHub Actions workflow commands, which annotate the lines in a pull request.
    case github
}

/// Renders diagnostics, sorted, in one of the formats.
public enum DiagnosticRenderer {
    /// The version of the JSON form; bumped on a breaking change to it.
    public static let jsonFormatVersion = "1.0"

    /// - Parameter source: the text of a file a diagnostic names, for showing the line under the
    ///   message with a caret at the column (gcc style); the caller passes it on a terminal only.
    public static func render(_ diagnostics: [Diagnostic], format: DiagnosticFormat, color: Bool,
                              source: ((_ file: String) -> String?)? = nil) -> String {
        let sorted = Diagnostic.sorted(diagnostics)
        switch format {
        case .text: return text(sorted, color: color, source: source)
        case .json: return json(sorted)
        case .github: return github(sorted)
        }
    }

    /// "2 errors, 1 warning".
    public static func summary(_ diagnostics: [Diagnostic]) -> String {
        let errors = diagnostics.errorCount, warnings = diagnostics.warningCount
        return "\(errors) error\(errors == 1 ? "" : "s"), \(warnings) warning\(warnings == 1 ? "" : "s")"
    }

    private static func text(_ diagnostics: [Diagnostic], color: Bool, source: ((String) -> String?)?) -> String {
        guard !diagnostics.isEmpty else { return "" }
        let painter = Painter(enabled: color)
        var files: [String: [Substring]] = [:]
        var lines: [String] = []
        for diagnostic in diagnostics {
            let severity = diagnostic.severity == .error ? painter.color(.red, "error", bold: true) : painter.color(.yellow, "warning", bold: true)
            let place = diagnostic.location.map { painter.bold(TerminalText.safe("\($0):")) + " " } ?? ""
            lines.append("\(place)\(severity): \(TerminalText.safe(diagnostic.message)) [\(diagnostic.code)]")
            if let source, let location = diagnostic.location {
                if files[location.file] == nil {
                    files[location.file] = source(location.file).map { $0.split(separator: "\n", omittingEmptySubsequences: false) } ?? []
                }
                if let excerpt = excerpt(files[location.file] ?? [], line: location.line, column: location.column) {
                    let gutter = String(repeating: " ", count: String(location.line).count)
                    lines.append(" \(location.line) | \(excerpt.line)")
                    lines.append(" \(gutter) | \(excerpt.padding)\(painter.color(.green, "^", bold: true))")
                }
            }
            if let hint = diagnostic.hint {
                lines.append("    " + painter.color(.cyan, "hint:") + " " + TerminalText.safe(hint))
            }
        }
        lines.append(summary(diagnostics))
        return lines.joined(separator: "\n") + "\n"
    }

    /// The source line (control characters made visible) and the blanks that put a caret under
    /// `column`; tabs are kept so the caret lines up the way the terminal shows the line.
    static func excerpt(_ lines: [Substring], line: Int, column: Int) -> (line: String, padding: String)? {
        guard line >= 1, line <= lines.count else { return nil }
        var text = Substring(lines[line - 1])
        if text.hasSuffix("\r") { text = text.dropLast() }
        var shown = ""
        var padding = ""
        for (index, character) in text.enumerated() {
            let visible = character == "\t" ? "\t" : Diagnostic.visible(String(character))
            shown += visible
            if index < column - 1 {
                padding += character == "\t" ? "\t" : String(repeating: " ", count: visible.count)
            }
        }
        if column - 1 > text.count { padding += String(repeating: " ", count: column - 1 - text.count) }
        return (shown, padding)
    }

    private struct JSONReport: Encodable {
        var formatVersion: String
        var diagnostics: [Diagnostic]
        var errorCount: Int
        var warningCount: Int

        // The same snake_case convention as every other JSON document the tool writes (plan, id, status).
        enum CodingKeys: String, CodingKey {
            case formatVersion = "format_version", diagnostics, errorCount = "error_count", warningCount = "warning_count"
        }
    }

    private static func json(_ diagnostics: [Diagnostic]) -> String {
        let report = JSONReport(formatVersion: jsonFormatVersion, diagnostics: diagnostics,
                                errorCount: diagnostics.errorCount, warningCount: diagnostics.warningCount)
        // Encoding plain strings and integers cannot fail.
        let data = (try? CanonicalJSON.encode(report)) ?? Data()
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    private static func github(_ diagnostics: [Diagnostic]) -> String {
        var lines: [String] = []
        for diagnostic in diagnostics {
            var properties: [String] = []
            if let location = diagnostic.location {
                properties += ["file=\(GitHubActions.escapeProperty(location.file))", "line=\(location.line)", "col=\(location.column)"]
            }
            properties.append("title=\(GitHubActions.escapeProperty(diagnostic.code))")
            var message = diagnostic.message
            if let hint = diagnostic.hint { message += "\nhint: \(hint)" }
            lines.append("::\(diagnostic.severity.rawValue) \(properties.joined(separator: ","))::\(GitHubActions.escapeData(message))")
        }
        return lines.isEmpty ? "" : lines.joined(separator: "\n") + "\n"
    }

}
