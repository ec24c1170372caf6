import Basics
public import Crypto
import Foundation
public import RetentionMessagingModels
import Runtime
import Synchronization

/// One environment served on one path, from one snapshot source.
public struct RealtimeEndpoint: Sendable {
    public var path: String
    public var environment: RetentionMessagingModels.Environment
    public var source: any SnapshotSource
    /// The App's id and bundle id when known up front (from the App manifest); otherwise the first
    /// snapshot loaded fixes them and later snapshots must agree.
    public var appAppleId: Int64?
    public var bundleId: String?

    public init(path: String, environment: RetentionMessagingModels.Environment, source: any SnapshotSource,
                appAppleId: Int64? = nil, bundleId: String? = nil) {
        self.path = path
        self.environment = environment
        self.source = source
        self.appAppleId = appAppleId
        self.bundleId = bundleId
    }
}

/// The In-App Purchase key that signs promotional offers.
public struct OfferSigningKey: Sendable {
    public var keyId: String
    public var issuerId: String
    public var privateKey: ES256PrivateKey

    public init(keyId: String, issuerId: String, privateKey: ES256PrivateKey) {
        self.keyId = keyId
        self.issuerId = issuerId
        self.privateKey = privateKey
    }
}

/// What one endpoint answers from right now; replaced whole, so a request sees one snapshot. A
/// class, so handing it to a request is one reference count, not one per field of the snapshot.
final class Serving: Sendable {
    let snapshot: RuntimeSnapshot
    let engine: DecisionEngine
    let rules: [String: SnapshotRule]
    /// Why the endpoint cannot answer everything it should (no key for its offers), if so.
    let notReadyReason: String?

    init(snapshot: RuntimeSnapshot, engine: DecisionEngine, rules: [String: SnapshotRule], notReadyReason: String?) {
        self.snapshot = snapshot
        self.engine = engine
        self.rules = rules
        self.notReadyReason = notReadyReason
    }
}

/// An endpoint's current snapshot and verifier, and the loading of new snapshots.
final class EndpointState: Sendable {
    let endpoint: RealtimeEndpoint
    private let trustedRoots: [Crypto.X509Certificate]
    private let maxAge: TimeInterval?
    private let signingKey: OfferSigningKey?
    private let clock: any RetentionClock
    private let metrics: RealtimeMetrics
    private let log: RequestLog

    private let serving = Mutex<Serving?>(nil)
    private let verifierBox: Mutex<SignedPayloadVerifier>
    private struct Loading {
        var identity: (appAppleId: Int64?, bundleId: String)?
        var knownVersion: String?
        var lastSourceError: String?
    }
    private let loading: Mutex<Loading>

    init(endpoint: RealtimeEndpoint, trustedRoots: [Crypto.X509Certificate], maxAge: TimeInterval?,
         signingKey: OfferSigningKey?, clock: any RetentionClock, metrics: RealtimeMetrics, log: RequestLog) {
        self.endpoint = endpoint
        self.trustedRoots = trustedRoots
        self.maxAge = maxAge
        self.signingKey = signingKey
        self.clock = clock
        self.metrics = metrics
        self.log = log
        verifierBox = Mutex(SignedPayloadVerifier(trustedRoots: trustedRoots, appAppleId: endpoint.appAppleId,
                                                  environment: endpoint.environment, maxAge: maxAge, clock: clock))
        loading = Mutex(Loading(identity: endpoint.bundleId.map { (endpoint.appAppleId, $0) }))
    }

    var current: Serving? { serving.withLock { $0 } }
    var verifier: SignedPayloadVerifier { verifierBox.withLock { $0 } }

    /// Reads the source and swaps in a new snapshot when it changed and is acceptable; a refused
    /// one is logged and counted, and the previous snapshot keeps serving.
    func reload() {
        let environment = endpoint.environment.rawValue
        let known = loading.withLock { $0.knownVersion }
        let fetched: FetchedSnapshot
        do {
            guard let found = try endpoint.source.fetch(knownVersion: known) else { return }
            fetched = found
        } catch {
            let message = "\(error)"
            let repeated = loading.withLock { state in
                defer { state.lastSourceError = message }
                return state.lastSourceError == message
            }
            metrics.reloadFailure(environment: environment, reason: "unreadable_store")
            if !repeated { logEvent("snapshot_unavailable", message) }
            return
        }
        loading.withLock {
            $0.knownVersion = fetched.version
            $0.lastSourceError = nil
        }
        let snapshot: RuntimeSnapshot
        do {
            snapshot = try RuntimeSnapshot.load(from: fetched.data)
        } catch {
            let reason = switch error {
            case .digestMismatch: "digest_mismatch"
            case .unsupportedSchemaVersion: "unsupported_schema"
            case .unreadable: "unparsable"
            case .invalid: "invalid"
            }
            refuse(reason, "\(endpoint.source.location): \(error.description)")
            return
        }
        guard snapshot.environment == endpoint.environment else {
            refuse("wrong_environment", "\(endpoint.source.location): the snapshot is for \(snapshot.environment.rawValue), "
                   + "but this endpoint serves \(environment)")
            return
        }
        // The state document changes for other reasons too (a recorded review state, a performance
        // test): the same snapshot is neither reloaded nor logged as loaded again.
        if current?.snapshot.digest == snapshot.digest { return }
        let identity = loading.withLock { $0.identity }
        if let identity {
            guard snapshot.bundleId == identity.bundleId,
                  identity.appAppleId == nil || snapshot.appAppleId == nil || snapshot.appAppleId == identity.appAppleId else {
                refuse("wrong_app", "\(endpoint.source.location): the snapshot is for \(snapshot.bundleId) "
                       + "(appAppleId \(snapshot.appAppleId.map(String.init) ?? "none")), not \(identity.bundleId) "
                       + "(appAppleId \(identity.appAppleId.map(String.init) ?? "none"))")
                return
            }
        }
        let appAppleId = identity?.appAppleId ?? snapshot.appAppleId
        if identity == nil || identity?.appAppleId == nil && appAppleId != nil {
            loading.withLock { $0.identity = (appAppleId, snapshot.bundleId) }
            let verifier = SignedPayloadVerifier(trustedRoots: trustedRoots, appAppleId: appAppleId,
                                                 environment: endpoint.environment, maxAge: maxAge, clock: clock)
            verifierBox.withLock { $0 = verifier }
        }
        let signer = signingKey.map {
            PromotionalOfferSigner(keyId: $0.keyId, issuerId: $0.issuerId, bundleId: snapshot.bundleId,
                                   privateKey: $0.privateKey, clock: clock)
        }
        let hasOffers = snapshot.rules.contains { $0.response.kind == .promotionalOffer || $0.response.kind == .advancedCommerce }
        let next = Serving(snapshot: snapshot, engine: DecisionEngine(snapshot: snapshot, signer: signer),
                           rules: Dictionary(snapshot.rules.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first }),
                           notReadyReason: hasOffers && signingKey == nil
                               ? "the snapshot has promotional offers or Advanced Commerce answers but no In-App Purchase key is set (RETENTION_SYNC_*)" : nil)
        serving.withLock { $0 = next }
        metrics.snapshotLoaded(environment: environment, digest: snapshot.digest, at: clock.time())
        log.write(["event": "snapshot_loaded", "environment": .text(environment), "digest": .text(snapshot.digest),
                   "rules": .integer(Int64(snapshot.rules.count)), "source": .text(endpoint.source.location),
                   "time": .text(UTCTime(now: clock).formatted())])
    }

    private func refuse(_ reason: String, _ message: String) {
        metrics.reloadFailure(environment: endpoint.environment.rawValue, reason: reason)
        let serving = current.map { "still serving \($0.snapshot.digest)" } ?? "no snapshot is being served yet"
        logEvent("snapshot_refused", "\(message); \(serving)", reason: reason)
    }

    private func logEvent(_ event: String, _ message: String, reason: String? = nil) {
        var fields: [String: LogValue] = ["event": .text(event), "environment": .text(endpoint.environment.rawValue),
                                          "message": .text(message), "time": .text(UTCTime(now: clock).formatted())]
        if let reason { fields["reason"] = .text(reason) }
        log.write(fields)
    }
}
