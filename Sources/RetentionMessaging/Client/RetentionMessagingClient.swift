public import Basics
public import RetentionMessagingModels
public import Foundation
public import HTTPCore
import Synchronization

/// The Retention Messaging API over an `HTTPTransport`: libcurl against Apple, or the emulator.
///
/// Every request carries a fresh ES256 token, is paced to Apple's budget for its endpoint class,
/// waits out 429s until `Retry-After`, and retries transient failures with jittered backoff. A 401
/// that comes back when the token sent has (nearly) expired is sent again with a fresh token.
/// Nothing it logs or throws contains the key, a token or an `Authorization` header.
public final class RetentionMessagingClient: RetentionMessagingAPI, CustomReflectable {
    public let environment: Environment
    /// The API base URL, ending in `/inApps/v1/messaging`.
    public let endpoint: URL
    private let credentials: Credentials
    private let transport: any HTTPTransport
    private let pacing: Pacing
    /// The clock pacing runs on (progress output measures waits with it too).
    public let clock: any RetentionClock
    private let retry: RetryPolicy
    private let endpointProblem: String?
    private let credentialsProblem: String?
    /// Whether requests name their environment in `environmentRequestHeader`: only to an endpoint
    /// that is not one of Apple's hosts (an emulator serving both environments at one base URL).
    private let namesEnvironment: Bool
    private let slots: AsyncSemaphore
    private let state = Mutex(State())

    private struct State {
        var counts = RequestCounts()
        var historyCalls = 0
        var buckets: [EndpointClass: TokenBucket] = [:]
        var waitHandler: (@Sendable (Double, String) -> Void)?
        var logHandler: (@Sendable (String) -> Void)?
        var random = SystemRandomNumberGenerator()
    }

    /// `endpoint` overrides the host (for the emulator); plain `http://` is accepted only for
    /// loopback hosts, otherwise every call fails with `.invalidRequest` before sending anything.
    public init(environment: Environment, credentials: Credentials, transport: any HTTPTransport,
                endpoint: URL? = nil, pacing: Pacing = .apple, clock: any RetentionClock,
                retry: RetryPolicy = .default) {
        self.environment = environment
        self.credentials = credentials
        self.transport = transport
        let base = endpoint ?? Self.defaultEndpoint(for: environment)
        self.endpoint = base
        endpointProblem = Self.problem(with: base)
        namesEnvironment = !Self.appleHosts.contains(base.host?.lowercased() ?? "")
        credentialsProblem = Credentials.isUUID(credentials.issuerId) ? nil
            : "the issuer id is not a UUID (like 57246542-96fe-1a63-e053-0824d011072a): copy it from App Store Connect → Users and Access → Integrations; nothing was sent"
        self.pacing = pacing
        self.clock = clock
        self.retry = retry
        slots = AsyncSemaphore(pacing.maxConcurrentRequests)
    }

    /// `https://api.storekit.apple.com/inApps/v1/messaging`, or the `storekit-sandbox` host.
    /// The header an emulator names its environment in; Apple's hosts serve one environment each.
    static let emulatorEnvironmentHeader = "X-Emulator-Environment"
    /// The header an emulator's 401 names its reason in (Apple's has none).
    static let emulatorRefusalHeader = "X-Emulator-Refusal"

    /// The header a request names its environment in when it goes to an endpoint other than Apple's:
    /// an emulator serves both environments at one base URL and routes each request by it (a path
    /// that names an environment, `/sandbox/inApps/v1/messaging`, wins over it).
    public static let environmentRequestHeader = "X-Retention-Sync-Environment"

    /// Apple's API hosts, each serving one environment; requests to them never carry `environmentRequestHeader`.
    static let appleHosts: Set<String> = [
        "api.storekit.apple.com", "api.storekit.itunes.apple.com", "api.storekit-sandbox.apple.com", "api.storekit-sandbox.itunes.apple.com",
    ]

    private func wrongEnvironment(served: String, url: URL) -> String {
        let base = Self.serverAPIBase(endpoint).absoluteString
        let root = base.hasSuffix("/\(served)") ? String(base.dropLast(served.count + 1)) : base
        return "the endpoint \(endpoint.absoluteString) is an emulator serving its \(served) environment, but this run is for "
            + "\(environment.rawValue). Give the emulator's base URL (\(root)), which serves both environments and is "
            + "routed by --env, or the endpoint of \(environment.rawValue) (\(root)/\(environment.rawValue)/inApps/v1/messaging)"
    }

    public static func defaultEndpoint(for environment: Environment) -> URL {
        switch environment {
        case .production: URL(string: "https://api.storekit.apple.com" + RetentionMessagingPaths.base)!
        case .sandbox: URL(string: "https://api.storekit-sandbox.apple.com" + RetentionMessagingPaths.base)!
        }
    }

    public var requestCounts: RequestCounts { state.withLock { $0.counts } }

    /// Get Notification History calls made (attempts, retries included); budgeted apart from the
    /// Retention Messaging endpoints, so not in `requestCounts`.
    public var notificationHistoryCalls: Int { state.withLock { $0.historyCalls } }

    /// What `dump` shows: never the transport, whose queue may still hold requests and their
    /// Authorization headers.
    public var customMirror: Mirror {
        Mirror(self, children: [
            "environment": environment, "endpoint": endpoint, "credentials": credentials, "pacing": pacing, "retry": retry,
            "requestCounts": requestCounts,
        ], displayStyle: .class)
    }

    /// Called before each wait imposed by pacing, `Retry-After` or backoff (for progress output):
    /// the seconds to wait and why.
    public func onWait(_ handler: @escaping @Sendable (Double, String) -> Void) {
        state.withLock { $0.waitHandler = handler }
    }

    /// Called with one line per attempt and per answer (method, path, status, time), for verbose
    /// output. The lines never contain headers, tokens or bodies.
    public func onLog(_ handler: @escaping @Sendable (String) -> Void) {
        state.withLock { $0.logHandler = handler }
    }

    // MARK: Messages

    public func uploadMessage(identifier: String, body: UploadMessageRequestBody) async throws(RetentionMessagingError) {
        _ = try await send("PUT", ["message", identifier], json: body)
    }

    public func deleteMessage(identifier: String) async throws(RetentionMessagingError) {
        _ = try await send("DELETE", ["message", identifier], goneAfterRetry: AppleErrorCode.messageNotFound)
    }

    public func getMessageList() async throws(RetentionMessagingError) -> GetMessageListResponse {
        try decode(try await send("GET", ["message", "list"]))
    }

    // MARK: Images

    public func uploadImage(identifier: String, size: ImageSize, png: [UInt8]) async throws(RetentionMessagingError) {
        _ = try await send("PUT", ["image", identifier], query: [("imageSize", size.rawValue)], body: Data(png),
                           contentType: "image/png")
    }

    public func deleteImage(identifier: String) async throws(RetentionMessagingError) {
        _ = try await send("DELETE", ["image", identifier], goneAfterRetry: AppleErrorCode.imageNotFound)
    }

    public func getImageList() async throws(RetentionMessagingError) -> GetImageListResponse {
        try decode(try await send("GET", ["image", "list"]))
    }

    // MARK: Default messages

    public func configureDefaultMessage(productId: String, locale: String, messageIdentifier: String) async throws(RetentionMessagingError) {
        _ = try await send("PUT", ["default", productId, locale],
                           json: DefaultConfigurationRequest(messageIdentifier: messageIdentifier),
                           endpointClass: .configureDefault)
    }

    public func getDefaultMessage(productId: String, locale: String) async throws(RetentionMessagingError) -> DefaultConfigurationResponse? {
        do {
            return try decode(try await send("GET", ["default", productId, locale]))
        } catch .api(404, AppleErrorCode.defaultNotFound, _) {
            return nil
        }
    }

    public func deleteDefaultMessage(productId: String, locale: String) async throws(RetentionMessagingError) {
        _ = try await send("DELETE", ["default", productId, locale])
    }

    // MARK: Realtime URL

    public func configureRealtimeURL(_ url: String) async throws(RetentionMessagingError) {
        _ = try await send("PUT", ["realtime", "url"], json: RealtimeURLRequest(realtimeURL: url), noAccessOn404: true)
    }

    public func getRealtimeURL() async throws(RetentionMessagingError) -> String? {
        do {
            let answer: RealtimeUrlResponse = try decode(try await send("GET", ["realtime", "url"], noAccessOn404: true))
            return answer.realtimeURL
        } catch .api(404, AppleErrorCode.realtimeURLNotFound, _) {
            return nil
        }
    }

    public func deleteRealtimeURL() async throws(RetentionMessagingError) {
        _ = try await send("DELETE", ["realtime", "url"], noAccessOn404: true)
    }

    // MARK: Performance test (sandbox only)

    public func initiatePerformanceTest(originalTransactionId: String) async throws(RetentionMessagingError) -> PerformanceTestResponse {
        guard environment == .sandbox else { throw .invalidRequest(Self.sandboxOnly) }
        return try decode(try await send("POST", ["performanceTest"],
                                  json: PerformanceTestRequest(originalTransactionId: originalTransactionId), noAccessOn404: true))
    }

    /// A 404 with `errorCode` 4040018 is an unknown request id; one without a code is `.noAPIAccess`.
    public func getPerformanceTestResult(requestId: String) async throws(RetentionMessagingError) -> PerformanceTestResultResponse {
        guard environment == .sandbox else { throw .invalidRequest(Self.sandboxOnly) }
        return try decode(try await send("GET", ["performanceTest", "result", requestId], noAccessOn404: true))
    }

    // MARK: App Store Server API

    /// One page of Get Notification History (`POST /inApps/v1/notifications/history`): at most 20
    /// records; send the same `request` with the page's `paginationToken` for the next. Paced at the
    /// App Store Server API's rate for it (50/s in production, 5/s in sandbox, enforced hourly).
    public func notificationHistory(_ request: NotificationHistoryRequest,
                                    paginationToken: String? = nil) async throws(RetentionMessagingError) -> NotificationHistoryResponse {
        let body: Data
        do {
            body = try CanonicalJSON.encode(request)
        } catch {
            throw .invalidRequest("could not encode the request body: \(error)")
        }
        let response = try await send("POST", [], query: paginationToken.map { [("paginationToken", $0)] } ?? [], body: body,
                                      contentType: "application/json", endpointClass: .notificationHistory,
                                      base: Self.serverAPIBase(endpoint).absoluteString + NotificationHistoryFacts.path, idempotent: true)
        return try decode(response)
    }

    /// The App Store Server API's base: the Retention Messaging endpoint without `/inApps/v1/messaging`.
    static func serverAPIBase(_ endpoint: URL) -> URL {
        var text = endpoint.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        if text.hasSuffix(RetentionMessagingPaths.base) { text.removeLast(RetentionMessagingPaths.base.count) }
        return URL(string: text) ?? endpoint
    }

    static let sandboxOnly = "Apple runs the performance test in sandbox only (it tests the sandbox realtime URL); use a sandbox client"

    // MARK: Sending

    private func send<Body: Encodable>(_ method: String, _ segments: [String], json: Body, endpointClass: EndpointClass = .other,
                                       noAccessOn404: Bool = false) async throws(RetentionMessagingError) -> HTTPResponse {
        let body: Data
        do {
            body = try CanonicalJSON.encode(json)
        } catch {
            throw .invalidRequest("could not encode the request body: \(error)")
        }
        return try await send(method, segments, body: body, contentType: "application/json", endpointClass: endpointClass,
                              noAccessOn404: noAccessOn404)
    }

    /// One call as its attempts send it.
    private struct Call {
        var method: String
        var segments: [String]
        var url: URL
        var body: Data
        var contentType: String?
        var endpointClass: EndpointClass
        var goneAfterRetry: Int?
        var noAccessOn404: Bool
        /// Whether sending it twice does no more than sending it once.
        var idempotent: Bool

        /// How the log and the waits name it.
        var name: String { "\(method) \(url.path)" }
    }

    /// What the retry policy counts across one call's attempts.
    private struct Attempts {
        var count = 0
        var transientFailures = 0
        var rateLimitWaits = 0
        var renewals = 0
        /// An attempt may have reached the API before it failed.
        var mayHaveLanded = false
    }

    /// What an answer means for the call: it is done, or it is tried again after a wait.
    private enum NextStep {
        case done(HTTPResponse)
        case waitOutRateLimit
        case backOff
        case renewToken
    }

    /// Sends one call, with pacing, `Retry-After` waits and retries. `goneAfterRetry` is the
    /// not-found code of a DELETE: seen on a retry after an attempt that may have landed, it
    /// means that attempt did the work. `noAccessOn404` marks the endpoints whose documented 404
    /// without an `errorCode` means the account has no access to the API.
    private func send(_ method: String, _ segments: [String], query: [(String, String)] = [], body: Data = Data(),
                      contentType: String? = nil, endpointClass: EndpointClass = .other,
                      goneAfterRetry: Int? = nil, noAccessOn404: Bool = false, base: String? = nil,
                      idempotent: Bool? = nil) async throws(RetentionMessagingError) -> HTTPResponse {
        if let endpointProblem { throw .invalidRequest(endpointProblem) }
        if let credentialsProblem { throw .credentials(credentialsProblem) }
        // POST starts a performance test: repeating it after an ambiguous failure could start a second
        // one. Get Notification History is a POST that only reads.
        let call = Call(method: method, segments: segments, url: try makeURL(segments, query: query, base: base), body: body,
                        contentType: contentType, endpointClass: endpointClass, goneAfterRetry: goneAfterRetry,
                        noAccessOn404: noAccessOn404, idempotent: idempotent ?? (method != "POST"))

        await slots.acquire()
        defer { slots.release() }

        var attempts = Attempts()
        while true {
            try await pace(endpointClass)
            let signedAt = clock.now()
            let request = try signedRequest(call, signedAt: signedAt, attempts: &attempts)
            log("→ \(call.name)" + (attempts.count > 1 ? " (attempt \(attempts.count))" : ""))
            let started = ContinuousClock.now
            let response: HTTPResponse
            do {
                response = try await transport.send(request)
            } catch {
                log("← \(call.name): \(error) after \(Self.milliseconds(since: started)) ms")
                try await retryAfter(error, call, attempts: &attempts)
                continue
            }
            log("← \(call.name): \(response.status) in \(Self.milliseconds(since: started)) ms")
            if let served = response.header(Self.emulatorEnvironmentHeader), served != environment.rawValue {
                throw .invalidRequest(wrongEnvironment(served: served, url: call.url))
            }
            switch try nextStep(after: response, call, attempts: attempts, signedAt: signedAt) {
            case .done(let response):
                return response
            case .waitOutRateLimit:
                attempts.rateLimitWaits += 1
                try await waitOutRateLimit(response, endpointClass: endpointClass, reason: call.name)
            case .backOff:
                attempts.transientFailures += 1
                attempts.mayHaveLanded = true
                try await backOff(attempts.transientFailures, reason: "\(call.name) answered \(response.status)")
            case .renewToken:
                attempts.renewals += 1
            }
        }
    }

    /// The attempt's request, signed with a token made now, and counted.
    private func signedRequest(_ call: Call, signedAt: Double, attempts: inout Attempts) throws(RetentionMessagingError) -> HTTPRequest {
        let token = try AuthenticationToken.make(credentials, now: signedAt)
        attempts.count += 1
        let attempt = attempts.count
        state.withLock { state in
            switch call.endpointClass {
            case .configureDefault: state.counts.configureDefault += 1
            case .other: state.counts.other += 1
            case .notificationHistory: state.historyCalls += 1
            // serve's live lookup sends these through SubscriptionStatusClient, never through this client.
            case .subscriptionStatus: break
            }
            if attempt > 1 { state.counts.retries += 1 }
        }
        var headers: [(name: String, value: String)] = [
            (name: "Authorization", value: "Bearer " + token),
            (name: "Accept", value: "application/json"),
        ]
        if let contentType = call.contentType { headers.append((name: "Content-Type", value: contentType)) }
        if namesEnvironment { headers.append((name: Self.environmentRequestHeader, value: environment.rawValue)) }
        return HTTPRequest(method: call.method, url: call.url, headers: headers, body: call.body)
    }

    /// Backs off after a transport failure, or throws it: only a transient one is retried, and only
    /// when the call is idempotent or the request never left.
    private func retryAfter(_ error: HTTPError, _ call: Call, attempts: inout Attempts) async throws(RetentionMessagingError) {
        attempts.transientFailures += 1
        let neverSent = error.kind == .couldNotConnect || error.kind == .connectTimeout
        guard error.isTransient, call.idempotent || neverSent, attempts.transientFailures < retry.maxAttempts else {
            throw .transport(error)
        }
        if !neverSent { attempts.mayHaveLanded = true }
        try await backOff(attempts.transientFailures, reason: "\(call.name) failed (\(error.kind.rawValue))")
    }

    /// What the API's answer means: success, a wait before the next attempt, or the error to throw.
    private func nextStep(after response: HTTPResponse, _ call: Call, attempts: Attempts,
                          signedAt: Double) throws(RetentionMessagingError) -> NextStep {
        switch response.status {
        case 200..<300:
            return .done(response)
        case 429 where attempts.rateLimitWaits < retry.maxRateLimitWaits:
            return .waitOutRateLimit
        case 500..<600 where call.idempotent && attempts.transientFailures + 1 < retry.maxAttempts:
            return .backOff
        case 401 where attempts.renewals < AuthenticationToken.maxRenewals
                    && AuthenticationToken.isNearExpiry(signedAt: signedAt, now: clock.now()):
            // The token expired on its way: a request held up (or, on a virtual clock, others'
            // pacing waits moving time while it was in flight). Apple's 401 does not say why, so the
            // client judges by its own clock, and a 401 for a fresh token is never sent again.
            return .renewToken
        case 401:
            throw .unauthorized(bundleId: credentials.bundleId, refusal: response.header(Self.emulatorRefusalHeader))
        default:
            let error = Self.apiError(response)
            if call.noAccessOn404, error.status == 404, error.errorCode == nil {
                throw .noAPIAccess(endpoint: "\(call.method) /\(call.segments.prefix(2).joined(separator: "/"))")
            }
            if attempts.mayHaveLanded, let goneAfterRetry = call.goneAfterRetry, error.status == 404, error.errorCode == goneAfterRetry {
                return .done(HTTPResponse(status: 200))
            }
            throw error
        }
    }

    private func makeURL(_ segments: [String], query: [(String, String)], base: String? = nil) throws(RetentionMessagingError) -> URL {
        var text = base ?? endpoint.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        for segment in segments {
            guard !segment.isEmpty else { throw .invalidRequest("an empty path segment in \(segments.joined(separator: "/"))") }
            text += "/" + Self.pathSegment(segment)
        }
        if !query.isEmpty {
            text += "?" + query.map { "\(Self.percentEncoded($0.0))=\(Self.percentEncoded($0.1))" }.joined(separator: "&")
        }
        guard let url = URL(string: text) else { throw .invalidRequest("cannot form a URL for \(segments.joined(separator: "/"))") }
        return url
    }

    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// One path segment, always exactly one: `.` and `..` are sent as `%2E` and `%2E%2E`, because
    /// URL parsers and libcurl resolve them as dot-segments (`/default/../en-US` would reach another
    /// route); an identifier can never change which endpoint a request goes to.
    static func pathSegment(_ text: String) -> String {
        text == "." || text == ".." ? String(repeating: "%2E", count: text.count) : percentEncoded(text)
    }

    private static func percentEncoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }

    private func pace(_ endpointClass: EndpointClass) async throws(RetentionMessagingError) {
        guard let rate = pacing.rate(for: endpointClass, in: environment) else { return }
        let now = clock.now()
        let window = pacing.window
        let (wait, handler) = state.withLock { state in
            var bucket = state.buckets[endpointClass] ?? TokenBucket(capacity: (rate * window).rounded(.down), rate: rate, now: now)
            let wait = bucket.reserve(now: now)
            state.buckets[endpointClass] = bucket
            return (wait, state.waitHandler)
        }
        guard wait > 0 else { return }
        let perHour = Int((rate * 3600).rounded())
        let what = switch endpointClass {
        case .configureDefault: "configure-default requests"
        case .notificationHistory: "notification-history requests"
        case .subscriptionStatus: "subscription-status requests"
        case .other: "requests"
        }
        handler?(wait, "pacing to \(perHour) \(what) per hour in \(environment.rawValue)")
        try await sleep(until: now + wait)
    }

    private func waitOutRateLimit(_ response: HTTPResponse, endpointClass: EndpointClass,
                                  reason: String) async throws(RetentionMessagingError) {
        let now = clock.now()
        let deadline: Double
        if let value = response.header("Retry-After").flatMap({ Double($0.trimmingWhitespace) }) {
            // Apple sends UNIX milliseconds; seconds (absolute or relative) are accepted too.
            deadline = value > 100_000_000_000 ? value / 1000 : value > 1_000_000_000 ? value : now + value
        } else {
            deadline = now + retry.delay(beforeRetry: 1, jitter: nextJitter())
        }
        let wait = max(0, deadline - now)
        let handler = state.withLock { state in
            state.buckets[endpointClass]?.drain(until: deadline, now: now)
            return state.waitHandler
        }
        if wait > 0 {
            handler?(wait, "rate limited (HTTP 429) on \(reason); waiting for Retry-After")
        }
        try await sleep(until: deadline)
    }

    private func backOff(_ retryNumber: Int, reason: String) async throws(RetentionMessagingError) {
        let wait = retry.delay(beforeRetry: retryNumber, jitter: nextJitter())
        if wait > 0 {
            state.withLock { $0.waitHandler }?(wait, "\(reason); retrying")
        }
        try await sleep(until: clock.now() + wait)
    }

    private func nextJitter() -> Double {
        state.withLock { Double.random(in: 0...1, using: &$0.random) }
    }

    private func sleep(until deadline: Double) async throws(RetentionMessagingError) {
        do {
            try await clock.sleep(until: deadline)
        } catch {
            throw .transport(HTTPError(.other, "cancelled while waiting to send"))
        }
    }

    private func log(_ line: String) {
        state.withLock { $0.logHandler }?(line)
    }

    private static func milliseconds(since start: ContinuousClock.Instant) -> Int {
        let elapsed = ContinuousClock.now - start
        return Int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)
    }

    private func decode<T: Decodable>(_ response: HTTPResponse) throws(RetentionMessagingError) -> T {
        do {
            return try JSONDecoder().decode(T.self, from: response.body)
        } catch {
            throw .decoding("the answer is not the \(T.self) JSON Apple documents (\(response.body.count) bytes, HTTP \(response.status))")
        }
    }

    /// Apple's error body when there is one; the status alone otherwise. Unknown codes are kept.
    static func apiError(_ response: HTTPResponse) -> RetentionMessagingError {
        struct LenientErrorPayload: Decodable {
            var errorCode: Int?
            var errorMessage: String?
        }
        let payload = try? JSONDecoder().decode(LenientErrorPayload.self, from: response.body)
        return .api(status: response.status, errorCode: payload?.errorCode, errorMessage: payload?.errorMessage)
    }

    static func problem(with endpoint: URL) -> String? {
        guard let scheme = endpoint.scheme?.lowercased(), let host = endpoint.host?.lowercased(), !host.isEmpty else {
            return "the endpoint '\(endpoint.absoluteString)' is not an absolute http(s) URL"
        }
        switch scheme {
        case "https": return nil
        case "http":
            return isLoopback(host) ? nil
                : "plain http:// is accepted only for loopback hosts (127.0.0.1, ::1, localhost); use https:// for \(host)"
        default:
            return "the endpoint '\(endpoint.absoluteString)' must use https:// (or http:// on loopback)"
        }
    }

    /// Whether `host` is 127.0.0.0/8, ::1 or localhost.
    public static func isLoopback(_ host: String) -> Bool {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if bare == "localhost" || bare == "::1" || bare == "0:0:0:0:0:0:0:1" { return true }
        let parts = bare.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts.allSatisfy({ UInt8($0) != nil }) else { return false }
        return parts[0] == "127"
    }
}
