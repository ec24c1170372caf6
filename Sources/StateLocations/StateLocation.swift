import Foundation
public import RetentionMessagingModels

/// Where one environment's state document lives: a file, or an object in an S3-compatible bucket.
///
/// A location whose last part ends in `.json` names the document itself; any other location is a
/// folder (or key prefix) holding one document per environment, `<environment>.json`. This is the one
/// model of where state lives: the manifests' `stateStore`, `--state-store` and every store use it,
/// and `StateLocation.parse` is its one parser (see `StateLocationGrammar.swift`).
public enum StateLocation: Sendable, Hashable, CustomStringConvertible {
    /// An absolute path with symlinks resolved as far as the path exists.
    case file(path: String)
    /// `key` has no leading or trailing slash; it may be empty (the bucket's top) when it is a prefix.
    case s3(bucket: String, key: String)

    /// The kinds of place a location can name; each has one backend in `StateBackends`.
    public enum Scheme: String, Sendable, Hashable, CaseIterable {
        case file, s3
    }

    public var scheme: Scheme {
        switch self {
        case .file: .file
        case .s3: .s3
        }
    }

    public var description: String {
        switch self {
        case .file(let path): path
        case .s3(let bucket, let key): key.isEmpty ? "s3://\(bucket)" : "s3://\(bucket)/\(key)"
        }
    }

    /// Whether this names a document rather than a folder or prefix.
    public var namesDocument: Bool {
        switch self {
        case .file(let path): path.hasSuffix(".json")
        case .s3(_, let key): key.hasSuffix(".json")
        }
    }

    /// The document's own location for an environment: itself, or `<environment>.json` inside it.
    public func document(for environment: Environment) -> StateLocation {
        namesDocument ? self : appending("\(environment.rawValue).json")
    }

    /// The folder or prefix under which a store keeps its document and may keep other data (an
    /// event store's `events/`): the location itself when it is a folder or prefix, else the
    /// document's folder.
    public var root: StateLocation {
        guard namesDocument else { return self }
        switch self {
        case .file(let path):
            return .file(path: (path as NSString).deletingLastPathComponent)
        case .s3(let bucket, let key):
            return .s3(bucket: bucket, key: key.split(separator: "/").dropLast().joined(separator: "/"))
        }
    }

    /// `relative` (slash-separated, no `.` or `..` parts) inside this folder or prefix.
    public func appending(_ relative: String) -> StateLocation {
        switch self {
        case .file(let path):
            return .file(path: path.hasSuffix("/") ? path + relative : path + "/" + relative)
        case .s3(let bucket, let key):
            return .s3(bucket: bucket, key: key.isEmpty ? relative : key + "/" + relative)
        }
    }
}

// Whether two environments may share a location, decided here and nowhere else: a folder or prefix
// may be shared, because each environment's document in it is its own `<environment>.json`; two
// environments whose documents resolve to the same file or object may not, because one would read
// and overwrite the other's published snapshot.
extension StateLocation {
    /// The document `first` and `second` would both use, or nil when each has its own.
    public static func sharedDocument(_ first: (Environment, StateLocation),
                                      _ second: (Environment, StateLocation)) -> StateLocation? {
        guard first.0 != second.0 else { return nil }
        let document = first.1.document(for: first.0)
        return document == second.1.document(for: second.0) ? document : nil
    }

    /// The first document two environments share, if any, in a stable order.
    public static func firstShared(_ locations: [Environment: StateLocation]) -> (location: StateLocation, environments: [Environment])? {
        let entries = locations.sorted { $0.key < $1.key }
        var shared: [(location: StateLocation, environments: [Environment])] = []
        for (index, first) in entries.enumerated() {
            for second in entries.dropFirst(index + 1) {
                if let document = sharedDocument((first.key, first.value), (second.key, second.value)) {
                    shared.append((document, [first.key, second.key]))
                }
            }
        }
        return shared.min { $0.location.description < $1.location.description }
    }
}
