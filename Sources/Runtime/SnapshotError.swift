/// Why a runtime snapshot was refused. An engine never serves from a snapshot that failed to load,
/// so the previous one keeps answering.
public enum SnapshotError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The bytes could not be read or are not a runtime snapshot's JSON.
    case unreadable(String)
    /// Written by a retention-sync that uses a schema this one does not know.
    case unsupportedSchemaVersion(Int)
    /// The content was changed after it was sealed (`expected` is the digest the file carries).
    case digestMismatch(expected: String, actual: String)
    /// Sealed, but not something an engine can answer from.
    case invalid(String)

    public var description: String {
        switch self {
        case .unreadable(let reason):
            "cannot read the runtime snapshot: \(reason)"
        case .unsupportedSchemaVersion(let version):
            "the runtime snapshot has schemaVersion \(version), but this retention-sync reads only "
                + "schemaVersion \(RuntimeSnapshot.currentSchemaVersion); use the retention-sync that published it"
        case .digestMismatch(let expected, let actual):
            "the runtime snapshot is corrupt: it carries digest \(expected) but its content hashes to \(actual); "
                + "publish it again with `retention-sync apply` instead of editing it by hand"
        case .invalid(let reason):
            "the runtime snapshot is invalid: \(reason)"
        }
    }
}
