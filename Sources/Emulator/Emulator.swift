import Basics
public import Foundation
public import HTTPCore
import RetentionMessaging
public import RetentionMessagingModels
import Synchronization

/// An emulator of Apple's Retention Messaging API with Apple's behaviour: token checks, immutable
/// uploads (409 on re-use), review states, default-message refusals, image and text validation,
/// the 2000 limits, exact error bodies, optional rate limiting and fault injection.
///
/// One core, two faces: `transport()` answers in-process (no network), and `EmulatorServer` serves
/// the same core on loopback HTTP/1.1 so the real libcurl client can be exercised end to end.
public final class Emulator: Sendable {
    public let configuration: EmulatorConfiguration
    let core: Mutex<Core>
    /// Serializes writes of the state file, so a later state never loses to an earlier one.
    private let persistence = Mutex(0)

    struct Core {
        /// Each app's two stores, by bundle id, as Apple keeps apps apart by the token's `bid`. The
        /// key "" holds the first app until a request names it (an emulator configured with no bundle id).
        var apps: [String: [Environment: Store]] = ["": [.sandbox: Store(), .production: Store()]]
        /// The app calls that name none act on: the configured `bundleId`, else the first that called.
        var primary = ""
        var faults: FaultInjection
        var random: SeededGenerator
        /// API requests seen in both environments (for `haltAfterRequests`).
        var seen = 0
        var logHandler: (@Sendable (String) -> Void)?
        /// Performance tests running now, by request id.
        var performanceTestTasks: [String: Task<Void, Never>] = [:]
        /// Seconds a customer simulation moved the emulator's clock ahead of `configuration.clock`.
        var clockOffset: Double = 0
        /// Notifications simulated customers will produce once the clock reaches their dates.
        var scheduledNotifications: [ScheduledNotification] = []
        /// Failed production pushes waiting for Apple's next attempt.
        var notificationRetries: [NotificationRetry] = []

        /// The first app's store of `environment`.
        subscript(environment: Environment) -> Store {
            get { self[primary, environment] }
            set { self[primary, environment] = newValue }
        }

        subscript(app: String, environment: Environment) -> Store {
            get { apps[app]?[environment] ?? Store() }
            set { apps[app, default: [:]][environment] = newValue }
        }

        /// The key of the app `bundleId` names (nil or empty: the first app), made when new: the
        /// first app's unnamed stores take the first name given.
        mutating func app(_ bundleId: String?) -> String {
            guard let bundleId, !bundleId.isEmpty else { return primary }
            if apps[bundleId] != nil { return bundleId }
            if primary.isEmpty, let unnamed = apps.removeValue(forKey: "") {
                apps[bundleId] = unnamed
                primary = bundleId
            } else {
                apps[bundleId] = [.sandbox: Store(), .production: Store()]
            }
            return bundleId
        }

        /// Bundle ids of the apps, the first app first ("" for an unnamed first app).
        var bundleIds: [String] { [primary] + apps.keys.filter { $0 != primary }.sorted() }
    }

    struct Store {
        var state = EmulatorState()
        var requests = 0
        var buckets: [EndpointClass: TokenBucket] = [:]
        /// Get Notification History's own budget (an App Store Server API endpoint).
        var historyBucket: TokenBucket?
        /// Get All Subscription Statuses: its budget, its requests, and what it reads from the history.
        var statusBucket: TokenBucket?
        var statusRequests = 0
        var statusIndex = SubscriptionStatusIndex()
    }

    /// The path every API route starts with.
    public static let basePath = RetentionMessagingPaths.base
    /// The path admin routes start with.
    public static let adminPath = "/emulator"

    public init(configuration: EmulatorConfiguration) {
        self.configuration = configuration
        var core = Core(faults: configuration.faults, random: SeededGenerator(seed: configuration.faults.seed))
        for bundleId in configuration.knownBundleIds { _ = core.app(bundleId) }
        self.core = Mutex(core)
    }

    /// The apps the emulator holds, by bundle id, the first app first (an unnamed first app, of an
    /// emulator that no request has reached yet, is left out).
    public var bundleIds: [String] {
        core.withLock { $0.bundleIds.filter { !$0.isEmpty } }
    }

    /// The header a `401` names the emulator's reason in (Apple's `401` has no body and no reason);
    /// the client quotes it in its error.
    public static let refusalHeader = "X-Emulator-Refusal"

    /// The header every answer names the app (bundle id) it acted on in, when the emulator knows it.
    public static let bundleIdHeader = "X-Emulator-Bundle-Id"

    /// An in-process transport: requests to Apple's production or sandbox hosts reach that
    /// environment's store; any other host whose path starts with `/inApps/v1/messaging` (or
    /// `/emulator`) reaches `defaultEnvironment`. Nothing touches the network.
    public func transport(defaultEnvironment: Environment = .sandbox) -> any HTTPTransport {
        EmulatorTransport(emulator: self, defaultEnvironment: defaultEnvironment)
    }

    /// The core both faces use. `environment` nil means: from the host (Apple's hosts), else sandbox.
    /// nil answers mean the connection is dropped (an injected fault, or the emulator halted).
    public func handle(_ request: HTTPRequest, environment: Environment?) async -> HTTPResponse? {
        let chosen = environment ?? Self.environment(forHost: request.url.host) ?? .sandbox
        switch await process(request, environment: chosen) {
        case .response(var response):
            // Every answer, admin routes included, names the environment it acted on; the client
            // refuses an answer from another environment than the one it was asked to change.
            response.headers.append((name: Self.environmentHeader, value: chosen.rawValue))
            return response
        case .dropped, .halted:
            return nil
        }
    }

    /// The header naming the environment an answer came from (Apple sends no such header).
    public static let environmentHeader = "X-Emulator-Environment"

    /// Called with one line per request (environment, method, path, status, and why for a 401),
    /// for verbose output. Never contains headers or bodies.
    public func onLog(_ handler: @escaping @Sendable (String) -> Void) {
        core.withLock { $0.logHandler = handler }
    }

    // MARK: Review and inspection

    // Each takes the app's bundle id; nil means the first app (see `EmulatorConfiguration.bundleId`).

    public func approveMessage(_ identifier: String, in environment: Environment, bundleId: String? = nil) throws(EmulatorError) {
        try review(message: identifier, to: .approved, in: environment, bundleId: bundleId)
    }

    public func rejectMessage(_ identifier: String, in environment: Environment, bundleId: String? = nil) throws(EmulatorError) {
        try review(message: identifier, to: .rejected, in: environment, bundleId: bundleId)
    }

    public func approveImage(_ identifier: String, in environment: Environment, bundleId: String? = nil) throws(EmulatorError) {
        try review(image: identifier, to: .approved, in: environment, bundleId: bundleId)
    }

    public func rejectImage(_ identifier: String, in environment: Environment, bundleId: String? = nil) throws(EmulatorError) {
        try review(image: identifier, to: .rejected, in: environment, bundleId: bundleId)
    }

    /// Approves every `PENDING` message and image.
    /// Approves every PENDING message and image; returns what it approved, sorted.
    @discardableResult
    public func approveAllPending(in environment: Environment, bundleId: String? = nil) -> (messages: [String], images: [String]) {
        let approved = core.withLock { core -> (messages: [String], images: [String]) in
            let app = core.app(bundleId)
            var state = core[app, environment].state
            let messages = state.messages.filter { $0.value.state == .pending }.map(\.key).sorted()
            let images = state.images.filter { $0.value.state == .pending }.map(\.key).sorted()
            for id in messages { state.messages[id]?.state = .approved }
            for id in images { state.images[id]?.state = .approved }
            core[app, environment].state = state
            return (messages, images)
        }
        persist()
        return approved
    }

    public func setFaults(_ faults: FaultInjection) {
        core.withLock { core in
            core.faults = faults
            core.random = SeededGenerator(seed: faults.seed)
            core.seen = 0
        }
    }

    /// API requests the emulator saw in `environment` (admin calls excluded), faulted ones included,
    /// for every app.
    public func requestCount(in environment: Environment) -> Int {
        core.withLock { core in core.apps.values.reduce(0) { $0 + ($1[environment]?.requests ?? 0) } }
    }

    /// An app's state in `environment` (nil: the first app); empty for an app the emulator does not hold.
    public func state(of environment: Environment, bundleId: String? = nil) -> EmulatorState {
        core.withLock { core in core[bundleId.flatMap { $0.isEmpty ? nil : $0 } ?? core.primary, environment].state }
    }

    /// Replaces an app's state in `environment` (for tests that start from a given remote state).
    public func restore(_ state: EmulatorState, in environment: Environment, bundleId: String? = nil) {
        core.withLock { core in core[core.app(bundleId), environment].state = state }
        persist()
    }

    /// Every app's environments, as `--state FILE` keeps them.
    public var stateFile: EmulatorStateFile {
        core.withLock { core in
            var file = EmulatorStateFile(sandbox: core[.sandbox].state, production: core[.production].state)
            file.bundleId = core.primary.isEmpty ? nil : core.primary
            for app in core.bundleIds where app != core.primary && !app.isEmpty {
                file.otherApps[app] = EmulatorAppState(sandbox: core[app, .sandbox].state, production: core[app, .production].state)
            }
            return file
        }
    }

    /// Loads every app's environments from a file written by `save(to:)`.
    public func load(from url: URL) throws(EmulatorError) {
        let file = try EmulatorStateFile.read(from: url)
        // A run that was PENDING when the last process stopped will never finish: it failed.
        func settled(_ state: EmulatorState) -> EmulatorState {
            var sandbox = state
            for (id, status) in sandbox.performanceTests where status == .pending {
                sandbox.performanceTests[id] = .fail
                sandbox.performanceTestResults[id]?.result = .fail
            }
            return sandbox
        }
        core.withLock { core in
            // The file's first app is this emulator's first app when it names none or the same one;
            // otherwise (another --bundle-id now) it is kept as one more app.
            let first = file.bundleId.map { core.app($0) } ?? core.primary
            core[first, .sandbox].state = settled(file.sandbox)
            core[first, .production].state = file.production
            for (bundleId, app) in file.otherApps {
                let key = core.app(bundleId)
                core[key, .sandbox].state = settled(app.sandbox)
                core[key, .production].state = app.production
            }
        }
    }

    public func save(to url: URL) throws(EmulatorError) {
        try persistence.withLock { _ throws(EmulatorError) in try stateFile.write(to: url) }
    }

    private func review(message identifier: String, to newState: MessageState, in environment: Environment,
                        bundleId: String?) throws(EmulatorError) {
        let found = core.withLock { core -> String? in
            let app = bundleId ?? core.primary
            guard core[app, environment].state.messages[identifier] != nil else { return nil }
            core[app, environment].state.messages[identifier]?.state = newState
            return app
        }
        guard found != nil else { throw .notFound("no message \(identifier) in \(place(environment, bundleId))") }
        persist()
    }

    private func review(image identifier: String, to newState: ImageState, in environment: Environment,
                        bundleId: String?) throws(EmulatorError) {
        let found = core.withLock { core -> String? in
            let app = bundleId ?? core.primary
            guard core[app, environment].state.images[identifier] != nil else { return nil }
            core[app, environment].state.images[identifier]?.state = newState
            return app
        }
        guard found != nil else { throw .notFound("no image \(identifier) in \(place(environment, bundleId))") }
        persist()
    }

    /// `production`, or `production of com.example.app` once the emulator holds more than one app.
    func place(_ environment: Environment, _ bundleId: String?) -> String {
        let (apps, primary) = core.withLock { ($0.apps.count, $0.primary) }
        let app = bundleId ?? primary
        return apps > 1 && !app.isEmpty ? "\(environment.rawValue) of \(app)" : environment.rawValue
    }

    /// Writes the state file when one is configured. A failure is logged, not fatal: the
    /// emulator keeps serving from memory.
    func persist() {
        guard let url = configuration.stateFile else { return }
        do {
            try save(to: url)
        } catch {
            log("warning: \(error)")
        }
    }

    func log(_ line: String) {
        core.withLock { $0.logHandler }?(line)
    }

    // MARK: Processing

    enum Outcome {
        case response(HTTPResponse)
        case dropped
        case halted
    }

    func process(_ request: HTTPRequest, environment: Environment) async -> Outcome {
        let parsed = ParsedRequest(request)
        if parsed.segments.first == "emulator" {
            if let response = await customersAdmin(parsed, environment: environment) { return .response(response) }
            return .response(admin(parsed, environment: environment))
        }
        let arrived = configuration.clock.now()
        let plan = core.withLock { core -> (halted: Bool, serverError: Bool, drop: Bool, latency: Double) in
            core[environment].requests += 1
            core.seen += 1
            let faults = core.faults
            if let halt = faults.haltAfterRequests, core.seen > halt { return (true, false, false, 0) }
            let serverError = faults.serverErrorRate > 0 && Double.random(in: 0..<1, using: &core.random) < faults.serverErrorRate
            let drop = faults.dropRate > 0 && Double.random(in: 0..<1, using: &core.random) < faults.dropRate
            return (false, serverError, drop, faults.latency)
        }
        let line = "\(environment.rawValue) \(request.method) \(parsed.rawPath)"
        if plan.halted {
            log("\(line) → halted")
            return .halted
        }
        if plan.latency > 0 {
            // Bounded, so a huge latency never overflows the sleep.
            try? await configuration.clock.sleep(until: arrived + min(plan.latency, 600))
        }
        if plan.serverError {
            log("\(line) → 500 (injected)")
            return .response(Responses.error(500, AppleErrorCode.generalInternal, "An unknown error occurred."))
        }
        let now = configuration.clock.now()
        // Token checks are pure and the slowest step, so they run outside the lock.
        var result: RouteResult
        switch authenticate(parsed.authorization, now: now) {
        case .refused(let reason):
            // No body, as Apple answers; the reason goes in a header of the emulator's own, for the client to quote.
            result = RouteResult(response: HTTPResponse(status: 401, headers: [(name: Self.refusalHeader, value: reason)]), note: reason)
        case .accepted(let bundleId):
            result = core.withLock { core in
                let app = core.app(bundleId)
                var result = route(parsed, app: app, environment: environment, core: &core, now: now)
                result.response.headers.append((name: Self.bundleIdHeader, value: app))
                return result
            }
        }
        if result.mutated { persist() }
        if let job = result.performanceTest { launch(job) }
        log("\(line) → \(result.response.status)" + (result.note.map { " (\($0))" } ?? "") + (plan.drop ? ", dropped (injected)" : ""))
        return plan.drop ? .dropped : .response(result.response)
    }

    static func environment(forHost host: String?) -> Environment? {
        switch host?.lowercased() {
        case "api.storekit.apple.com", "api.storekit.itunes.apple.com": .production
        case "api.storekit-sandbox.apple.com", "api.storekit-sandbox.itunes.apple.com": .sandbox
        default: nil
        }
    }
}

/// A request split the way the routes need it: percent-decoded path segments after the API base.
struct ParsedRequest {
    var method: String
    /// The path as sent (still percent-encoded), for logs.
    var rawPath: String
    /// Segments after `/inApps/v1/messaging` (or, for admin calls, starting with `emulator`).
    var segments: [String]
    var isAPI: Bool
    /// `POST /inApps/v1/notifications/history`, the App Store Server API endpoint the emulator also serves.
    var isNotificationHistory = false
    /// The transaction id of `GET /inApps/v1/subscriptions/{transactionId}` (Get All Subscription Statuses).
    var subscriptionStatusId: String?
    var query: [String: String]
    var body: Data
    var authorization: String?

    init(_ request: HTTPRequest) {
        method = request.method.uppercased()
        let components = URLComponents(url: request.url, resolvingAgainstBaseURL: false)
        rawPath = components?.percentEncodedPath ?? request.url.path
        var parts = rawPath.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
            .map { String($0).removingPercentEncoding ?? String($0) }
        if parts.last == "" { parts.removeLast() }
        let base = ["inApps", "v1", "messaging"]
        if parts.starts(with: base) {
            isAPI = true
            segments = Array(parts.dropFirst(base.count))
        } else if "/" + parts.joined(separator: "/") == NotificationHistoryFacts.path {
            isAPI = true
            isNotificationHistory = true
            segments = []
        } else if parts.count == 4, parts.starts(with: ["inApps", "v1", "subscriptions"]) {
            isAPI = true
            subscriptionStatusId = parts[3]
            segments = []
        } else {
            isAPI = false
            segments = parts.first == "emulator" ? parts : ["<unknown>"] + parts
        }
        query = [:]
        for item in components?.queryItems ?? [] { query[item.name] = item.value ?? "" }
        body = request.body
        authorization = request.header("Authorization")
    }
}

/// The in-process face.
struct EmulatorTransport: HTTPTransport {
    let emulator: Emulator
    let defaultEnvironment: Environment

    func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
        let environment: Environment
        if let byHost = Emulator.environment(forHost: request.url.host) {
            environment = byHost
        } else if request.url.path.hasPrefix(Emulator.basePath) || request.url.path.hasPrefix(Emulator.adminPath)
                    || request.url.path.hasPrefix(NotificationHistoryFacts.path)
                    || request.url.path.hasPrefix(SubscriptionStatusFacts.pathPrefix) {
            environment = defaultEnvironment
        } else {
            throw HTTPError(.couldNotConnect, "the in-process emulator does not serve \(request.url.host ?? request.url.absoluteString)")
        }
        switch await emulator.process(request, environment: environment) {
        case .response(let response): return response
        case .dropped: throw HTTPError(.connectionDropped, "the emulator dropped the connection (injected fault)")
        case .halted: throw HTTPError(.other, "emulator halted")
        }
    }
}
