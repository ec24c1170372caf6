public import Foundation
public import RetentionMessagingModels

/// Where one environment's state document lives: a file, or an object in an S3-compatible bucket.
///
/// A location whose last part ends in `.json` names the document itself; any other location is a
/// folder (or key prefix) holding one document per environment, `<environment>.json`.
public enum StateLocation: Sendable, Hashable, CustomStringConvertible {
    /// An absolute path with symlinks resolved as far as the path exists.
    case file(path: String)
    /// `key` has no leading slash; it may be empty (the bucket's top) when it is a prefix.
    case s3(bucket: String, key: String)

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
        guard !namesDocument else { return self }
        let name = "\(environment.rawValue).json"
        switch self {
        case .file(let path):
            return .file(path: path.hasSuffix("/") ? path + name : path + "/" + name)
        case .s3(let bucket, let key):
            return .s3(bucket: bucket, key: key.isEmpty ? name : (key.hasSuffix("/") ? key + name : key + "/" + name))
        }
    }

    /// Parses `s3://bucket/prefix`, `file:///path` or a path.
    ///
    /// - Parameters:
    ///   - base: the folder a relative path is resolved against (the manifest directory for a
    ///     manifest's value, the working directory for a command-line option).
    ///   - confinedTo: when set (a manifest's value), the path must resolve inside this folder after
    ///     following symlinks, so a manifest cannot make `apply` write elsewhere.
    public static func parse(_ text: String, relativeTo base: URL,
                             confinedTo: URL? = nil) throws(StateLocationError) -> StateLocation {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { throw StateLocationError(text, "is empty; give s3://bucket/prefix or a file path") }
        guard !trimmed.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) else {
            throw StateLocationError(text, "contains a control character")
        }
        if let schemeEnd = trimmed.range(of: "://") {
            let scheme = trimmed[..<schemeEnd.lowerBound].lowercased()
            let rest = String(trimmed[schemeEnd.upperBound...])
            switch scheme {
            case "s3": return try parseS3(rest, text: text)
            case "file":
                guard rest.hasPrefix("/") else { throw StateLocationError(text, "a file:// URL needs an absolute path (file:///path)") }
                return try parseFile(rest.removingPercentEncoding ?? rest, text: text, base: base, confinedTo: confinedTo)
            default:
                throw StateLocationError(text, "uses '\(scheme)://', which is not a state store; use s3://bucket/prefix (any S3-compatible store, Google Cloud Storage through its interoperability API) or a file path")
            }
        }
        return try parseFile(trimmed, text: text, base: base, confinedTo: confinedTo)
    }

    private static func parseS3(_ rest: String, text: String) throws(StateLocationError) -> StateLocation {
        let bucket = rest.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        var key = rest.count > bucket.count ? String(rest.dropFirst(bucket.count + 1)) : ""
        try validateBucket(bucket, text: text)
        while key.hasSuffix("/") { key.removeLast() }
        if !key.isEmpty {
            let allowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/")
            guard key.unicodeScalars.allSatisfy({ allowed.contains($0) }) else {
                throw StateLocationError(text, "the key prefix may hold only letters, digits, '.', '_', '-' and '/'")
            }
            for segment in key.split(separator: "/", omittingEmptySubsequences: false) {
                guard !segment.isEmpty, segment != ".", segment != ".." else {
                    throw StateLocationError(text, "the key prefix has an empty, '.' or '..' part")
                }
            }
            guard key.utf8.count <= 900 else { throw StateLocationError(text, "the key prefix is longer than 900 bytes") }
        }
        return .s3(bucket: bucket, key: key)
    }

    /// S3's bucket naming rules, which every S3-compatible store accepts.
    private static func validateBucket(_ bucket: String, text: String) throws(StateLocationError) {
        guard !bucket.isEmpty else { throw StateLocationError(text, "names no bucket; write s3://bucket/prefix") }
        let characters = bucket.unicodeScalars
        guard (3...63).contains(bucket.count),
              characters.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "." || $0 == "-" }),
              let first = characters.first, let last = characters.last,
              first != "." && first != "-" && last != "." && last != "-", !bucket.contains("..") else {
            throw StateLocationError(text, "'\(bucket)' is not a bucket name (3 to 63 lowercase letters, digits, '.' and '-', starting and ending with a letter or digit)")
        }
    }

    private static func parseFile(_ path: String, text: String, base: URL, confinedTo: URL?) throws(StateLocationError) -> StateLocation {
        let absolute = path.hasPrefix("/") ? path : base.standardizedFileURL.path + "/" + path
        let resolved = resolvingSymlinks(absolute)
        if let confinedTo {
            let root = resolvingSymlinks(confinedTo.standardizedFileURL.path)
            let prefix = root.hasSuffix("/") ? root : root + "/"
            guard resolved.hasPrefix(prefix), resolved.count > prefix.count else {
                throw StateLocationError(text, "resolves to \(resolved), outside the manifest directory \(root); keep the state file inside it (or pass --state-store)")
            }
        }
        var isDirectory: ObjCBool = false
        if path.hasSuffix(".json"), FileManager.default.fileExists(atPath: resolved, isDirectory: &isDirectory), isDirectory.boolValue {
            throw StateLocationError(text, "is a directory, not a state file")
        }
        return .file(path: resolved)
    }

    /// The real path of the longest existing ancestor, with the rest appended, so a symlink
    /// anywhere on the way is followed even when the file itself does not exist yet.
    static func resolvingSymlinks(_ path: String) -> String {
        let standardized = URL(fileURLWithPath: path).standardizedFileURL.path
        var existing = standardized
        var rest: [String] = []
        while !existing.isEmpty, existing != "/" {
            if let real = realpath(existing, nil) {
                defer { free(real) }
                let head = String(cString: real)
                return ([head == "/" ? "" : head] + rest.reversed()).joined(separator: "/")
            }
            rest.append((existing as NSString).lastPathComponent)
            existing = (existing as NSString).deletingLastPathComponent
        }
        return standardized
    }

    /// The first location two environments share (after expanding folders and prefixes), if any:
    /// one environment would then read and overwrite the other's document.
    public static func firstShared(_ locations: [Environment: StateLocation]) -> (location: StateLocation, environments: [Environment])? {
        var owners: [StateLocation: [Environment]] = [:]
        for (environment, location) in locations {
            owners[location.document(for: environment), default: []].append(environment)
        }
        return owners.filter { $0.value.count > 1 }
            .map { (location: $0.key, environments: $0.value.sorted()) }
            .min { $0.location.description < $1.location.description }
    }
}

/// A state store location that cannot be used, and why.
public struct StateLocationError: Error, Sendable, Equatable, CustomStringConvertible {
    public var location: String
    public var reason: String

    public init(_ location: String, _ reason: String) {
        self.location = location
        self.reason = reason
    }

    public var description: String { "state store '\(location)' \(reason)" }
}
