public import Basics
public import YAML

/// Why the reconciler could not plan, apply or report. Descriptions name where and what to do.
public enum ReconcilerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The manifests do not resolve (normally caught by `validate` first).
    case manifest(location: SourceLocation?, message: String)
    /// The published snapshot could not be read or written.
    case snapshotStore(path: String, message: String)
    /// A saved plan cannot be applied any more; re-plan.
    case stalePlan(String)
    /// A saved plan file could not be read.
    case invalidPlan(String)
    /// Something that should not happen.
    case `internal`(String)

    public var description: String {
        switch self {
        case .manifest(let location, let message):
            (location.map { "\($0): " } ?? "") + "error: \(message) (run 'retention-sync validate' for every problem)"
        case .snapshotStore(let path, let message):
            "snapshot store \(path): \(message)"
        case .stalePlan(let message):
            "the saved plan is stale: \(message); run 'retention-sync plan --out FILE' again"
        case .invalidPlan(let message):
            "cannot read the saved plan: \(message)"
        case .internal(let message):
            "internal error: \(message)"
        }
    }
}
