public import Basics
public import Crypto
public import Foundation
public import HTTPCore
public import HTTPServer
public import EventStore
public import StateStore
import EventContract
public import RetentionMessagingModels
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
        public var clock: any RetentionClock
        /// A realtime request that has already waited this many seconds since it arrived (behind
        /// other work, on an overloaded server) is answered `{}` at once, so Apple shows its
        /// fallback in time instead of getting a late answer; nil never sheds.
        public var shedAfter: TimeInterval?
        /// Where decisions (and, on `notificationsPath`, outcomes) are recorded; nil records nothing.
        public var recording: Recording?
        /// The path App Store Server Notifications V2 are accepted on (sent by Apple, or forwarded);
        /// served only while `recording` is set.
        public var notificationsPath: String
        /// Called with the body of every notification that verified, after it was recorded (to forward it).
        public var onNotification: (@Sendable (Data) -> Void)?
        /// Looks up a customer without facts through the App Store Server API; nil never does. Needs
        /// `signingKey` (the In-App Purchase key signs the API's token) and `recording` (facts are
        /// kept by pseudonym).
        public var lookup: LiveLookupSettings?

        public static let defaultNotificationsPath = "/notifications"

        /// Apple's budget is 700 ms; past half a second a decision and its network trip would not make it.
        public static let defaultShedAfter: TimeInterval = 0.5

        /// `serve`'s defaults, declared here once; its help prints them.
        public static let defaultMaxAge: TimeInterval = 300
        public static let defaultPollInterval: TimeInterval = 5

        public init(endpoints: [RealtimeEndpoint], trustedRoots: [Crypto.X509Certificate], maxAge: TimeInterval = defaultMaxAge,
                    signingKey: OfferSigningKey?, pollInterval: TimeInterval = defaultPollInterval,
                    clock: any RetentionClock, shedAfter: TimeInterval? = defaultShedAfter) {
            self.shedAfter = shedAfter
            self.endpoints = endpoints
            self.trustedRoots = trustedRoots
            self.maxAge = maxAge
            self.signingKey = signingKey
            self.pollInterval = pollInterval
            self.clock = clock
            notificationsPath = Self.defaultNotificationsPath
        }
    }

    /// The event recorder, and the secret that turns a transaction id into the customer's pseudonym.
    public struct Recording: Sendable {
        public var recorder: EventRecorder
        public var pseudonyms: PseudonymKey
        /// Where `facts publish` writes the customer facts tables (the events' root); nil keeps only
        /// what the notifications this replica receives say.
        public var facts: (any ObjectStore)?
        /// During a rotation, the key being replaced: every outcome is recorded under it too, so the
        /// customers whose decisions carry it are still followed.
        public var previousPseudonyms: PseudonymKey?

        public init(recorder: EventRecorder, pseudonyms: PseudonymKey, facts: (any ObjectStore)? = nil) {
            self.recorder = recorder
            self.pseudonyms = pseudonyms
            self.facts = facts
        }
    }

    /// The largest request body a realtime call may carry; Apple's are about 3 KiB.
    public static let maxBodySize = 64 * 1024

    public let metrics = RealtimeMetrics()
    private let states: [String: EndpointState]
    private let ordered: [EndpointState]
    private let log: RequestLog
    private let clock: any RetentionClock
    private let pollInterval: TimeInterval
    private let polling = Mutex(false)
    private let shedAfter: Duration?
    private let recording: Recording?
    private let notificationsPath: String
    private let onNotification: (@Sendable (Data) -> Void)?
    private let trustedRoots: [Crypto.X509Certificate]
    private let notificationVerifiers = Mutex<[String: NotificationVerifier]>([:])
    /// Each environment's customer facts, while decisions are recorded (facts are keyed by the pseudonym).
    private let customerFacts: [Environment: CustomerFactsStore]
    /// Each environment's live lookup, when configured.
    private let lookups: [Environment: CustomerLookup]

    public init(configuration: Configuration, log: RequestLog = RequestLog()) {
        self.log = log
        clock = configuration.clock
        shedAfter = configuration.shedAfter.map { .milliseconds(Int64(($0 * 1000).rounded())) }
        pollInterval = configuration.pollInterval
        recording = configuration.recording
        notificationsPath = configuration.notificationsPath
        onNotification = configuration.onNotification
        trustedRoots = configuration.trustedRoots
        if let recording = configuration.recording {
            let recorder = recording.recorder
            metrics.showEvents { recorder.snapshot }
        }
        let metrics = metrics
        ordered = configuration.endpoints.map {
            EndpointState(endpoint: $0, trustedRoots: configuration.trustedRoots, maxAge: configuration.maxAge,
                          signingKey: configuration.signingKey, clock: configuration.clock, metrics: metrics, log: log)
        }
        states = Dictionary(ordered.map { ($0.endpoint.path, $0) }, uniquingKeysWith: { first, _ in first })
        var facts: [Environment: CustomerFactsStore] = [:]
        if let recording = configuration.recording {
            for endpoint in configuration.endpoints where facts[endpoint.environment] == nil {
                facts[endpoint.environment] = CustomerFactsStore(environment: endpoint.environment, store: recording.facts,
                                                                 bundleId: endpoint.bundleId, keyId: recording.pseudonyms.keyId,
                                                                 clock: configuration.clock, log: log, metrics: metrics)
            }
        }
        customerFacts = facts
        var lookups: [Environment: CustomerLookup] = [:]
        if let settings = configuration.lookup, let key = configuration.signingKey {
            for environment in facts.keys {
                lookups[environment] = CustomerLookup(environment: environment, settings: settings, key: key, clock: configuration.clock,
                                                      metrics: metrics)
            }
        }
        self.lookups = lookups
    }

    /// Live lookups sent to the App Store Server API so far, in every environment.
    public var lookupsSent: Int { lookups.values.reduce(0) { $0 + $1.requestsSent } }

    /// The lookups' pace per environment (requests per second), for serve's start-up line.
    public var lookupPace: [Environment: Double] { lookups.mapValues(\.perSecond) }

    /// The customer facts `serve` keeps for `environment`; nil while it records nothing.
    public func facts(for environment: Environment) -> CustomerFactsStore? { customerFacts[environment] }

    /// Reads every snapshot source once, now (the first load, or a test's nudge).
    public func reloadSnapshots() {
        for state in ordered { state.reload() }
        for store in customerFacts.values.sorted(by: { $0.environment < $1.environment }) { store.reload() }
    }

    /// Loads the snapshots, then keeps polling them on a thread of its own until `stopPolling`.
    public func startPolling() {
        reloadSnapshots()
        polling.withLock { $0 = true }
        let thread = Thread { [self] in
            ThreadName.setCurrent("rs-snapshot-poll")
            while polling.withLock({ $0 }) {
                Thread.sleep(forTimeInterval: pollInterval)
                guard polling.withLock({ $0 }) else { return }
                reloadSnapshots()
            }
        }
        thread.start()
    }

    public func stopPolling() {
        polling.withLock { $0 = false }
    }

    /// True when every endpoint has a snapshot and can sign what it may need to.
    public var isReady: Bool { readiness.isEmpty }

    /// What works only in part while the service answers: the event recorder when its store
    /// refuses segments (events then wait in the spool). `/readyz` stays 200 and lists them.
    public var degradations: [String] {
        guard let recorder = recording?.recorder else { return [] }
        return recorder.snapshot.degradation(store: recorder.sink.location, spool: recorder.settings.spool).map { [$0] } ?? []
    }

    /// Why the service is not ready, one line per endpoint; empty when it is.
    public var readiness: [String] {
        ordered.compactMap { state in
            guard let serving = state.current else {
                return "\(state.endpoint.path) (\(state.endpoint.environment.rawValue)): no snapshot loaded yet from \(state.endpoint.source.location)"
            }
            return serving.notReadyReason.map { "\(state.endpoint.path) (\(state.endpoint.environment.rawValue)): \($0)" }
        }
    }

    /// Answers on the calling thread, waiting there for a live lookup (at most its deadline).
    public func handle(_ request: HTTPServerRequest) -> HTTPResponse {
        let box = LockedResponse()
        let done = DispatchSemaphore(value: 0)
        let answer = handle(request) {
            HTTPResponder { response in
                box.set(response)
                done.signal()
            }
        }
        switch answer {
        case .now(let response):
            return response ?? Self.empty
        case .later:
            done.wait()
            return box.get() ?? Self.empty
        }
    }

    /// Answers now, or — while a live lookup runs for a customer without facts — later, through
    /// the responder `later` makes (never past the lookup's deadline).
    public func handle(_ request: HTTPServerRequest, later: () -> HTTPResponder) -> HTTPAnswer {
        if let state = states[request.path] {
            guard request.method == "POST" else {
                return .now(HTTPResponse(status: 405, headers: [("Allow", "POST")]))
            }
            // Latency counts from arrival, so time spent waiting behind other requests shows.
            return realtime(request, state: state, started: min(request.receivedAt, ContinuousClock.now), later: later)
        }
        return .now(operations(request))
    }

    private func operations(_ request: HTTPServerRequest) -> HTTPResponse {
        if request.path == notificationsPath, let recording {
            guard request.method == "POST" else {
                return HTTPResponse(status: 405, headers: [("Allow", "POST")])
            }
            return notification(request, recording: recording)
        }
        let isRead = request.method == "GET" || request.method == "HEAD"
        switch request.path {
        case Self.healthPath:
            guard isRead else { return HTTPResponse(status: 405, headers: [("Allow", "GET, HEAD")]) }
            return text(200, "ok\n")
        case Self.readinessPath:
            guard isRead else { return HTTPResponse(status: 405, headers: [("Allow", "GET, HEAD")]) }
            let reasons = readiness
            // Customers are still answered while the recorder is degraded, so readiness holds; the body says what is wrong.
            let found = degradations
            let degraded = found.isEmpty ? "" : "degraded:\n" + found.map { "  \($0)\n" }.joined()
            return reasons.isEmpty ? text(200, "ready\n" + degraded) : text(503, "not ready:\n" + reasons.map { "  \($0)\n" }.joined() + degraded)
        case Self.metricsPath:
            guard isRead else { return HTTPResponse(status: 405, headers: [("Allow", "GET, HEAD")]) }
            return HTTPResponse(status: 200, headers: [("Content-Type", "text/plain; version=0.0.4; charset=utf-8")],
                                body: Data(metrics.render(now: clock.time()).utf8))
        default:
            return HTTPResponse(status: 404)
        }
    }

    /// The operations routes; neither the realtime path nor the notifications path may take one.
    public static let healthPath = "/healthz", readinessPath = "/readyz", metricsPath = "/metrics"
    public static let operationsPaths = [healthPath, readinessPath, metricsPath]

    /// The realtime path of an environment whose App names no `realtimeURL`.
    public static func defaultRealtimePath(for environment: Environment) -> String { "/apple/\(environment.rawValue)" }

    private static let jsonHeaders = [(name: "Content-Type", value: "application/json")]
    private static let empty = HTTPResponse(status: 200, headers: jsonHeaders, body: Data("{}".utf8))

    /// A rule's answer names the rule in `X-Retention-Sync-Rule` only when the request asked for it
    /// (`X-Retention-Sync-Ask-Rule`, which the emulator's simulated customers send and Apple never
    /// does): Apple is never told a rule's name.
    private static func headers(_ answered: Answered, namesRule: Bool) -> [(name: String, value: String)] {
        guard namesRule, let value = RealtimeResponseBody.ruleHeaderValue(answered.ruleId) else { return jsonHeaders }
        return jsonHeaders + [(name: RealtimeResponseBody.ruleHeader, value: value)]
    }

    private struct RequestBody: Decodable {
        var signedPayload: String
    }

    /// The body's `signedPayload`: Apple's one-field body is read by a strict scanner, and anything
    /// else by `JSONDecoder`, which accepts and refuses exactly what it always did.
    static func signedPayload(in body: Data) -> String? {
        if let object = FlatJSONObject(body), let payload = object.string("signedPayload") { return payload }
        return (try? JSONDecoder().decode(RequestBody.self, from: body))?.signedPayload
    }

    private func realtime(_ request: HTTPServerRequest, state: EndpointState, started: ContinuousClock.Instant,
                          later: () -> HTTPResponder) -> HTTPAnswer {
        let environment = state.endpoint.environment.rawValue
        var entry = RequestLogEntry(environment: environment, path: state.endpoint.path)
        // What the decision event says, filled in as the request is understood (recorded by `finish`).
        var facts: DecisionFacts? = recording.map {
            DecisionFacts(time: 0, environment: environment, requestIdentifier: nil, customer: nil, keyId: $0.pseudonyms.keyId,
                          productId: nil, localeRequested: nil, localeServed: nil, flow: nil, rule: nil, splitGroup: nil,
                          splitControl: false, answer: .refused, messageIdentifier: nil, offerIdentifier: nil,
                          alternateProductId: nil, snapshot: nil, latencyMicros: 0)
        }
        if let shedAfter, ContinuousClock.now - started > shedAfter {
            return .now(finish(.shed, Self.empty, entry: &entry, started: started, facts: &facts))
        }
        // Apple's body is read in place: the JWS's bytes go to the verifier as they are; any other
        // shape takes the String path, which accepts and refuses exactly what it always did.
        let body = [UInt8](request.body)
        let compact = FlatJSONObject.stringRange("signedPayload", in: body).map { body[$0] }
        let text = compact == nil ? Self.signedPayload(in: request.body) : nil
        guard compact != nil || text != nil else {
            return .now(finish(.badRequest, HTTPResponse(status: 400), entry: &entry, started: started, facts: &facts))
        }
        let decoded: DecodedRealtimeRequestBody
        do {
            if let compact {
                decoded = try state.verifier.verify(compactJWS: compact)
            } else {
                decoded = try state.verifier.verify(signedPayload: text ?? "")
            }
        } catch {
            metrics.verificationFailure(environment: environment, reason: error.reason)
            return .now(finish(.unauthorized(reason: error.reason), HTTPResponse(status: 401), entry: &entry, started: started, facts: &facts))
        }
        entry.requestIdentifier = decoded.requestIdentifier
        entry.productId = decoded.productId
        entry.userLocale = decoded.userLocale
        entry.transaction = log.transactionHash(decoded.originalTransactionId)
        if let recording {
            facts?.requestIdentifier = decoded.requestIdentifier
            facts?.customer = recording.pseudonyms.pseudonym(decoded.originalTransactionId)
            facts?.productId = decoded.productId
            facts?.localeRequested = decoded.userLocale
        }
        guard let serving = state.current else {
            return .now(finish(.notReady, Self.empty, entry: &entry, started: started, facts: &facts))
        }
        entry.snapshot = serving.snapshot.digest
        facts?.snapshot = serving.snapshot.digest
        let namesRule = request.header(RealtimeResponseBody.askRuleHeader) != nil
        guard let store = customerFacts[state.endpoint.environment], let pseudonym = facts?.customer else {
            return .now(decide(decoded, serving: serving, customer: nil, namesRule: namesRule, entry: &entry, started: started, facts: &facts))
        }
        var found = store.facts(for: pseudonym)
        if found.source == .unknown, let lookup = lookups[state.endpoint.environment] {
            if let remembered = lookup.remembered(pseudonym) {
                found = (remembered.facts, remembered.found ? .lookup : .unknown)
            } else {
                let start = lookup.start(transactionId: decoded.originalTransactionId, pseudonym: pseudonym, bundleId: serving.snapshot.bundleId,
                                         verifier: notificationVerifier(for: state), arrived: started) { [entry, facts] in
                    // The responder only for a lookup sent: a paced customer is answered now, with none made.
                    let responder = later()
                    return { [self] looked in
                        var entry = entry, facts = facts
                        responder.respond(decide(decoded, serving: serving, customer: (looked, looked == nil ? .unknown : .lookup),
                                                 namesRule: namesRule, entry: &entry, started: started, facts: &facts))
                    }
                }
                if case .started = start { return .later }
            }
        }
        return .now(decide(decoded, serving: serving, customer: found, namesRule: namesRule, entry: &entry, started: started, facts: &facts))
    }

    /// Decides with what is known of the customer (and where it came from), and finishes the request.
    private func decide(_ decoded: DecodedRealtimeRequestBody, serving: Serving, customer found: (facts: CustomerFacts?, source: FactsSource)?,
                        namesRule: Bool, entry: inout RequestLogEntry, started: ContinuousClock.Instant,
                        facts: inout DecisionFacts?) -> HTTPResponse {
        let customer = found?.facts
        if let found {
            facts?.known = KnownFacts(found.facts, source: found.source, at: decoded.signedDate)
            metrics.factsLookup(environment: entry.environment, source: found.source.rawValue)
        }
        let decision: Decision
        do {
            decision = try serving.engine.decide(decoded, customer: customer)
        } catch {
            // Apple counts any non-2xx as a failure; `{}` lets it show the default message instead.
            return finish(.internalError, Self.empty, entry: &entry, started: started, facts: &facts)
        }
        switch decision {
        case .noAnswer:
            return finish(.noAnswer, Self.empty, entry: &entry, started: started, facts: &facts)
        case .ruleAnswersNone(let answered):
            return finish(.ruleAnswersNone(answered), HTTPResponse(status: 200, headers: Self.headers(answered, namesRule: namesRule), body: Self.empty.body),
                          entry: &entry, started: started, facts: &facts)
        case .respond(let body, let answered):
            return finish(.answered(answered), HTTPResponse(status: 200, headers: Self.headers(answered, namesRule: namesRule), body: Data(body.canonicalJSON)),
                          entry: &entry, started: started, facts: &facts)
        }
    }

    /// Counts the request, writes its log line, records its decision event and hands the response
    /// back: the one place an outcome is worded for each of the three.
    private func finish(_ outcome: RequestOutcome, _ response: HTTPResponse, entry: inout RequestLogEntry,
                        started: ContinuousClock.Instant, facts: inout DecisionFacts?) -> HTTPResponse {
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        metrics.request(environment: entry.environment, outcome: outcome.logName, seconds: seconds)
        if let answered = outcome.answered {
            metrics.decision(environment: entry.environment, answered: answered, kind: outcome.answer.rawValue)
        }
        outcome.describe(into: &entry)
        entry.status = response.status
        entry.latencyMs = (seconds * 1e6).rounded() / 1000
        let now = UTCTime(now: clock)
        entry.time = now.formatted()
        log.write(entry)
        if var event = facts, let recording {
            outcome.describe(into: &event)
            event.time = now.milliseconds
            event.latencyMicros = Int64((seconds * 1e6).rounded())
            recording.recorder.record(event.record())
        }
        return response
    }

    // MARK: Notifications

    /// Verifies a notification as Apple's libraries do, for an environment this server serves, and
    /// records its outcome. 200 once recorded (or when it concerns no customer), 401 when refused.
    private func notification(_ request: HTTPServerRequest, recording: Recording) -> HTTPResponse {
        guard let signedPayload = Self.signedPayload(in: request.body) else {
            metrics.notification(environment: "unknown", outcome: "bad_request")
            return HTTPResponse(status: 400)
        }
        // The environment the payload claims picks the verifier, which then checks that claim.
        let claimed = Self.claimedEnvironment(signedPayload)
        guard let state = ordered.first(where: { $0.endpoint.environment.appleName == claimed }) ?? ordered.first else {
            return HTTPResponse(status: 404)
        }
        let environment = state.endpoint.environment
        let verifier = notificationVerifier(for: state)
        let verified: VerifiedNotification
        do {
            verified = try verifier.verify(signedPayload: signedPayload)
        } catch {
            metrics.verificationFailure(environment: environment.rawValue, reason: "notification_" + error.reason)
            metrics.notification(environment: environment.rawValue, outcome: "refused")
            log.event("notification_refused", "a notification was refused: \(error.description)", time: UTCTime(now: clock))
            return HTTPResponse(status: 401)
        }
        if let facts = OutcomeFacts(verified, environment: environment, pseudonyms: recording.pseudonyms, source: .push) {
            recording.recorder.record(facts.record())
            if let previous = recording.previousPseudonyms,
               let copy = OutcomeFacts(verified, environment: environment, pseudonyms: previous, source: .push) {
                recording.recorder.record(copy.record())
            }
            customerFacts[environment]?.observe(FactsObservation(signedDate: verified.payload.signedDate, notification: verified.payload.notificationUUID,
                                                                 transaction: verified.transaction,
                                                                 renewal: verified.renewalInfo), pseudonym: facts.customer)
            metrics.notification(environment: environment.rawValue, outcome: "recorded")
        } else {
            metrics.notification(environment: environment.rawValue, outcome: "not_about_a_customer")
        }
        onNotification?(request.body)
        return HTTPResponse(status: 200)
    }

    private func notificationVerifier(for state: EndpointState) -> NotificationVerifier {
        let snapshot = state.current?.snapshot
        let bundleId = state.endpoint.bundleId ?? snapshot?.bundleId
        let appAppleId = state.endpoint.appAppleId ?? snapshot?.appAppleId
        let key = "\(state.endpoint.environment.rawValue)|\(bundleId ?? "")|\(appAppleId.map(String.init) ?? "")"
        if let cached = notificationVerifiers.withLock({ $0[key] }) { return cached }
        let made = NotificationVerifier(trustedRoots: trustedRoots, bundleId: bundleId, appAppleId: appAppleId,
                                        environment: state.endpoint.environment, clock: clock)
        notificationVerifiers.withLock { $0[key] = made }
        return made
    }

    /// `data.environment` as the unverified payload claims it (only to choose the verifier). Read
    /// from the payload's bytes: the header before it holds most of a notification's 5 KB.
    static func claimedEnvironment(_ jws: String) -> String? {
        let utf8 = Array(jws.utf8)
        let dot = UInt8(ascii: ".")
        guard let first = utf8.firstIndex(of: dot), let second = utf8[(first + 1)...].firstIndex(of: dot),
              let json = Base64URL.decode(utf8[(first + 1)..<second]) else { return nil }
        // The environment's spellings are few and short: find which one the payload's `data` names.
        let text = String(decoding: json, as: UTF8.self)
        for name in ["Production", "Sandbox", "Xcode", "LocalTesting"] where text.contains("\"environment\":\"\(name)\"") {
            return name
        }
        // Not Apple's compact form: read it properly.
        struct Claim: Decodable {
            struct Data: Decodable { var environment: String? }
            var data: Data?
        }
        return (try? JSONDecoder().decode(Claim.self, from: Foundation.Data(json)))?.data?.environment
    }

    private func text(_ status: Int, _ body: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "text/plain; charset=utf-8")], body: Data(body.utf8))
    }
}

/// A response handed from the thread that decided to the thread that waits for it.
private final class LockedResponse: Sendable {
    private let value = Mutex<HTTPResponse?>(nil)

    func set(_ response: HTTPResponse?) { value.withLock { $0 = response } }
    func get() -> HTTPResponse? { value.withLock { $0 } }
}
