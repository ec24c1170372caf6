import Basics
public import CLIKit
import Foundation
public import Manifests
public import Reconciler
import RetentionMessaging
import RetentionMessagingModels
import Runtime

/// Validation diagnostics and workspace failures as the commands that read manifests print them.
public enum DiagnosticsView {
    /// Warnings of one code shown in full before the rest are summed up in one line.
    public static let warningsShownPerCode = 2

    /// The diagnostics a command that reads the manifests (plan, apply, status, import, …) prints on
    /// standard error: every error, and of each warning code the first `warningsShownPerCode`, then
    /// one line that counts the rest — an import of a vendor's 72 messages is one warning and a
    /// count, not 144 lines. `validate` lists every one.
    public static func print(_ diagnostics: [Diagnostic], to console: Console) {
        guard !diagnostics.isEmpty else { return }
        let (shown, summaries) = consolidated(diagnostics)
        var text = DiagnosticRenderer.render(shown, format: .text, color: console.useColor).trimmingCharacters(in: .newlines)
        for line in summaries { text += "\n" + line }
        console.error(text)
    }

    /// The diagnostics to show, in order, and one line per warning code with more than it shows.
    public static func consolidated(_ diagnostics: [Diagnostic]) -> (shown: [Diagnostic], summaries: [String]) {
        var counts: [String: Int] = [:]
        var shown: [Diagnostic] = []
        var codes: [String] = []
        for diagnostic in diagnostics {
            guard diagnostic.severity == .warning else { shown.append(diagnostic); continue }
            let seen = counts[diagnostic.code, default: 0]
            if seen == 0 { codes.append(diagnostic.code) }
            counts[diagnostic.code] = seen + 1
            if seen < warningsShownPerCode { shown.append(diagnostic) }
        }
        let summaries = codes.compactMap { code -> String? in
            let hidden = (counts[code] ?? 0) - warningsShownPerCode
            guard hidden > 0 else { return nil }
            return "… and \(hidden) more [\(code)] warning\(hidden == 1 ? "" : "s") like \(warningsShownPerCode == 1 ? "it" : "these") "
                + "('retention-sync validate' lists every one)"
        }
        return (shown, summaries)
    }

    public static func describe(_ failure: Workspace.Failure) -> String {
        switch failure.reason {
        case .noDirectory(let path):
            "\(path): no such manifest directory (use --manifests DIR, or run 'retention-sync init \(path)')"
        case .notADirectory(let path):
            "\(path) is a file, not a manifest directory; pass the directory that holds the manifests with --manifests DIR"
        case .invalid(let path, let errors):
            "the manifests in \(path) have \(errors) error\(errors == 1 ? "" : "s"); nothing was sent (run 'retention-sync validate --manifests \(path)')"
        case .environmentNotManaged(let location, let environment):
            "\(location): the App manifest does not manage \(environment.rawValue); add it under environments:"
        case .derive(let error):
            PlanWording.describe(error)
        }
    }

    /// The warning for flows that have nowhere to be published.
    public static func flowsUnpublished(_ environment: String) -> String {
        "warning: the flows are not published in \(environment): no state store "
            + "(set environments.\(environment).stateStore in the App manifest, or pass --state-store LOCATION)"
    }
}
