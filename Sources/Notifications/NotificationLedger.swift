public import Foundation
public import Basics
public import StateStore

/// Which events were already told, kept beside the state document so that every run — a laptop, a
/// CI job, a scheduled reconcile — shares it: a rejection is told once, not once an hour.
public protocol NotificationLedger: Sendable {
    /// Where the ledger lives, for messages.
    var name: String { get }
    /// The stored ledger, or an empty one when nothing is stored yet.
    func load() async throws(NotificationLedgerError) -> NotificationLedgerDocument
    func save(_ document: NotificationLedgerDocument) async throws(NotificationLedgerError)
}

/// The ledger as stored: `{"format_version": "1.0", "sent": {"<event key>": "<first sent at>"}}`,
/// keys sorted. Entries older than `retentionDays` are dropped when it is saved, which keeps it small;
/// a condition still true after that long is told again, once.
public struct NotificationLedgerDocument: Codable, Sendable, Hashable {
    public static let currentFormatVersion = "1.0"
    public static let retentionDays = 180

    public var formatVersion: String
    public var sent: [String: UTCTime]

    public init(sent: [String: UTCTime] = [:]) {
        formatVersion = Self.currentFormatVersion
        self.sent = sent
    }

    public func contains(_ key: String) -> Bool { sent[key] != nil }

    public mutating func record(_ key: String, at time: UTCTime) {
        if sent[key] == nil { sent[key] = time }
    }

    /// Drops what was sent more than `retentionDays` before `now`.
    public mutating func expire(now: UTCTime) {
        let horizon = now - Int64(Self.retentionDays) * UTCTime.day
        sent = sent.filter { $0.value >= horizon }
    }

    public func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted]
        encoder.dateEncodingStrategy = .utcMilliseconds
        return try encoder.encode(self) + Data("\n".utf8)
    }

    public static func decode(_ data: Data) throws -> NotificationLedgerDocument {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .utcMilliseconds
        let document = try decoder.decode(NotificationLedgerDocument.self, from: data)
        guard document.formatVersion.hasPrefix("1.") else {
            throw NotificationLedgerError("format_version \(document.formatVersion) is newer than this retention-sync reads (1.x)")
        }
        return document
    }

    enum CodingKeys: String, CodingKey { case formatVersion = "format_version", sent }
}

public struct NotificationLedgerError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// A ledger in a local file, `<state name>.notifications.json` beside the state document.
/// Written to a temporary file and renamed, so a reader never sees half of it.
public struct FileNotificationLedger: NotificationLedger {
    public let path: String

    public init(path: String) {
        self.path = path
    }

    /// The ledger that belongs to the state document at `statePath` (`production.json` →
    /// `production.notifications.json`).
    public init(besideStateDocument statePath: String) {
        let base = statePath.hasSuffix(".json") ? String(statePath.dropLast(5)) : statePath
        self.init(path: base + ".notifications.json")
    }

    public var name: String { path }

    public func load() async throws(NotificationLedgerError) -> NotificationLedgerDocument {
        guard FileManager.default.fileExists(atPath: path) else { return NotificationLedgerDocument() }
        do {
            return try NotificationLedgerDocument.decode(try Data(contentsOf: URL(fileURLWithPath: path)))
        } catch let error as NotificationLedgerError {
            throw NotificationLedgerError("\(path): \(error.message); delete the file to start a new ledger")
        } catch {
            throw NotificationLedgerError("\(path) is not a notification ledger; delete the file to start a new ledger")
        }
    }

    public func save(_ document: NotificationLedgerDocument) async throws(NotificationLedgerError) {
        let directory = (path as NSString).deletingLastPathComponent
        let temporary = (directory as NSString).appendingPathComponent(".\((path as NSString).lastPathComponent).\(UUID().uuidString).tmp")
        do {
            try FileManager.default.createDirectory(atPath: directory.isEmpty ? "." : directory, withIntermediateDirectories: true)
            try document.encoded().write(to: URL(fileURLWithPath: temporary))
            guard rename(temporary, path) == 0 else {
                throw NotificationLedgerError("cannot replace \(path): \(String(cString: strerror(errno)))")
            }
        } catch let error as NotificationLedgerError {
            try? FileManager.default.removeItem(atPath: temporary)
            throw error
        } catch {
            try? FileManager.default.removeItem(atPath: temporary)
            throw NotificationLedgerError("cannot write \(path): \(error.localizedDescription)")
        }
    }
}

/// The ledger as a side document of any state store that keeps them (a file store's folder, an S3
/// prefix): `<state name>.notifications.json`, under the state's own credentials.
public struct StateStoreNotificationLedger: NotificationLedger {
    public static let suffix = "notifications.json"
    public let store: any StateSideDocuments

    public init(store: any StateSideDocuments) {
        self.store = store
    }

    public var name: String { store.sideLocation(Self.suffix) }

    public func load() async throws(NotificationLedgerError) -> NotificationLedgerDocument {
        let data: Data?
        do {
            data = try await store.readSide(Self.suffix)
        } catch {
            throw NotificationLedgerError(error.description)
        }
        guard let data else { return NotificationLedgerDocument() }
        do {
            return try NotificationLedgerDocument.decode(data)
        } catch let error as NotificationLedgerError {
            throw NotificationLedgerError("\(name): \(error.message); delete it to start a new ledger")
        } catch {
            throw NotificationLedgerError("\(name) is not a notification ledger; delete it to start a new ledger")
        }
    }

    public func save(_ document: NotificationLedgerDocument) async throws(NotificationLedgerError) {
        do {
            try await store.writeSide(Self.suffix, try document.encoded())
        } catch let error as StateStoreError {
            throw NotificationLedgerError(error.description)
        } catch {
            throw NotificationLedgerError("cannot encode the ledger: \(error)")
        }
    }
}
