public import HTTPCore
import HTTPClient
public import StateLocations

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
                    transport: () -> any HTTPTransport) throws(StateStoreError) -> any StateStore
    /// Where other data of the location's App may be written: the folder or prefix itself, or a
    /// document's folder.
    func root(of location: StateLocation) -> StateLocation
}

extension StateBackend {
    public func root(of location: StateLocation) -> StateLocation { location.root }
}

/// A state document in a local file; needs no setup.
public struct FileStateBackend: StateBackend {
    public init() {}
    public var scheme: StateLocation.Scheme { .file }

    public func stateStore(at document: StateLocation, owner: StateOwner, environment: [String: String],
                    transport: () -> any HTTPTransport) throws(StateStoreError) -> any StateStore {
        guard case .file(let path) = document else {
            throw StateStoreError(.configuration, store: document.description, "is not a file location")
        }
        return FileStateStore(path: path, owner: owner)
    }
}

/// A state document in an S3-compatible bucket, reached with the AWS variables.
public struct S3StateBackend: StateBackend {
    public init() {}
    public var scheme: StateLocation.Scheme { .s3 }

    public func stateStore(at document: StateLocation, owner: StateOwner, environment: [String: String],
                    transport: () -> any HTTPTransport) throws(StateStoreError) -> any StateStore {
        guard case .s3(let bucket, let key) = document else {
            throw StateStoreError(.configuration, store: document.description, "is not an s3:// location")
        }
        let configuration = try S3Configuration.fromEnvironment(environment, store: document.description)
        return S3StateStore(bucket: bucket, key: key, owner: owner, configuration: configuration, transport: transport())
    }
}
