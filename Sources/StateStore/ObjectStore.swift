public import Foundation
public import HTTPCore
import StateLocations
import Crypto
import RetentionMessagingModels

/// Plain objects beside the state documents (the event store's segments): written whole, read whole,
/// listed by prefix. Keys are relative to the root the backend was given and use `/`.
public protocol ObjectStore: Sendable {
    /// `/srv/state` or `s3://bucket/prefix`, for messages.
    var location: String { get }
    /// Stores `bytes` under `key`, all or nothing.
    func put(_ key: String, _ bytes: [UInt8]) async throws(StateStoreError)
    /// The object's bytes; nil when there is none.
    func get(_ key: String) async throws(StateStoreError) -> Data?
    /// Every key under `prefix`, in byte order.
    func list(prefix: String) async throws(StateStoreError) -> [String]
    /// Removes the object; removing one that is not there is not an error.
    func delete(_ key: String) async throws(StateStoreError)
}

/// An object store that can also store from a thread of the caller's own (the event recorder's),
/// which must not depend on Swift's concurrency pool. Only that thread needs it; everything else
/// takes an `ObjectStore` and awaits.
public protocol BlockingObjectStore: ObjectStore {
    /// `put`, blocking the calling thread until the store answered.
    @available(*, noasync, message: "blocks the calling thread; from async code, await put(_:_:)")
    func putWaiting(_ key: String, _ bytes: [UInt8]) throws(StateStoreError)
}

/// Objects as files under a folder; a put writes a hidden temporary file, flushes it and renames it.
/// What the event recorder stores from its own thread (`putWaiting`) then leaves the system's page
/// cache: this process never reads a segment back, and a server recording all day would otherwise
/// fill the cache (and its container's memory account) with them.
public struct FolderObjectStore: BlockingObjectStore {
    public let root: URL

    public init(root: URL) {
        self.root = root
    }

    public var location: String { root.path }

    public func put(_ key: String, _ bytes: [UInt8]) async throws(StateStoreError) {
        try write(key, bytes)
    }

    @available(*, noasync, message: "blocks the calling thread; from async code, await put(_:_:)")
    public func putWaiting(_ key: String, _ bytes: [UInt8]) throws(StateStoreError) {
        try write(key, bytes)
    }

    /// A file write: what both `put` and `putWaiting` do, on the caller's thread.
    private func write(_ key: String, _ bytes: [UInt8]) throws(StateStoreError) {
        let url = root.appendingPathComponent(key)
        do {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            // Written from the array's own storage: segments are megabytes, and a copy a flush
            // would be allocated (and its pages zeroed by the system) afresh each time.
            try bytes.withUnsafeBytes { buffer in
                guard let base = buffer.baseAddress else { return try Data().write(to: url, options: .atomic) }
                try Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: base), count: buffer.count, deallocator: .none)
                    .write(to: url, options: .atomic)
            }
        } catch {
            throw StateStoreError(.unreachable, store: url.path, "cannot be written: \(WriteProblem.reason(writing: url, error: error))")
        }
        PageCache.release(url.path)
    }

    public func get(_ key: String) async throws(StateStoreError) -> Data? {
        let url = root.appendingPathComponent(key)
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw StateStoreError(.unreachable, store: url.path, "exists but cannot be read; check its permissions")
        }
        return data
    }

    public func delete(_ key: String) async throws(StateStoreError) {
        let url = root.appendingPathComponent(key)
        guard FileManager.default.fileExists(atPath: url.path) else { return }
        do {
            try FileManager.default.removeItem(at: url)
        } catch {
            throw StateStoreError(.unreachable, store: url.path, "cannot be removed: \(error.localizedDescription)")
        }
    }

    public func list(prefix: String) async throws(StateStoreError) -> [String] {
        let base = root.standardizedFileURL.path
        // Only the folder the prefix names is walked (`facts/v1/…/table-` walks `facts/v1/…`), not the
        // whole root with every event segment in it.
        let folder = prefix.lastIndex(of: "/").map { String(prefix[...$0]) } ?? ""
        guard let walker = FileManager.default.enumerator(atPath: base + "/" + folder) else { return [] }
        var keys: [String] = []
        while let inside = walker.nextObject() as? String {
            let relative = folder + inside
            guard relative.hasPrefix(prefix), !(relative as NSString).lastPathComponent.hasPrefix(".") else { continue }
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: base + "/" + relative, isDirectory: &isFolder), !isFolder.boolValue {
                keys.append(relative)
            }
        }
        return keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }
}

/// Objects under an S3 prefix, signed with SigV4 by libcurl; lists with ListObjectsV2, 1,000 keys a call.
public struct S3ObjectStore: BlockingObjectStore {
    public let bucket: String
    public let prefix: String
    public let configuration: S3Configuration
    private let transport: any HTTPTransport

    public init(bucket: String, prefix: String, configuration: S3Configuration, transport: any HTTPTransport) {
        self.bucket = bucket
        var trimmed = prefix
        while trimmed.hasSuffix("/") { trimmed.removeLast() }
        self.prefix = trimmed
        self.configuration = configuration
        self.transport = transport
    }

    public var location: String { prefix.isEmpty ? "s3://\(bucket)" : "s3://\(bucket)/\(prefix)" }

    private func fullKey(_ key: String) -> String {
        prefix.isEmpty ? key : prefix + "/" + key
    }

    private var s3: S3Bucket {
        S3Bucket(bucket: bucket, configuration: configuration, transport: transport, store: location)
    }

    public func put(_ key: String, _ bytes: [UInt8]) async throws(StateStoreError) {
        let response = try await s3.send(putRequest(key, bytes))
        guard response.status == 200 else { throw s3.failure(response) }
    }

    @available(*, noasync, message: "blocks the calling thread; from async code, await put(_:_:)")
    public func putWaiting(_ key: String, _ bytes: [UInt8]) throws(StateStoreError) {
        let response = try s3.sendWaiting(putRequest(key, bytes))
        guard response.status == 200 else { throw s3.failure(response) }
    }

    private func putRequest(_ key: String, _ bytes: [UInt8]) -> HTTPRequest {
        s3.request(method: "PUT", headers: [("Content-Type", "application/x-ndjson")], body: Data(bytes), key: fullKey(key))
    }

    public func get(_ key: String) async throws(StateStoreError) -> Data? {
        let response = try await s3.send(s3.request(method: "GET", key: fullKey(key)))
        if response.status == 404 { return nil }
        guard response.status == 200 else { throw s3.failure(response) }
        return response.body
    }

    public func list(prefix relative: String) async throws(StateStoreError) -> [String] {
        try await list(prefix: relative, pageSize: 1000)
    }

    public func delete(_ key: String) async throws(StateStoreError) {
        let response = try await s3.send(s3.request(method: "DELETE", key: fullKey(key)))
        // S3 answers 204 whether or not the object was there.
        guard response.status == 204 || response.status == 200 || response.status == 404 else { throw s3.failure(response) }
    }

    /// `pageSize` below S3's 1,000 only to exercise paging in tests.
    public func list(prefix relative: String, pageSize: Int) async throws(StateStoreError) -> [String] {
        let store = s3
        let base = prefix.isEmpty ? "" : prefix + "/"
        var keys: [String] = []
        // Pages follow with `start-after` the last key rather than the opaque continuation token:
        // keys have the layout's plain characters, which sign the same everywhere.
        var startAfter: String?
        while true {
            // In the byte order of the names: SigV4 signs the query sorted, and libcurl signs it as written.
            var query = "list-type=2"
            if pageSize < 1000 { query += "&max-keys=\(pageSize)" }
            query += "&prefix=\(S3StateStore.queryEncoded(base + relative))"
            if let startAfter { query += "&start-after=\(S3StateStore.queryEncoded(startAfter))" }
            let response = try await store.send(store.request(method: "GET", key: "", query: query))
            guard response.status == 200 else { throw store.failure(response) }
            let text = String(decoding: response.body, as: UTF8.self)
            var last: String?
            for element in S3StateStore.elements("Contents", in: text) {
                guard let key = S3ErrorBody.element("Key", in: element) else { continue }
                last = key
                if key.hasPrefix(base) { keys.append(String(key.dropFirst(base.count))) }
            }
            guard S3ErrorBody.element("IsTruncated", in: text) == "true", let last else { break }
            startAfter = last
        }
        return keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }
}
