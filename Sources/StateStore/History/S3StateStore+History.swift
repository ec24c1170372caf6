import Basics
import Foundation
import HTTPCore
import HTTPClient

/// An S3 store's history. When the bucket has versioning on, S3 keeps every replaced version and
/// the history is the object's versions (expired by the bucket's own lifecycle rules). Otherwise each
/// write first copies the version it replaces into a ring of `historyLimit` objects beside the
/// document (`production.json` → `production.history/000041.json`, slot = serial mod limit), which
/// stays bounded without needing `s3:DeleteObject`.
extension S3StateStore: StateHistoryKeeping {
    public static let defaultHistoryLimit = 100

    public var historyPrefix: String {
        (key.hasSuffix(".json") ? String(key.dropLast(5)) : key) + ".history/"
    }

    /// Whether the bucket keeps versions itself; a store that will not say (no
    /// `s3:GetBucketVersioning`, or no versioning at all) is taken as not versioned.
    public func bucketKeepsVersions() async throws(StateStoreError) -> Bool {
        let response = try await send(request(method: "GET", key: "", query: "versioning="))
        guard response.status == 200 else { return false }
        return S3ErrorBody.element("Status", in: String(decoding: response.body, as: UTF8.self)) == "Enabled"
    }

    /// Copies the version about to be replaced into the history ring, unless the bucket keeps it.
    func keepReplaced(_ version: StateVersion) async throws(StateStoreError) {
        guard historyLimit > 0, !(try await bucketKeepsVersions()) else { return }
        let current = try await send(request(method: "GET", headers: [("If-Match", version.rawValue)]))
        // Changed or gone since it was read: the conditional write reports the conflict.
        guard current.status == 200 else {
            if [304, 404, 412].contains(current.status) { return }
            throw failure(current)
        }
        let serial = (try? StateDocument.decode(current.body, expecting: nil).document.versionNumber) ?? 0
        let slot = historyPrefix + String(format: "%06d.json", serial % historyLimit)
        let put = try await send(request(method: "PUT", headers: [("Content-Type", "application/json")], body: current.body, key: slot))
        guard (200...299).contains(put.status) else { throw failure(put) }
    }

    public func versions() async throws(StateStoreError) -> [StoredStateVersion] {
        var versions: [StoredStateVersion] = []
        if try await bucketKeepsVersions() {
            let listing = try await send(request(method: "GET", key: "", query: "prefix=\(Self.queryEncoded(key))&versions="))
            guard listing.status == 200 else { throw failure(listing) }
            let text = String(decoding: listing.body, as: UTF8.self)
            for element in Self.elements("Version", in: text) where S3ErrorBody.element("Key", in: element) == key {
                guard let id = S3ErrorBody.element("VersionId", in: element) else { continue }
                let response = try await send(request(method: "GET", query: "versionId=\(Self.queryEncoded(id))"))
                guard response.status == 200 else { throw failure(response) }
                let document = try decodeKept(response.body, at: "\(name)?versionId=\(id)")
                versions.append(StoredStateVersion(number: document.versionNumber, document: document,
                                                   current: S3ErrorBody.element("IsLatest", in: element) == "true"))
            }
        } else {
            let listing = try await send(request(method: "GET", key: "", query: "list-type=2&prefix=\(Self.queryEncoded(historyPrefix))"))
            guard listing.status == 200 else { throw failure(listing) }
            for element in Self.elements("Contents", in: String(decoding: listing.body, as: UTF8.self)) {
                guard let kept = S3ErrorBody.element("Key", in: element), kept.hasSuffix(".json") else { continue }
                let response = try await send(request(method: "GET", key: kept))
                guard response.status == 200 else { throw failure(response) }
                let document = try decodeKept(response.body, at: "s3://\(bucket)/\(kept)")
                versions.append(StoredStateVersion(number: document.versionNumber, document: document, current: false))
            }
            if let document = try await read().document {
                versions.append(StoredStateVersion(number: document.versionNumber, document: document, current: true))
            }
        }
        return versions.sorted { ($0.number, $0.current ? 1 : 0, $0.document.updatedAt?.milliseconds ?? .min)
            < ($1.number, $1.current ? 1 : 0, $1.document.updatedAt?.milliseconds ?? .min) }
    }

    private func decodeKept(_ data: Data, at place: String) throws(StateStoreError) -> StateDocument {
        do {
            return try StateDocument.decode(data, expecting: owner).document
        } catch {
            throw StateStoreError(error, store: place)
        }
    }

    /// The inner text of every `<name>…</name>` in `text`, in order.
    static func elements(_ name: String, in text: String) -> [String] {
        var found: [String] = []
        var rest = text[...]
        while let start = rest.range(of: "<\(name)>"), let end = rest.range(of: "</\(name)>", range: start.upperBound..<rest.endIndex) {
            found.append(String(rest[start.upperBound..<end.lowerBound]))
            rest = rest[end.upperBound...]
        }
        return found
    }

    static func queryEncoded(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}
