public import Foundation
public import StateStore

/// A local copy of an object store's events, for readers that stream files (`results`): segments are
/// immutable and uniquely named, so a copy is brought up to date by fetching only the names it lacks,
/// and by removing the ones the store no longer has (compacted into one, or rewritten by an erasure —
/// an erased customer must not live on in a copy).
public enum EventMirror {
    /// Copies every segment under `events/v1/` of `store` that `folder` does not hold yet, and removes
    /// the copies of segments the store no longer holds; returns how many were fetched. Each is written
    /// whole (a temporary name, then a rename).
    @discardableResult
    public static func update(_ folder: URL, from store: any ObjectStore) async throws(StateStoreError) -> Int {
        var fetched = 0
        let keys = try await store.list(prefix: "events/v1/").filter { $0.hasSuffix(".ndjson") }
        removeStale(folder, keeping: Set(keys))
        for key in keys {
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

    /// Removes every copied segment under `folder`'s `events/v1/` whose key is not in `keys`.
    static func removeStale(_ folder: URL, keeping keys: Set<String>) {
        let base = folder.appendingPathComponent("events/v1")
        guard let walker = FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil) else { return }
        let root = folder.standardizedFileURL.path + "/"
        for case let file as URL in walker where file.pathExtension == "ndjson" {
            let path = file.standardizedFileURL.path
            guard path.hasPrefix(root) else { continue }
            if !keys.contains(String(path.dropFirst(root.count))) { try? FileManager.default.removeItem(at: file) }
        }
    }
}
