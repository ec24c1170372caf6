import Foundation
import StateLocations
public import StateStore

/// The state store of one environment as plan, apply and status use it.
public struct StateBinding: Sendable {
    public var store: any CompleteStateStore
    /// A runtime snapshot file from before the state store (`snapshotPath`), migrated on first read.
    public var legacySnapshotPath: String?
    /// Recorded in each version this binding writes (`written_by`), with the next `serial`; nil writes neither.
    public var writer: StateWriter?

    public init(store: any CompleteStateStore, legacySnapshotPath: String? = nil, writer: StateWriter? = nil) {
        self.store = store
        self.legacySnapshotPath = legacySnapshotPath
        self.writer = writer
    }

    public var name: String { store.location.description }

    public func read() async throws(StateStoreError) -> StateRead {
        try await StateStores.read(store, legacySnapshotPath: legacySnapshotPath)
    }
}

/// How many default pairs whose recorded last-applied assignment equals the desired one a plan
/// still reads from Apple (`--refresh-defaults`). Pairs without a record are always read.
public enum DefaultsRefresh: Sendable, Hashable, CustomStringConvertible {
    /// A rotating window of this many recorded pairs; apply advances the window.
    case window(Int)
    case all

    /// 10 per run: the 780 pairs of a 20-product, 39-locale App are all re-read within 78 applies.
    public static let standard = DefaultsRefresh.window(10)

    public var description: String {
        switch self {
        case .window(let count): "\(count)"
        case .all: "all"
        }
    }
}

/// Which pairs a plan reads, and which it takes from the record.
public struct DefaultsReadPlan: Sendable, Hashable {
    /// Read from Apple.
    public var read: [ProductLocale]
    /// Taken from the record: pair → recorded identifier (absent value: recorded as cleared).
    public var trusted: [ProductLocale: String?]
    /// The cursor the next apply records so the following plan reads the next window.
    public var nextCursor: Int?

    /// Pairs whose desired assignment equals the recorded one are trusted, except a rotating
    /// window of them starting at the document's cursor.
    public static func make(desired: DesiredState, document: StateDocument?, refresh: DefaultsRefresh) -> DefaultsReadPlan {
        let pairs = desired.declaredPairs.sorted()
        guard let document, case .window(let size) = refresh else {
            return DefaultsReadPlan(read: pairs, trusted: [:], nextCursor: nil)
        }
        let wanted = Dictionary(desired.defaults.map { (ProductLocale(productId: $0.productId, locale: $0.locale), $0.messageIdentifier) },
                                uniquingKeysWith: { first, _ in first })
        var recorded: [ProductLocale] = []
        var read: [ProductLocale] = []
        for pair in pairs {
            if let record = document.lastAppliedDefault(productId: pair.productId, locale: pair.locale),
               record.messageIdentifier == wanted[pair] {
                recorded.append(pair)
            } else {
                read.append(pair)
            }
        }
        guard !recorded.isEmpty else { return DefaultsReadPlan(read: read, trusted: [:], nextCursor: nil) }
        let start = max(0, document.defaultsRefreshCursor ?? 0) % recorded.count
        let count = min(max(0, size), recorded.count)
        let window = Set((0..<count).map { recorded[(start + $0) % recorded.count] })
        var trusted: [ProductLocale: String?] = [:]
        for pair in recorded where !window.contains(pair) {
            trusted[pair] = .some(document.lastAppliedDefault(productId: pair.productId, locale: pair.locale)?.messageIdentifier)
        }
        return DefaultsReadPlan(read: (read + window).sorted(), trusted: trusted, nextCursor: (start + count) % recorded.count)
    }
}
