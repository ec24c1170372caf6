import Basics
import StateLocations

extension Loader {
    /// `stateStore`: read by the one location parser, so a value that passes `validate` is exactly one
    /// that `plan`, `apply` and `serve` can open; its error is reported at the value.
    mutating func stateStoreLocation(_ store: Located<String>, environment: String) -> StateLocation? {
        do {
            return try StateLocation.parse(store.value, from: .manifest(directory: directory))
        } catch {
            diagnostics.append(Self.stateStoreDiagnostic(error, at: store.location, environment: environment, displayPath: displayPath))
            return nil
        }
    }

    static func stateStoreDiagnostic(_ error: StateLocationError, at location: SourceLocation, environment: String,
                                     displayPath: String) -> Diagnostic {
        let example = ".retention-sync/\(environment)-state.json"
        switch error.kind {
        case .syntax:
            return .error("invalid-state-store", at: location, "stateStore '\(error.location)' \(error.reason)",
                          hint: "write s3://bucket/prefix (bucket: 3–63 lowercase letters, digits, '.' and '-'; prefix parts: "
                            + "letters, digits, '.', '_' and '-', never '.' or '..') or a relative file path, e.g. "
                            + "s3://my-team-retention/\(environment) or \(example)")
        case .absolutePathInManifest:
            return .error("invalid-snapshot-path", at: location, "stateStore '\(error.location)' \(error.reason)",
                          hint: "write it relative to the manifest directory, e.g. \(example)")
        case .outsideManifests:
            return .error("path-outside-manifests", at: location,
                          "stateStore '\(error.location)' resolves outside the manifest directory '\(displayPath)'",
                          hint: "keep stores inside the manifest directory (e.g. \(example)), so an apply never writes elsewhere")
        }
    }
}
