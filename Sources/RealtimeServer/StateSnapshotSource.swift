import Basics
import Foundation
public import HTTPCore
import Runtime
public import StateLocations
public import StateStore

/// The published snapshot inside an environment's state document, in a file or an S3-compatible
/// store — the same document `plan` and `apply` read and write, so a publish reaches every
/// replica at its next poll.
///
/// Polling is cheap: S3 answers a conditional GET (`If-None-Match` on the ETag) with 304, a file
/// store compares its version before reading. A store that cannot be read, or that holds no
/// published snapshot yet, throws: `serve` keeps the snapshot it has and says so.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
public struct StateSnapshotSource: SnapshotSource {
    public let store: any StateDocumentStore

    public init(store: any StateDocumentStore) {
        self.store = store
    }

    /// Opens the store at `location` for `owner` (S3 reads the AWS variables from `environment`).
    public init(location: StateLocation, owner: StateOwner, environment: [String: String],
                transport: @autoclosure () -> any HTTPTransport) throws(StateStoreError) {
        store = try StateStores.open(location, owner: owner, environment: environment, transport: transport())
    }

    public var location: String { store.location.description }

    public func fetch(knownVersion: String?) throws -> FetchedSnapshot? {
        let store = self.store
        // Called from serve's polling thread: the store's async calls run on that thread.
        let outcome: Result<StateRead?, StateStoreError> = CurrentThreadExecutor.run {
            do throws(StateStoreError) {
                if let knownVersion {
                    switch try await store.poll(since: StateVersion(knownVersion)) {
                    case .unchanged: return .success(nil)
                    case .changed(let read): return .success(read)
                    }
                }
                return .success(try await store.read())
            } catch {
                return .failure(error)
            }
        }
        guard let read = try outcome.get() else { return nil }
        guard let document = read.document, let version = read.version else {
            throw SnapshotSourceError("\(location): the state store is empty; publish a snapshot with `retention-sync apply`")
        }
        guard let snapshot = document.snapshot else {
            throw SnapshotSourceError("\(location): no snapshot is published in this state yet; publish one with `retention-sync apply`")
        }
        do {
            return FetchedSnapshot(data: try snapshot.encoded(), version: version.rawValue)
        } catch {
            throw SnapshotSourceError("\(location): the published snapshot cannot be encoded: \(error)")
        }
    }
}
