public import Foundation

// The one parser of state store locations. The grammar (README, "Locations"):
//
//   location  = s3-url | file-url | path            (a manifest's stateStore: s3-url | relative path)
//   s3-url    = "s3://" bucket [ "/" key [ "/" ] ]
//   bucket    = 3–63 of a–z 0–9 . -, starting and ending with a letter or digit, no ".."
//   key       = segment *( "/" segment ), at most 900 bytes
//   segment   = 1* of A–Z a–z 0–9 . _ -, never "." or ".."
//   file-url  = "file://" absolute-path             (command line only)
//   path      = text without control characters or "://", not starting or ending with a space;
//               in a manifest relative, and inside the manifest directory once symlinks are followed
//
// The manifest schema's `stateStore` pattern spells the manifest grammar as a regular expression; a
// test checks a table of examples against both.

extension StateLocation {
    /// Where a location was written, which decides what it may be and what a relative path means.
    public enum Origin: Sendable, Hashable {
        /// `--state-store`: anything in the grammar; a relative path is relative to the working directory.
        case commandLine(workingDirectory: URL)
        /// A manifest's `stateStore`: `s3://…` or a relative path that stays inside `directory`, so a
        /// manifest can never make `apply` write elsewhere.
        case manifest(directory: URL)
    }

    /// A location as written, before any path is resolved against the file system.
    public enum Written: Sendable, Hashable {
        case s3(bucket: String, key: String)
        /// A plain path or a `file://` URL's path, percent-decoded.
        case path(String)
    }

    /// Parses and resolves a location: `s3://bucket/prefix`, `file:///path` or a path.
    public static func parse(_ text: String, from origin: Origin) throws(StateLocationError) -> StateLocation {
        switch origin {
        case .commandLine(let workingDirectory):
            return try resolve(try syntax(text, inManifest: false), text: text, base: workingDirectory, confinedTo: nil)
        case .manifest(let directory):
            return try resolve(try syntax(text, inManifest: true), text: text, base: directory, confinedTo: directory)
        }
    }

    /// Parses `s3://bucket/prefix`, `file:///path` or a path.
    ///
    /// - Parameters:
    ///   - base: the folder a relative path is resolved against.
    ///   - confinedTo: when set, the path must resolve inside this folder after following symlinks.
    public static func parse(_ text: String, relativeTo base: URL,
                             confinedTo: URL? = nil) throws(StateLocationError) -> StateLocation {
        try resolve(try syntax(text, inManifest: false), text: text, base: base, confinedTo: confinedTo)
    }

    /// The grammar alone, without the file system: what the manifest schema's pattern checks.
    public static func syntax(_ text: String, inManifest: Bool) throws(StateLocationError) -> Written {
        guard !text.isEmpty else { throw StateLocationError(text, "is empty; give s3://bucket/prefix or a file path") }
        guard !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) else {
            throw StateLocationError(text, "contains a control character")
        }
        guard let first = text.unicodeScalars.first, let last = text.unicodeScalars.last,
              !CharacterSet.whitespaces.contains(first), !CharacterSet.whitespaces.contains(last) else {
            throw StateLocationError(text, "starts or ends with a space; remove it")
        }
        if let schemeEnd = text.range(of: "://") {
            let scheme = String(text[..<schemeEnd.lowerBound])
            let rest = String(text[schemeEnd.upperBound...])
            switch scheme {
            case "s3":
                return try s3(rest, text: text)
            case "file" where !inManifest:
                guard rest.hasPrefix("/") else { throw StateLocationError(text, "a file:// URL needs an absolute path (file:///path)") }
                return .path(rest.removingPercentEncoding ?? rest)
            case "file":
                throw StateLocationError(text, "is a file:// URL; in a manifest write the path relative to the manifest directory",
                                         kind: .absolutePathInManifest)
            default:
                throw StateLocationError(text, "uses '\(scheme)://', which is not a state store; use s3://bucket/prefix (any S3-compatible store, Google Cloud Storage through its interoperability API) or a file path")
            }
        }
        if inManifest, text.hasPrefix("/") {
            throw StateLocationError(text, "must be a relative path", kind: .absolutePathInManifest)
        }
        return .path(text)
    }

    private static func s3(_ rest: String, text: String) throws(StateLocationError) -> Written {
        let bucket = rest.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        var key = rest.count > bucket.count ? String(rest.dropFirst(bucket.count + 1)) : ""
        try validateBucket(bucket, text: text)
        if key.hasSuffix("/") { key.removeLast() }
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
        } else if rest.hasSuffix("//") {
            throw StateLocationError(text, "the key prefix has an empty, '.' or '..' part")
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

    private static func resolve(_ written: Written, text: String, base: URL, confinedTo: URL?) throws(StateLocationError) -> StateLocation {
        switch written {
        case .s3(let bucket, let key):
            return .s3(bucket: bucket, key: key)
        case .path(let path):
            return try file(path, text: text, base: base, confinedTo: confinedTo)
        }
    }

    private static func file(_ path: String, text: String, base: URL, confinedTo: URL?) throws(StateLocationError) -> StateLocation {
        let absolute = path.hasPrefix("/") ? path : base.standardizedFileURL.path + "/" + path
        let resolved = resolvingSymlinks(absolute)
        if let confinedTo {
            let root = resolvingSymlinks(confinedTo.standardizedFileURL.path)
            let prefix = root.hasSuffix("/") ? root : root + "/"
            guard resolved.hasPrefix(prefix), resolved.count > prefix.count else {
                throw StateLocationError(text, "resolves to \(resolved), outside the manifest directory \(root); keep the state file inside it (or pass --state-store)",
                                         kind: .outsideManifests)
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
}

/// A state store location that cannot be used, and why.
public struct StateLocationError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable, Equatable {
        /// Not in the grammar (`invalid-state-store` in a manifest).
        case syntax
        /// An absolute path or `file://` URL in a manifest (`invalid-snapshot-path`).
        case absolutePathInManifest
        /// A manifest's path that resolves outside the manifest directory (`path-outside-manifests`).
        case outsideManifests
    }

    public var kind: Kind
    public var location: String
    public var reason: String

    public init(_ location: String, _ reason: String, kind: Kind = .syntax) {
        self.kind = kind
        self.location = location
        self.reason = reason
    }

    public var description: String { "state store '\(location)' \(reason)" }
}
