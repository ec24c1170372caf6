public import Foundation
public import HTTPCore
import HTTPClient
public import StateLocations

/// What every registered backend's store can do: the document with conditional writes, the versions
/// it kept (`state history`), and small documents beside it (the notification ledger). Each is a
/// requirement, as Terraform's `statemgr.Full`, so no caller asks a store what it can do.
public typealias CompleteStateStore = StateHistoryKeeping & StateSideDocuments

/// One kind of place state lives, registered once in `StateBackends.all` by the scheme it serves.
///
/// A backend is asked for the state store of one environment, and for the root under which other
/// data of the same App may be written beside the documents (an event store's `events/`), so later
/// stores plug in by asking the same backend rather than switching on the location again.
public protocol StateBackend: Sendable {
    var scheme: StateLocation.Scheme { get }
    /// The store of `owner`'s document at `document` (never a folder or prefix). A network store reads
    /// its settings from the process `environment` and calls `transport` for its HTTP client.
    func stateStore(at document: StateLocation, owner: StateOwner, environment: [String: String],
                    transport: () -> any HTTPTransport) throws(StateStoreError) -> any CompleteStateStore
    /// Where other data of the location's App may be written: the folder or prefix itself, or a
    /// document's folder.
    func root(of location: StateLocation) -> StateLocation
    /// Plain objects under `root` (the folder or prefix the state lives in): the event store's segments.
    func objectStore(at root: StateLocation, environment: [String: String],
                     transport: () -> any HTTPTransport) throws(StateStoreError) -> any BlockingObjectStore
    /// The folder on this machine that holds `root`'s objects, when the backend keeps them in one;
    /// nil when they must be copied down first (a bucket).
    func localFolder(of root: StateLocation) -> URL?
}

extension StateBackend {
    public func root(of location: StateLocation) -> StateLocation { location.root }
}

/// A state document in a local file; needs no setup.
public struct FileStateBackend: StateBackend {
    public init() {}
    public var scheme: StateLocation.Scheme { .file }

    public func stateStore(at document: StateLocation, owner: StateOwner, environment: [String: String],
                    transport: () -> any HTTPTransport) throws(StateStoreError) -> any CompleteStateStore {
        guard case .file(let path) = document else {
            throw StateStoreError(.configuration, store: document.description, "is not a file location")
        }
        return FileStateStore(path: path, owner: owner)
    }

    public func objectStore(at root: StateLocation, environment: [String: String],
                            transport: () -> any HTTPTransport) throws(StateStoreError) -> any BlockingObjectStore {
        guard let folder = localFolder(of: root) else {
            throw StateStoreError(.configuration, store: root.description, "is not a file location")
        }
        return FolderObjectStore(root: folder)
    }

    public func localFolder(of root: StateLocation) -> URL? {
        guard case .file(let path) = root else { return nil }
        return URL(fileURLWithPath: path, isDirectory: true)
    }
}

/// A state document in an S3-compatible bucket, reached with the AWS variables.
public struct S3StateBackend: StateBackend {
    public init() {}
    public var scheme: StateLocation.Scheme { .s3 }

    public func stateStore(at document: StateLocation, owner: StateOwner, environment: [String: String],
                    transport: () -> any HTTPTransport) throws(StateStoreError) -> any CompleteStateStore {
        guard case .s3(let bucket, let key) = document else {
            throw StateStoreError(.configuration, store: document.description, "is not an s3:// location")
        }
        let client = transport()
        let configuration = try S3Configuration.fromEnvironment(environment, store: document.description, transport: client)
        return S3StateStore(bucket: bucket, key: key, owner: owner, configuration: configuration, transport: client)
    }

    public func objectStore(at root: StateLocation, environment: [String: String],
                            transport: () -> any HTTPTransport) throws(StateStoreError) -> any BlockingObjectStore {
        guard case .s3(let bucket, let key) = root else {
            throw StateStoreError(.configuration, store: root.description, "is not an s3:// location")
        }
        let client = transport()
        let configuration = try S3Configuration.fromEnvironment(environment, store: root.description, transport: client)
        return S3ObjectStore(bucket: bucket, prefix: key, configuration: configuration, transport: client)
    }

    /// Objects in a bucket are copied down before they are read.
    public func localFolder(of root: StateLocation) -> URL? { nil }
}
