public import Foundation
public import StateStore

/// A local copy of an object store's events, for readers that stream files (`results`): segments are
/// immutable and uniquely named, so a copy is brought up to date by fetching only the names it lacks.
public enum EventMirror {
    /// Copies every segment under `events/v1/` of `store` that `folder` does not hold yet; returns how
    /// many were fetched. Each is written whole (a temporary name, then a rename).
    @discardableResult
    public static func update(_ folder: URL, from store: any ObjectStore) async throws(StateStoreError) -> Int {
        var fetched = 0
        for key in try await store.list(prefix: "events/v1/") where key.hasSuffix(".ndjson") {
            let target = folder.appendingPathComponent(key)
            if FileManager.default.fileExists(atPath: target.path) { continue }
            guard let data = try await store.get(key) else { continue }
            do {
                try AtomicFile.write(Array(data), to: target)
            } catch {
                throw StateStoreError(.unreachable, store: folder.path, "cannot write the local copy of \(key) (\(error.description))")
            }
            fetched += 1
        }
        return fetched
    }
}
