public import Basics
import Foundation
public import RetentionMessaging
import RetentionMessagingModels
public import StateStore

/// The reconciler for one environment: reads the remote state, plans, applies.
public struct Reconciler: Sendable {
    public var api: any RetentionMessagingAPI
    /// The environment's state store; nil when it has none (flows are then never published).
    public var state: StateBinding?
    public var refresh: DefaultsRefresh
    public var clock: any RetentionClock
    /// PENDING longer than this many days is flagged in the plan's review ages.
    public var pendingWarnDays = 7
    /// Every pair the manifests name in any environment (the App's products and locales, every
    /// `Defaults` entry), including those this environment leaves alone: a prune reads them all.
    public var pairsNamedByManifests: Set<ProductLocale> = []
    /// Hears how many defaults a plan's read will fetch, before the first call (`RemoteStateReader.read`).
    public var onReadPlanned: (@Sendable (_ defaults: Int) -> Void)?

    public init(api: any RetentionMessagingAPI, state: StateBinding?, refresh: DefaultsRefresh = .standard,
                clock: any RetentionClock) {
        self.api = api
        self.state = state
        self.refresh = refresh
        self.clock = clock
    }

    /// The file store at the App's `environments.<env>.snapshotPath` (tests and the benchmark).
    public static func store(for desired: DesiredState) -> StateBinding? {
        desired.snapshotPath.map { StateBinding(store: FileStateStore(path: $0, owner: desired.owner)) }
    }

    /// Reads the state store, then the remote state (two list calls, `GET /default` for the pairs
    /// the record does not vouch for, the realtime URL), and plans.
    public func plan(_ desired: DesiredState, options: PlanOptions = PlanOptions()) async throws -> PlanResult {
        if options.prune && state == nil {
            throw ReconcilerError.stateRequired("pruning needs the state store to be read (it says which older versions the published snapshot still uses); configure environments.\(desired.environment.rawValue).stateStore in the App manifest")
        }
        // Whether content is in use is decided on defaults this run read: a prune reads every pair,
        // the record's trust and the refresh window notwithstanding (a vendor may still write).
        let extra = options.prune || options.readEveryNamedPair ? pairsNamedByManifests.subtracting(desired.declaredPairs) : []
        let remote = try await RemoteStateReader.read(api, desired: desired, state: state, refresh: options.prune ? .all : refresh,
                                                      alsoRead: extra, planned: onReadPlanned)
        var options = options
        // The prune grace period counts to the reconciler's clock, read once, never inside the planner.
        if options.now == nil { options.now = clock.time() }
        var planned = try Planner.plan(desired: desired, remote: remote, options: options, hasSnapshotStore: state != nil)
        if options.prune {
            let windowed = DefaultsReadPlan.make(desired: desired, document: remote.state?.document, refresh: refresh)
            planned.plan.pruneRead = PruneRead(pairs: desired.declaredPairs.count + extra.count,
                                               extraCalls: windowed.trusted.count + extra.count)
        }
        planned.plan.reviewAges = ReviewAge.compute(planned, now: clock.time(), warnDays: pendingWarnDays)
        if !planned.plan.reviewAges.isEmpty { planned.plan.formatVersion = Plan.textChangesFormatVersion }
        return planned
    }

    /// Records what a complete read (import's) showed about `desired`: the defaults and the realtime
    /// URL Apple holds as `desired` assigns them, and the review states, so the next plan re-reads only
    /// its window of defaults instead of every pair. Makes no call; the write is conditional on the
    /// state record `remote` read. Returns the number of defaults the record now vouches for, or nil
    /// when nothing needed writing.
    public func seedState(_ desired: DesiredState, remote: RemoteState) async throws(StateStoreError) -> Int? {
        guard let state else { return nil }
        var recorder = StateRecorder(binding: state, read: remote.state, owner: desired.owner, clock: clock)
        recorder.recordObservations(desired: desired, remote: remote, time: clock.time(), merging: false)
        guard recorder.hasChanges else { return nil }
        try await recorder.write()
        let assigned = Dictionary(desired.defaults.map { (ProductLocale(productId: $0.productId, locale: $0.locale), $0.messageIdentifier) },
                                  uniquingKeysWith: { first, _ in first })
        return desired.declaredPairs.filter { remote.defaults[$0] == assigned[$0] }.count
    }

    public func apply(_ planned: PlanResult, allowedActions: Set<ActionID>? = nil, notAllowedDetail: String? = nil,
                      progress: @escaping @Sendable (ApplyEvent) -> Void = { _ in },
                      shouldStop: @escaping @Sendable () -> ApplyStop? = { nil }) async throws(ApplyFailure) -> ApplyReport {
        try await Applier(api: api, state: state, allowedActions: allowedActions, notAllowedDetail: notAllowedDetail,
                          progress: progress, shouldStop: shouldStop, clock: clock).apply(planned)
    }
}

extension DesiredState {
    /// Who the environment's state document belongs to.
    public var owner: StateOwner { StateOwner(bundleId: bundleId, appAppleId: appAppleId, environment: environment) }
}
