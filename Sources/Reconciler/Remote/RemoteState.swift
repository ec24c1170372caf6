public import Foundation
public import RetentionMessaging
public import RetentionMessagingModels
public import Runtime
public import StateStore
#if canImport(Glibc)
import Glibc
#endif

/// What one environment holds, read with the fewest calls: the two list calls, one
/// `GET /default` per declared pair, the realtime URL, and the published snapshot from its store.
public struct RemoteState: Encodable, Sendable, Hashable {
    public var environment: Environment
    /// Message identifier → review state.
    public var messages: [String: MessageState]
    /// Image identifier → review state and size.
    public var images: [String: RemoteImage]
    /// Pair → the configured default message identifier (absent: no default).
    public var defaults: [ProductLocale: String]
    public var realtimeURL: String?
    /// The snapshot currently in the store, if any.
    public var publishedSnapshot: RuntimeSnapshot?
    /// How many API calls reading this state took, retries not counted: a transient failure
    /// during the reads must not change the plan's bytes.
    public var apiCalls: Int
    /// What the state store held (nil: the environment has no store). Not part of the fingerprint
    /// beyond the published snapshot's digest.
    public var state: StateRead?
    /// The store's name, for messages.
    public var stateStoreName: String?
    /// Default pairs taken from the record instead of read (`--refresh-defaults`).
    public var defaultsTrusted: Int = 0
    /// The refresh cursor the next apply records.
    public var nextRefreshCursor: Int?

    /// A reachable store that holds nothing yet: the next apply is a first publish.
    public var isFirstPublish: Bool { state?.isEmpty == true }

    public init(environment: Environment, messages: [String: MessageState] = [:], images: [String: RemoteImage] = [:],
                defaults: [ProductLocale: String] = [:], realtimeURL: String? = nil,
                publishedSnapshot: RuntimeSnapshot? = nil, apiCalls: Int = 0) {
        self.environment = environment
        self.messages = messages
        self.images = images
        self.defaults = defaults
        self.realtimeURL = realtimeURL
        self.publishedSnapshot = publishedSnapshot
        self.apiCalls = apiCalls
    }

    // Encoded only for the fingerprint: each content kind's lists under `<kind>s`, the snapshot by
    // its digest, defaults keyed `product/locale`.
    enum CodingKeys: String, CodingKey {
        case environment, defaults, realtimeURL, publishedSnapshot
    }

    public func encode(to encoder: any Encoder) throws {
        var content = encoder.container(keyedBy: ContentKindKey.self)
        for resource in RemoteResources.content {
            try content.encode(resource.fingerprinted(self), forKey: ContentKindKey(resource.contentKind))
        }
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(environment, forKey: .environment)
        try container.encode(Dictionary(uniqueKeysWithValues: defaults.map { ($0.key.description, $0.value) }), forKey: .defaults)
        try container.encodeIfPresent(realtimeURL, forKey: .realtimeURL)
        try container.encodeIfPresent(publishedSnapshot?.digest, forKey: .publishedSnapshot)
    }

    /// `sha256:<hex>` over the canonical JSON of what was read (the snapshot by its digest).
    public func fingerprint() throws -> String {
        "sha256:" + Hashing.sha256Hex(try CanonicalJSON.encode(self))
    }
}

public struct RemoteImage: Codable, Sendable, Hashable {
    public var state: ImageState
    public var size: ImageSize?

    public init(state: ImageState, size: ImageSize?) {
        self.state = state
        self.size = size
    }
}

/// Reads `RemoteState` through the API.
public enum RemoteStateReader {
    /// Reads the state store first (a store that cannot be read stops the plan before any call to
    /// Apple), then the lists, the defaults `DefaultsReadPlan` picks, and the realtime URL.
    /// `alsoRead`: pairs outside the declared ones whose defaults are read too (what a prune must
    /// see), only for what is in use; no action is planned for them.
    /// `planned` hears how many defaults will be read, once the state said which it vouches for and
    /// before the first call to Apple: a long read is announced with its cost up front.
    public static func read(_ api: any RetentionMessagingAPI, desired: DesiredState, state binding: StateBinding?,
                            refresh: DefaultsRefresh = .standard, alsoRead: Set<ProductLocale> = [],
                            planned: (@Sendable (_ defaults: Int) -> Void)? = nil) async throws -> RemoteState {
        let stored = try await binding?.read()
        let readPlan = DefaultsReadPlan.make(desired: desired, document: stored?.document, refresh: refresh)
        let pairs = readPlan.read + alsoRead.subtracting(desired.declaredPairs)
        planned?(pairs.count)
        var state = try await read(api, pairs: pairs)
        for (pair, identifier) in readPlan.trusted {
            if let identifier { state.defaults[pair] = identifier }
        }
        state.defaultsTrusted = readPlan.trusted.count
        state.nextRefreshCursor = readPlan.nextCursor
        state.state = stored
        state.stateStoreName = binding?.name
        state.publishedSnapshot = stored?.document?.snapshot
        return state
    }

    /// Reads every registered resource's remote value: the lists, one default per given pair and
    /// the realtime URL. A resource reads its own; nothing is read by hand here.
    public static func read(_ api: any RetentionMessagingAPI, pairs: [ProductLocale]) async throws -> RemoteState {
        func calls() -> Int { api.requestCounts.total - api.requestCounts.retries }
        let before = calls()
        var state = RemoteState(environment: api.environment)
        for resource in RemoteResources.all { try await resource.read(api, pairs: pairs, into: &state) }
        state.apiCalls = calls() - before
        return state
    }

    /// The list call of every content kind, in the kinds' declared order; apply uses them alone to
    /// learn the review states after uploading.
    public static func readLists(_ api: any RetentionMessagingAPI, into state: inout RemoteState) async throws {
        for kind in ContentKind.allCases { try await RemoteResources.resource(of: kind).list(api, into: &state) }
    }
}

/// The file the published runtime snapshot lives in. Writes are atomic (temporary file, then
/// rename), so a reader never sees half a snapshot and two racing writers leave one whole file.
public struct SnapshotStore: Sendable, Hashable {
    public var url: URL

    public init(url: URL) { self.url = url }

    /// The published snapshot, or nil when none was published yet; the file may hold a runtime
    /// snapshot or a state document.
    public func read() throws(ReconcilerError) -> RuntimeSnapshot? {
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        do {
            return try StateDocument.publishedSnapshot(in: try Data(contentsOf: url))
        } catch {
            throw .snapshotStore(path: url.path, message: "cannot read the published snapshot: \(error)")
        }
    }

    public func write(_ snapshot: RuntimeSnapshot) throws(ReconcilerError) {
        do {
            let data = try snapshot.encoded()
            let directory = url.deletingLastPathComponent()
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let temporary = directory.appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).tmp")
            try data.write(to: temporary)
            if rename(temporary.path, url.path) != 0 {
                let reason = String(cString: strerror(errno))
                try? FileManager.default.removeItem(at: temporary)
                throw ReconcilerError.snapshotStore(path: url.path, message: "cannot replace the snapshot: \(reason)")
            }
        } catch let error as ReconcilerError {
            throw error
        } catch {
            throw .snapshotStore(path: url.path, message: "cannot write the snapshot: \(error)")
        }
    }
}
