import Foundation
public import StateLocations

/// A place that keeps one environment's state document and lets writers take turns.
///
/// Reads never guess: a store that answers is either empty (reachable, nothing written yet) or
/// holds a document that parses, matches its digest and belongs to `owner`; anything else throws.
/// Writes are conditional, so a writer that read an older version loses instead of overwriting.
public protocol StateDocumentStore: Sendable {
    /// The document's own location (never a folder or prefix).
    var location: StateLocation { get }
    var owner: StateOwner { get }

    func read() async throws(StateStoreError) -> StateRead
    /// A cheap check for servers: `.unchanged` while the stored version is still `version`.
    func poll(since version: StateVersion) async throws(StateStoreError) -> StatePoll
    /// Seals and writes `document` when `condition` holds; returns the new version.
    /// Throws `.conflict` when someone else wrote (or created) the document first.
    func write(_ document: StateDocument, condition: StateWriteCondition) async throws(StateStoreError) -> StateVersion
}

/// An opaque version of a stored document: an S3 ETag, or the SHA-256 of a file's bytes.
public struct StateVersion: Sendable, Hashable, Codable, CustomStringConvertible {
    public var rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }
}

/// What a read found.
public struct StateRead: Sendable, Hashable {
    /// nil: the store is reachable and holds nothing yet (a first publish).
    public var document: StateDocument?
    /// The version to write over; nil when nothing is stored yet.
    public var version: StateVersion?
    /// Set when the document was migrated from a runtime snapshot file (`snapshotPath` before the
    /// state store): where that file was.
    public var migratedFrom: String?

    public init(document: StateDocument?, version: StateVersion?, migratedFrom: String? = nil) {
        self.document = document
        self.version = version
        self.migratedFrom = migratedFrom
    }

    public static let empty = StateRead(document: nil, version: nil)

    public var isEmpty: Bool { document == nil }

    /// The condition a writer that starts from this read must use.
    public var writeCondition: StateWriteCondition { version.map { .ifMatch($0) } ?? .createOnly }
}

public enum StatePoll: Sendable, Hashable {
    case unchanged
    case changed(StateRead)
}

public enum StateWriteCondition: Sendable, Hashable {
    /// Only when nothing is stored yet (S3 `If-None-Match: *`).
    case createOnly
    /// Only when the stored version is still this one (S3 `If-Match`).
    case ifMatch(StateVersion)
}

/// Why a store could not be read or written. `store` names it; `description` says what to do.
public struct StateStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable, Equatable {
        /// Network: could not connect, timed out, connection dropped, TLS.
        case unreachable
        /// Missing, invalid or expired credentials, or a signature the store refuses.
        case credentials
        /// The credentials are valid but may not do this (a bucket policy, file permissions).
        case accessDenied
        /// The bucket does not exist.
        case noSuchBucket
        /// The store answered 5xx.
        case serverError
        /// Any other answer the store should not give.
        case unexpectedResponse
        /// The stored bytes are not a state document.
        case corrupt
        case unsupportedFormatVersion
        case digestMismatch
        /// The document belongs to another App or environment.
        case wrongOwner
        /// Someone else wrote first: re-read, re-plan, and try again.
        case conflict
        /// The environment or the location is not usable (missing AWS variables, a bad endpoint).
        case configuration
        /// A local file operation failed.
        case io
    }

    public var kind: Kind
    public var store: String
    public var message: String

    public init(_ kind: Kind, store: String, _ message: String) {
        self.kind = kind
        self.store = store
        self.message = message
    }

    init(_ error: StateDocumentError, store: String) {
        switch error {
        case .corrupt: self.init(.corrupt, store: store, error.description)
        case .unsupportedFormatVersion: self.init(.unsupportedFormatVersion, store: store, error.description)
        case .digestMismatch: self.init(.digestMismatch, store: store, error.description)
        case .wrongOwner: self.init(.wrongOwner, store: store, error.description)
        }
    }

    public var description: String { "state store \(store): \(message)" }
}
