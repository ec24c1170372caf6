public import Basics
import Foundation

/// A store that keeps the versions its writes replaced, so `state history` can list them and
/// `state show --version N` print one: the audit trail of which snapshot served when.
public protocol StateHistoryKeeping: StateDocumentStore {
    /// How many replaced versions the store keeps; older ones are dropped.
    var historyLimit: Int { get set }
    /// Every version kept, the current one last; oldest first.
    func versions() async throws(StateStoreError) -> [StoredStateVersion]
}

/// One kept version of the state document.
public struct StoredStateVersion: Sendable, Hashable {
    /// The document's `serial` (0 for a document written before serials existed).
    public var number: Int
    public var document: StateDocument
    /// Whether this is the document the store holds now.
    public var current: Bool

    public init(number: Int, document: StateDocument, current: Bool) {
        self.number = number
        self.document = document
        self.current = current
    }
}

/// One line of `state history`.
public struct StateHistoryEntry: Sendable, Hashable {
    public var number: Int
    public var writtenAt: UTCTime?
    public var writer: StateWriter?
    public var digest: String
    public var summary: String
    public var current: Bool

    /// The entries of `versions` (oldest first), each summed up against the one before it.
    public static func entries(_ versions: [StoredStateVersion]) -> [StateHistoryEntry] {
        var previous: StateDocument?
        var entries: [StateHistoryEntry] = []
        for version in versions {
            entries.append(StateHistoryEntry(number: version.number, writtenAt: version.document.updatedAt,
                                             writer: version.document.writtenBy, digest: version.document.digest,
                                             summary: StateChangeSummary.line(from: previous, to: version.document),
                                             current: version.current))
            previous = version.document
        }
        return entries
    }
}

extension StateDocument {
    /// The version number `state history` shows.
    var versionNumber: Int { serial ?? 0 }
}
