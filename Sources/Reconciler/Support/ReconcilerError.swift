public import Basics

/// Why the reconciler could not plan, apply or report. Descriptions name where and what; `hint`
/// says what to do as a value, which the views word with the command and flag names.
public enum ReconcilerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The manifests do not resolve (normally caught by `validate` first).
    case manifest(location: SourceLocation?, message: String)
    /// The published snapshot could not be read or written.
    case snapshotStore(path: String, message: String)
    /// The operation needs the state store and there is none.
    case stateRequired(String)
    /// A saved plan cannot be applied any more; re-plan.
    case stalePlan(String)
    /// A saved plan file could not be read.
    case invalidPlan(String)
    /// Something that should not happen.
    case `internal`(String)

    /// What a person does next.
    public enum Hint: Sendable, Equatable {
        /// Validate the manifests to see every problem.
        case validate
        /// Make and save a new plan.
        case planAgain
        /// Name the state store to read.
        case configureStateStore
    }

    public var hint: Hint? {
        switch self {
        case .manifest: .validate
        case .stalePlan: .planAgain
        case .stateRequired: .configureStateStore
        case .snapshotStore, .invalidPlan, .internal: nil
        }
    }

    public var description: String {
        switch self {
        case .manifest(let location, let message):
            (location.map { "\($0): " } ?? "") + "error: \(message)"
        case .snapshotStore(let path, let message):
            "snapshot store \(path): \(message)"
        case .stateRequired(let message):
            message
        case .stalePlan(let message):
            "the saved plan is stale: \(message)"
        case .invalidPlan(let message):
            "cannot read the saved plan: \(message)"
        case .internal(let message):
            "internal error: \(message)"
        }
    }
}
