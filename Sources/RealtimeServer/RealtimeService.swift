public import Crypto
public import Foundation
public import HTTPCore
public import HTTPServer
import RetentionMessagingModels
import Runtime
import Synchronization

/// Answers Apple's realtime "Get Retention Message" requests and the operations routes
/// (`/healthz`, `/readyz`, `/metrics`). Stateless but for the snapshots it polls, so replicas scale out.
public final class RealtimeService: Sendable {
    public struct Configuration: Sendable {
        public var endpoints: [RealtimeEndpoint]
        /// The roots Apple's chains must lead to (Apple Root CA - G3).
        public var trustedRoots: [Crypto.X509Certificate]
        /// The freshness window for `signedDate`, in seconds.
        public var maxAge: TimeInterval
        public var signingKey: OfferSigningKey?
        /// Seconds between two looks at the snapshot sources.
        public var pollInterval: TimeInterval
        public var clock: @Sendable () -> Date
        /// A realtime request that has already waited this many seconds since it arrived (behind
        /// other work, on an overloaded server) is answered `{}` at once, so Apple shows its
        /// fallback in time instead of getting a late answer; nil never sheds.
        public var shedAfter: TimeInterval?

        /// Apple's budget is 700 ms; past half a second a decision and its network trip would not make it.
        public static let defaultShedAfter: TimeInterval = 0.5

        /// `serve`'s defaults, declared here once; its help prints them.
        public static let defaultMaxAge: TimeInterval = 300
        public static let defaultPollInterval: TimeInterval = 5

        public init(endpoints: [RealtimeEndpoint], trustedRoots: [Crypto.X509Certificate], maxAge: TimeInterval = defaultMaxAge,
                    signingKey: OfferSigningKey?, pollInterval: TimeInterval = defaultPollInterval,
                    clock: @escaping @Sendable () -> Date = { Date() }, shedAfter: TimeInterval? = defaultShedAfter) {
            self.shedAfter = shedAfter
            self.endpoints = endpoints
            self.trustedRoots = trustedRoots
            self.maxAge = maxAge
            self.signingKey = signingKey
            self.pollInterval = pollInterval
            self.clock = clock
        }
    }

    /// The largest request body a realtime call may carry; Apple's are about 3 KiB.
    public static let maxBodySize = 64 * 1024

    public let metrics = RealtimeMetrics()
    private let states: [String: EndpointState]
    private let ordered: [EndpointState]
    private let log: RequestLog
    private let pollInterval: TimeInterval
    private let polling = Mutex(false)
    private let shedAfter: Duration?

    public init(configuration: Configuration, log: RequestLog = RequestLog()) {
        self.log = log
        shedAfter = configuration.shedAfter.map { .milliseconds(Int64(($0 * 1000).rounded())) }
        pollInterval = configuration.pollInterval
        let metrics = metrics
        ordered = configuration.endpoints.map {
            EndpointState(endpoint: $0, trustedRoots: configuration.trustedRoots, maxAge: configuration.maxAge,
                          signingKey: configuration.signingKey, clock: configuration.clock, metrics: metrics, log: log)
        }
        states = Dictionary(ordered.map { ($0.endpoint.path, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// Reads every snapshot source once, now (the first load, or a test's nudge).
    public func reloadSnapshots() {
        for state in ordered { state.reload() }
    }

    /// Loads the snapshots, then keeps polling them on a thread of its own until `stopPolling`.
    public func startPolling() {
        reloadSnapshots()
        polling.withLock { $0 = true }
        let thread = Thread { [self] in
            while polling.withLock({ $0 }) {
                Thread.sleep(forTimeInterval: pollInterval)
                guard polling.withLock({ $0 }) else { return }
                reloadSnapshots()
            }
        }
        thread.name = "retention-sync.serve.snapshot-poll"
        thread.start()
    }

    public func stopPolling() {
        polling.withLock { $0 = false }
    }

    /// True when every endpoint has a snapshot and can sign what it may need to.
    public var isReady: Bool { readiness.isEmpty }

    /// Why the service is not ready, one line per endpoint; empty when it is.
    public var readiness: [String] {
        ordered.compactMap { state in
            guard let serving = state.current else {
                return "\(state.endpoint.path) (\(state.endpoint.environment.rawValue)): no snapshot loaded yet from \(state.endpoint.source.location)"
            }
            return serving.notReadyReason.map { "\(state.endpoint.path) (\(state.endpoint.environment.rawValue)): \($0)" }
        }
    }

    public func handle(_ request: HTTPServerRequest) -> HTTPResponse {
        // Latency counts from arrival, so time spent waiting behind other requests shows.
        let started = min(request.receivedAt, ContinuousClock.now)
        if let state = states[request.path] {
            guard request.method == "POST" else {
                return HTTPResponse(status: 405, headers: [("Allow", "POST")])
            }
            return realtime(request, state: state, started: started)
        }
        let isRead = request.method == "GET" || request.method == "HEAD"
        switch request.path {
        case "/healthz":
            guard isRead else { return HTTPResponse(status: 405, headers: [("Allow", "GET, HEAD")]) }
            return text(200, "ok\n")
        case "/readyz":
            guard isRead else { return HTTPResponse(status: 405, headers: [("Allow", "GET, HEAD")]) }
            let reasons = readiness
            return reasons.isEmpty ? text(200, "ready\n") : text(503, "not ready:\n" + reasons.map { "  \($0)\n" }.joined())
        case "/metrics":
            guard isRead else { return HTTPResponse(status: 405, headers: [("Allow", "GET, HEAD")]) }
            return HTTPResponse(status: 200, headers: [("Content-Type", "text/plain; version=0.0.4; charset=utf-8")],
                                body: Data(metrics.render().utf8))
        default:
            return HTTPResponse(status: 404)
        }
    }

    private static let empty = HTTPResponse(status: 200, headers: [("Content-Type", "application/json")], body: Data("{}".utf8))

    private struct RequestBody: Decodable {
        var signedPayload: String
    }

    /// The body's `signedPayload`: Apple's one-field body is read by a strict scanner, and anything
    /// else by `JSONDecoder`, which accepts and refuses exactly what it always did.
    static func signedPayload(in body: Data) -> String? {
        if let object = FlatJSONObject(body), let payload = object.string("signedPayload") { return payload }
        return (try? JSONDecoder().decode(RequestBody.self, from: body))?.signedPayload
    }

    private func realtime(_ request: HTTPServerRequest, state: EndpointState, started: ContinuousClock.Instant) -> HTTPResponse {
        let environment = state.endpoint.environment.rawValue
        var entry = RequestLogEntry(environment: environment, path: state.endpoint.path)
        if let shedAfter, ContinuousClock.now - started > shedAfter {
            return finish("shed", Self.empty, entry: &entry, started: started)
        }
        guard let signedPayload = Self.signedPayload(in: request.body) else {
            return finish("bad_request", HTTPResponse(status: 400), entry: &entry, started: started)
        }
        let decoded: DecodedRealtimeRequestBody
        do {
            decoded = try state.verifier.verify(signedPayload: signedPayload)
        } catch {
            metrics.verificationFailure(environment: environment, reason: error.reason)
            entry.reason = error.reason
            return finish("unauthorized", HTTPResponse(status: 401), entry: &entry, started: started)
        }
        entry.requestIdentifier = decoded.requestIdentifier
        entry.productId = decoded.productId
        entry.userLocale = decoded.userLocale
        entry.transaction = log.transactionHash(decoded.originalTransactionId)
        guard let serving = state.current else {
            return finish("not_ready", Self.empty, entry: &entry, started: started)
        }
        entry.snapshot = serving.snapshot.digest
        let decision: Decision
        do {
            decision = try serving.engine.decide(decoded)
        } catch {
            // Apple counts any non-2xx as a failure; `{}` lets it show the default message instead.
            return finish("internal_error", Self.empty, entry: &entry, started: started)
        }
        switch decision {
        case .noAnswer:
            return finish("no_answer", Self.empty, entry: &entry, started: started)
        case .respond(let answer, let ruleId):
            let kind: String
            let messageIdentifier: String
            if let message = answer.message {
                (kind, messageIdentifier) = ("message", message.messageIdentifier)
            } else if let alternate = answer.alternateProduct {
                (kind, messageIdentifier) = ("alternateProduct", alternate.messageIdentifier)
            } else if let offer = answer.promotionalOffer {
                (kind, messageIdentifier) = ("promotionalOffer", offer.messageIdentifier)
            } else {
                return finish("no_answer", Self.empty, entry: &entry, started: started)
            }
            entry.rule = ruleId
            entry.kind = kind
            entry.messageIdentifier = messageIdentifier
            if let split = serving.rules[ruleId]?.match.split {
                entry.splitGroup = "\(split.lowerBucket)-\(split.upperBucket)"
            }
            metrics.decision(environment: environment, rule: ruleId, kind: kind)
            return finish("answered", HTTPResponse(status: 200, headers: [("Content-Type", "application/json")],
                                                   body: Data(answer.canonicalJSON)), entry: &entry, started: started)
        }
    }

    /// Counts the request, writes its log line and hands the response back.
    private func finish(_ outcome: String, _ response: HTTPResponse, entry: inout RequestLogEntry,
                        started: ContinuousClock.Instant) -> HTTPResponse {
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        metrics.request(environment: entry.environment, outcome: outcome, seconds: seconds)
        entry.outcome = outcome
        entry.status = response.status
        entry.latencyMs = (seconds * 1e6).rounded() / 1000
        entry.time = timestamp(Date())
        log.write(entry)
        return response
    }

    private func text(_ status: Int, _ body: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "text/plain; charset=utf-8")], body: Data(body.utf8))
    }
}
