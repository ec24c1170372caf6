public import Foundation
import HTTPClient
public import HTTPCore
public import Runtime
public import StateLocations

/// The registry of state backends, and the reads every command shares.
public enum StateStores {
    /// Every backend, one per scheme; a new backend is a `StateLocation.Scheme` case, its grammar in
    /// `StateLocation.syntax`, a `StateBackend` and a line here.
    public static let all: [any StateBackend] = [FileStateBackend(), S3StateBackend()]

    /// The backend that serves a location's scheme.
    public static func backend(for location: StateLocation) -> any StateBackend {
        // Every scheme has exactly one backend (a test checks), so the search always finds it.
        guard let backend = all.first(where: { $0.scheme == location.scheme }) else {
            preconditionFailure("no registered state backend for '\(location.scheme)'")
        }
        return backend
    }

    /// The store of `owner`'s document at `location` (a folder or prefix is expanded to
    /// `<environment>.json`). S3 locations read the AWS variables from `environment` and send
    /// through `transport` (a `CurlHTTPClient` in real runs).
    public static func open(_ location: StateLocation, owner: StateOwner, environment: [String: String],
                            transport: @autoclosure () -> any HTTPTransport) throws(StateStoreError) -> any CompleteStateStore {
        let document = location.document(for: owner.environment)
        return try backend(for: document).stateStore(at: document, owner: owner, environment: environment, transport: transport)
    }

    /// Reads `store`; when it is empty and a runtime snapshot file from before the state store
    /// exists at `legacySnapshotPath`, returns that snapshot migrated into a document, to be written
    /// with `.createOnly`. A legacy file that cannot be read is an error, like the store itself.
    public static func read(_ store: any StateDocumentStore, legacySnapshotPath: String?) async throws(StateStoreError) -> StateRead {
        let read = try await store.read()
        guard read.isEmpty, let legacySnapshotPath, store.location != .file(path: legacySnapshotPath) else { return read }
        guard FileManager.default.fileExists(atPath: legacySnapshotPath) else { return read }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: legacySnapshotPath))
        } catch {
            throw StateStoreError(.io, store: legacySnapshotPath, "cannot read the legacy snapshot file to migrate it: \(error.localizedDescription)")
        }
        do {
            // The file may hold a runtime snapshot, or already a state document (apply writes one at snapshotPath).
            let document = try StateDocument.decode(data, expecting: store.owner).document
            return StateRead(document: document, version: nil, migratedFrom: legacySnapshotPath)
        } catch {
            throw StateStoreError(error, store: legacySnapshotPath)
        }
    }
}

/// What a server answers from: the published snapshot of a store and the version it came from.
public struct PublishedSnapshot: Sendable, Hashable {
    /// nil: the store is reachable and nothing is published yet.
    public var snapshot: RuntimeSnapshot?
    /// The store's version, for `StateStores.pollPublished(_:since:)`; nil when nothing is stored.
    public var version: StateVersion?
}

extension StateStores {
    /// Reads the snapshot a store publishes (for `serve`); errors name the store, never "nothing published".
    public static func readPublished(_ store: any StateDocumentStore) async throws(StateStoreError) -> PublishedSnapshot {
        let read = try await store.read()
        return PublishedSnapshot(snapshot: read.document?.snapshot, version: read.version)
    }

    /// nil while the store still holds `version`; otherwise the snapshot now published.
    public static func pollPublished(_ store: any StateDocumentStore, since version: StateVersion) async throws(StateStoreError) -> PublishedSnapshot? {
        switch try await store.poll(since: version) {
        case .unchanged: return nil
        case .changed(let read): return PublishedSnapshot(snapshot: read.document?.snapshot, version: read.version)
        }
    }
}

extension StateDocument {
    /// The runtime snapshot in bytes that are either a state document or a runtime snapshot file
    /// (what `snapshotPath` held before the state store); nil when a document publishes none.
    public static func publishedSnapshot(in data: Data) throws(StateDocumentError) -> RuntimeSnapshot? {
        try decode(data, expecting: nil).document.snapshot
    }
}
