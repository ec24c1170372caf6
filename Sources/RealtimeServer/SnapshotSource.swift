public import Foundation

/// Snapshot bytes as read from a store, with the token that names that version.
public struct FetchedSnapshot: Sendable {
    public var data: Data
    /// Changes whenever the stored bytes change (a file's size and modification time, an ETag).
    public var version: String

    public init(data: Data, version: String) {
        self.data = data
        self.version = version
    }
}

/// Where `serve` reads the published runtime snapshot from. Polling must be cheap: `fetch` returns
/// nil without reading the bytes when the stored version is still `knownVersion`.
public protocol SnapshotSource: Sendable {
    /// Where the snapshot lives, for logs and errors (a path, a URL).
    var location: String { get }
    /// The current snapshot, or nil when its version is still `knownVersion`. Throws when the store
    /// cannot be read or holds no snapshot yet.
    func fetch(knownVersion: String?) throws -> FetchedSnapshot?
}

/// A snapshot in a local file, as `retention-sync apply` writes it to the App's `snapshotPath`.
public struct FileSnapshotSource: SnapshotSource {
    public let path: String

    public init(path: String) {
        self.path = path
    }

    public var location: String { path }

    public func fetch(knownVersion: String?) throws -> FetchedSnapshot? {
        let attributes: [FileAttributeKey: Any]
        do {
            attributes = try FileManager.default.attributesOfItem(atPath: path)
        } catch {
            throw SnapshotSourceError("\(path): no snapshot to read (\(error.localizedDescription)); publish one with `retention-sync apply`")
        }
        let modified = (attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
        let size = (attributes[.size] as? NSNumber)?.int64Value ?? -1
        let inode = (attributes[.systemFileNumber] as? NSNumber)?.uint64Value ?? 0
        let version = "\(inode)-\(size)-\(Int64(modified * 1_000_000))"
        guard version != knownVersion else { return nil }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SnapshotSourceError("\(path): cannot read the snapshot file")
        }
        return FetchedSnapshot(data: data, version: version)
    }
}

public struct SnapshotSourceError: Error, Sendable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}
