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
    public static func print(_ diagnostics: [Diagnostic], to console: Console) {
        guard !diagnostics.isEmpty else { return }
        console.error(DiagnosticRenderer.render(diagnostics, format: .text, color: console.useColor)
            .trimmingCharacters(in: .newlines))
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
