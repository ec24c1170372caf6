public import Basics
public import Crypto
public import HTTPCore
public import Foundation
public import RetentionMessaging
public import RetentionMessagingModels

/// How an emulator behaves: whose tokens it accepts, how production review goes, whether it
/// enforces Apple's rate limits, and which faults it injects.
public struct EmulatorConfiguration: Sendable {
    /// Tokens must verify against this key, else 401.
    public var publicKey: ES256PublicKey
    /// When set, the token's `kid` must match (else 401).
    public var keyId: String?
    /// When set, the token's `iss` must match (else 401).
    public var issuerId: String?
    /// The emulator's first app. When set, the token's `bid` must be it or one of
    /// `additionalBundleIds` (else 401, as Apple answers a key for an app it does not know); when nil,
    /// every bundle id is an app of its own, made at its first request. Calls that name no app
    /// (admin routes without `?bundleId=`, `state(of:)`) act on the first app.
    public var bundleId: String?
    /// More apps the emulator knows besides `bundleId` (only read when `bundleId` is set).
    public var additionalBundleIds: [String] = []
    /// Sandbox approves every upload at once; production waits for an admin call unless `.auto`.
    public var productionReview: ReviewMode
    public var rateLimit: RateLimitMode
    /// The time tokens, rate limits and latency are measured on (share a `VirtualClock` with the
    /// client in tests).
    public var clock: any RetentionClock
    public var faults: FaultInjection
    /// When set, other product ids are refused with 400 4000023.
    public var productIds: Set<String>?
    /// When set, both environments' state is written here (atomically) after every change.
    public var stateFile: URL?
    /// Seconds of leeway on a token's `iat` and `exp`, as servers allow for clock drift. Tests that
    /// run concurrent sleepers on a `VirtualClock` (which jumps while requests are in flight) may
    /// raise it.
    public var clockSkew: Double
    /// How `POST /performanceTest` runs (documented defaults; see `PerformanceTestSettings`).
    public var performanceTest: PerformanceTestSettings
    /// Signs the realtime requests of a performance test; without one, `POST /performanceTest`
    /// answers 500 saying so.
    public var realtimeSigner: (any RealtimeRequestSigner)?
    /// A PEM bundle of the certificate authorities an `https://` realtime URL is verified against
    /// (the system's when nil).
    public var realtimeCABundlePath: String?
    /// What performance tests send through; nil means a libcurl client made for each run.
    public var realtimeTransport: (any HTTPTransport)?
    /// `appAppleId` in the realtime payloads the emulator signs.
    public var appAppleId: Int64
    /// The PEM root certificate of the chain `realtimeSigner` signs with, handed out by
    /// `GET /emulator/test-root.pem` so that `serve --root` can trust it.
    public var realtimeRootCertificatePEM: String?
    /// False makes the realtime-URL and performance-test endpoints answer 404 without an error
    /// code, as Apple does for a developer account without access to the API.
    public var apiAccess: Bool
    /// Signs the App Store Server Notifications simulated customers produce (`useTestChain` sets
    /// it to the realtime requests' chain); without one, a customer simulation cannot start.
    public var notificationSigner: NotificationSigner? = nil
    /// The time on the realtime requests the emulator signs (performance tests, simulated customers):
    /// the App's server checks their `signedDate` against its own clock, which `clock` (virtual in
    /// tests and the demo) is not.
    public var realtimeClock: any RetentionClock = SystemClock()

    public init(publicKey: ES256PublicKey, keyId: String? = nil, issuerId: String? = nil, bundleId: String? = nil,
                productionReview: ReviewMode = .manual, rateLimit: RateLimitMode = .off,
                clock: any RetentionClock, faults: FaultInjection = .none,
                productIds: Set<String>? = nil, stateFile: URL? = nil, clockSkew: Double = 60,
                performanceTest: PerformanceTestSettings = .default, realtimeSigner: (any RealtimeRequestSigner)? = nil,
                realtimeCABundlePath: String? = nil, realtimeTransport: (any HTTPTransport)? = nil,
                appAppleId: Int64 = 0, realtimeRootCertificatePEM: String? = nil, apiAccess: Bool = true) {
        self.publicKey = publicKey
        self.keyId = keyId
        self.issuerId = issuerId
        self.bundleId = bundleId
        self.productionReview = productionReview
        self.rateLimit = rateLimit
        self.clock = clock
        self.faults = faults
        self.productIds = productIds
        self.stateFile = stateFile
        self.clockSkew = clockSkew
        self.performanceTest = performanceTest
        self.realtimeSigner = realtimeSigner
        self.realtimeCABundlePath = realtimeCABundlePath
        self.realtimeTransport = realtimeTransport
        self.appAppleId = appAppleId
        self.realtimeRootCertificatePEM = realtimeRootCertificatePEM
        self.apiAccess = apiAccess
    }

    /// The largest request body the loopback server reads. Apple documents no limit for images; the
    /// largest valid PNG (3840 × 2160, 16-bit RGB, stored without compression) is about 50 MB, so
    /// no valid image reaches this.
    public static let maxBodySize = 64 * 1024 * 1024

    /// The apps the emulator knows, the first one first; empty when it takes every bundle id.
    public var knownBundleIds: [String] {
        guard let bundleId, !bundleId.isEmpty else { return [] }
        var seen: Set<String> = [bundleId]
        return [bundleId] + additionalBundleIds.filter { !$0.isEmpty && seen.insert($0).inserted }
    }

    /// Whether requests for `bundleId` are served: a known app, or any app when none is configured.
    public func accepts(bundleId: String) -> Bool {
        let known = knownBundleIds
        return known.isEmpty || known.contains(bundleId)
    }
}

/// Whether production uploads wait for review (`manual`, Apple's behaviour) or are approved at once.
public enum ReviewMode: String, Sendable, Hashable, CaseIterable {
    case auto
    case manual
}

/// The emulator's rate limiting: off, Apple's published hourly budgets, or custom hourly budgets
/// (the same in both environments). Over budget it answers 429 4290000 with `Retry-After` in
/// UNIX milliseconds.
public enum RateLimitMode: Sendable, Hashable {
    case off
    case apple
    case custom(perHourOther: Int, perHourDefaults: Int)

    /// The budgets the emulator enforces; nil when unlimited.
    public var limits: RateLimits? {
        switch self {
        case .off: nil
        case .apple: .apple
        case .custom(let other, let defaults): .perHour(other: other, configureDefault: defaults)
        }
    }

    /// Requests per hour for `endpointClass` in `environment`; nil when unlimited.
    public func perHour(_ endpointClass: EndpointClass, in environment: Environment) -> Int? {
        limits?.perWindow(endpointClass, in: environment)
    }
}

/// Faults the emulator injects, drawn from a seeded generator so a run can be repeated.
public struct FaultInjection: Sendable, Hashable {
    /// The fraction of requests answered 500 5000000 before being processed.
    public var serverErrorRate: Double
    /// The fraction of requests whose connection is dropped after being processed (the change
    /// happens, the answer is lost: the ambiguous failure clients must survive).
    public var dropRate: Double
    /// Seconds added before every answer, on the emulator's clock.
    public var latency: Double
    public var seed: UInt64
    /// Requests 1...N are handled normally; every later request fails with a non-transient
    /// `HTTPError(.other, "emulator halted")` — simulates the tool dying after request N.
    public var haltAfterRequests: Int?

    public init(serverErrorRate: Double = 0, dropRate: Double = 0, latency: Double = 0, seed: UInt64 = 1,
                haltAfterRequests: Int? = nil) {
        self.serverErrorRate = serverErrorRate
        self.dropRate = dropRate
        self.latency = latency
        self.seed = seed
        self.haltAfterRequests = haltAfterRequests
    }

    public static let none = FaultInjection()
}

/// A small seeded generator (SplitMix64): injected faults, and the property tests' random apps,
/// repeat for the same seed.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
