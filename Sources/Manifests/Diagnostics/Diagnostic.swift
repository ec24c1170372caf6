public import Basics
import YAML

/// One problem found in the manifests (or, reused by the reconciler, in a plan): what is wrong,
/// where it was written, and what to do about it. `code` is stable, so scripts and docs can name it.
public struct Diagnostic: Sendable, Hashable, Codable {
    public enum Severity: String, Sendable, Hashable, Codable {
        case error
        case warning
    }

    public var severity: Severity
    /// A stable kebab-case identifier such as `header-too-long`.
    public var code: String
    public var location: SourceLocation?
    public var message: String
    public var hint: String?

    public init(severity: Severity, code: String, location: SourceLocation?, message: String, hint: String? = nil) {
        self.severity = severity
        self.code = code
        self.location = location
        self.message = message
        self.hint = hint
    }

    /// `text` with control and invisible characters written as `\u{…}`, so that a value quoted in a
    /// message cannot move the cursor, ring a bell or hide what it holds.
    public static func visible(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            if TextCheck.isForbidden(scalar) || (scalar.properties.isDefaultIgnorableCodePoint && scalar != " ") {
                out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    public static func error(_ code: String, at location: SourceLocation?, _ message: String, hint: String? = nil) -> Diagnostic {
        Diagnostic(severity: .error, code: code, location: location, message: message, hint: hint)
    }

    public static func warning(_ code: String, at location: SourceLocation?, _ message: String, hint: String? = nil) -> Diagnostic {
        Diagnostic(severity: .warning, code: code, location: location, message: message, hint: hint)
    }

    /// The order diagnostics are shown in: by file, line, column, then code (problems without a
    /// place come first, because they concern the whole directory).
    public static func sorted(_ diagnostics: [Diagnostic]) -> [Diagnostic] {
        diagnostics.sorted { lhs, rhs in
            switch (lhs.location, rhs.location) {
            case (nil, .some): return true
            case (.some, nil): return false
            case let (l?, r?) where l != r: return l < r
            default:
                if lhs.code != rhs.code { return lhs.code < rhs.code }
                return lhs.message < rhs.message
            }
        }
    }
}

extension Array where Element == Diagnostic {
    public var errorCount: Int { count { $0.severity == .error } }
    public var warningCount: Int { count { $0.severity == .warning } }
    public var hasErrors: Bool { contains { $0.severity == .error } }
}
