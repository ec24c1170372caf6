public import Basics
import Foundation
public import Manifests
public import Reconciler

/// GitHub Actions workflow commands (`::group::`, `::error …::`), escaped as the runner expects:
/// `%`, CR and LF in every value, and also `:` and `,` in properties.
public enum GitHubActions {
    public static func group(_ title: String) -> String { "::group::" + escapeData(title) }
    public static let endGroup = "::endgroup::"

    public enum Level: String { case error, warning, notice }

    public static func annotation(_ level: Level, _ message: String, title: String? = nil, location: SourceLocation? = nil) -> String {
        var properties: [String] = []
        if let location {
            properties.append("file=" + escapeProperty(location.file))
            properties.append("line=\(location.line)")
            if location.column > 0 { properties.append("col=\(location.column)") }
        }
        if let title { properties.append("title=" + escapeProperty(title)) }
        return "::\(level.rawValue)" + (properties.isEmpty ? "" : " " + properties.joined(separator: ",")) + "::" + escapeData(message)
    }

    static func escapeData(_ text: String) -> String {
        text.replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: "\r", with: "%0D")
            .replacingOccurrences(of: "\n", with: "%0A")
    }

    static func escapeProperty(_ text: String) -> String {
        escapeData(text).replacingOccurrences(of: ":", with: "%3A").replacingOccurrences(of: ",", with: "%2C")
    }

    /// The manifest place an action comes from, when one can be named: the message localization,
    /// the image, the default assignment. Paths are relative to `base` when under it, so GitHub
    /// can link them to the checkout.
    static func location(of change: AnyChange, in manifests: ManifestSet?, base: String) -> SourceLocation? {
        guard let manifests, let source = change.source else { return nil }
        let found: SourceLocation?
        switch source {
        case .message(let name, let locale):
            let manifest = manifests.messages.first { $0.name == name }
            found = manifest?.localizations.first { $0.locale == locale }?.location ?? manifest?.location
        case .image(let names):
            found = manifests.images.first { names.contains($0.name) }?.location
        case .defaultAssignment(let pair):
            found = manifests.defaults.first { $0.productId == pair.productId && $0.locale == pair.locale }?.location
                ?? manifests.defaults.first { $0.productId == pair.productId && $0.locale == "*" }?.location
        case .app:
            found = manifests.app.location
        }
        guard var location = found else { return nil }
        let prefix = base.hasSuffix("/") ? base : base + "/"
        if location.file.hasPrefix(prefix) { location.file.removeFirst(prefix.count) }
        return location
    }

    /// Annotations for a plan: errors (rejected content, limits, prune protection) and blocked actions.
    public static func planAnnotations(_ plan: Plan, manifests: ManifestSet?, base: String, problems: Bool = true) -> [String] {
        var lines: [String] = []
        if let missing = plan.missingState {
            lines.append(annotation(.error, missing.explanation, title: "missing state"))
        }
        for warning in plan.warnings {
            lines.append(annotation(.warning, PlanWording.warning(warning), title: warning.field))
        }
        for problem in plan.problems where problems {
            // A rejection the main branch already lived with is a warning: it is not this change's doing.
            lines.append(annotation(problem.severity == .error ? .error : .warning, problem.message,
                                    title: "\(problem.name)" + (problem.locale.map { " (\($0))" } ?? "")))
        }
        for action in plan.actions where action.state == .error {
            lines.append(annotation(.error, action.error?.description ?? "the plan holds this action as an error", title: action.title,
                                    location: location(of: action.change, in: manifests, base: base)))
        }
        for action in plan.actions where action.state == .blocked {
            let waits = action.waitingFor.map(\.description).joined(separator: "; ")
            // Without content to wait for (a realtime URL waiting for a performance test), the reason says what.
            let why = waits.isEmpty ? PlanWording.reason(action.reason) : "waiting for " + waits
            lines.append(annotation(.warning, "blocked: " + why, title: action.title,
                                    location: location(of: action.change, in: manifests, base: base)))
        }
        return lines
    }
}
