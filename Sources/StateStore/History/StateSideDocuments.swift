public import Foundation
import HTTPCore
import HTTPClient

/// Small documents that live beside the state document, in the same folder or prefix and under the
/// same credentials: `production.json` → `production.<suffix>` (the notification ledger is
/// `production.notifications.json`). Their owners define their content; the store only moves bytes.
public protocol StateSideDocuments: StateDocumentStore {
    /// Where the side document lives, for messages.
    func sideLocation(_ suffix: String) -> String
    /// The bytes, or nil when there are none yet.
    func readSide(_ suffix: String) async throws(StateStoreError) -> Data?
    func writeSide(_ suffix: String, _ data: Data) async throws(StateStoreError)
}

func sideName(of document: String, _ suffix: String) -> String {
    (document.hasSuffix(".json") ? String(document.dropLast(5)) : document) + "." + suffix
}

extension FileStateStore: StateSideDocuments {
    public func sideLocation(_ suffix: String) -> String { sideName(of: path, suffix) }

    public func readSide(_ suffix: String) async throws(StateStoreError) -> Data? {
        let side = sideLocation(suffix)
        guard FileManager.default.fileExists(atPath: side) else { return nil }
        do {
            return try Data(contentsOf: URL(fileURLWithPath: side))
        } catch {
            throw StateStoreError(.io, store: side, "cannot read it: \(error.localizedDescription)")
        }
    }

    public func writeSide(_ suffix: String, _ data: Data) async throws(StateStoreError) {
        let side = sideLocation(suffix)
        let temporary = (side as NSString).deletingLastPathComponent + "/." + (side as NSString).lastPathComponent + "." + UUID().uuidString + ".tmp"
        do {
            try FileManager.default.createDirectory(atPath: (side as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try data.write(to: URL(fileURLWithPath: temporary))
        } catch {
            throw StateStoreError(.io, store: side, "cannot write it: \(error.localizedDescription)")
        }
        guard rename(temporary, side) == 0 else {
            unlink(temporary)
            throw StateStoreError(.io, store: side, "cannot replace it: \(String(cString: strerror(errno)))")
        }
    }
}

extension S3StateStore: StateSideDocuments {
    public func sideLocation(_ suffix: String) -> String { "s3://\(bucket)/\(sideName(of: key, suffix))" }

    public func readSide(_ suffix: String) async throws(StateStoreError) -> Data? {
        let response = try await send(request(method: "GET", key: sideName(of: key, suffix)))
        switch response.status {
        case 200: return response.body
        case 404 where S3ErrorBody(response.body).code == "NoSuchKey": return nil
        default: throw failure(response)
        }
    }

    public func writeSide(_ suffix: String, _ data: Data) async throws(StateStoreError) {
        let response = try await send(request(method: "PUT", headers: [("Content-Type", "application/json")], body: data,
                                              key: sideName(of: key, suffix)))
        guard (200...299).contains(response.status) else { throw failure(response) }
    }
}
