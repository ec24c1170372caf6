public import Foundation
public import RetentionMessaging
public import RetentionMessagingModels

/// The reconciler for one environment: reads the remote state, plans, applies.
public struct Reconciler: Sendable {
    public var api: any RetentionMessagingAPI
    public var store: SnapshotStore?

    public init(api: any RetentionMessagingAPI, store: SnapshotStore?) {
        self.api = api
        self.store = store
    }

    /// The store for an environment: an explicit file, or the App's `environments.<env>.snapshotPath`.
    public static func store(for desired: DesiredState, override: URL? = nil) -> SnapshotStore? {
        if let override { return SnapshotStore(url: override) }
        return desired.snapshotPath.map { SnapshotStore(url: URL(fileURLWithPath: $0)) }
    }

    /// Reads the remote state (two list calls, one `GET /default` per declared pair, the realtime
    /// URL, the snapshot store) and plans.
    public func plan(_ desired: DesiredState, options: PlanOptions = PlanOptions()) async throws -> PlanResult {
        let remote = try await RemoteStateReader.read(api, pairs: desired.declaredPairs, store: store)
        return try Planner.plan(desired: desired, remote: remote, options: options, hasSnapshotStore: store != nil)
    }

    public func apply(_ planned: PlanResult, allowedActions: Set<ActionID>? = nil,
                      progress: @escaping @Sendable (ApplyEvent) -> Void = { _ in },
                      shouldStop: @escaping @Sendable () -> ApplyStop? = { nil }) async throws(ApplyFailure) -> ApplyReport {
        try await Applier(api: api, store: store, allowedActions: allowedActions, progress: progress,
                          shouldStop: shouldStop).apply(planned)
    }
}
