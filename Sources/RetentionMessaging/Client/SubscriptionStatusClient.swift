public import Basics
public import Foundation
public import HTTPCore
public import RetentionMessagingModels
import Synchronization

/// Get All Subscription Statuses for `serve`'s live lookup: one attempt with a timeout, no pacing
/// waits and no retries (the caller paces, and a late answer is worth nothing to a customer who is
/// waiting). The bearer token is reused for most of its five minutes, so a lookup costs no signature.
/// Nothing it returns holds the key, the token or the transaction id.
public final class SubscriptionStatusClient: Sendable {
    public enum Failure: Error, Sendable, Hashable, CustomStringConvertible {
        /// 404: Apple knows no transaction by that id (4040010), or no customer.
        case notFound
        /// 429: the budget is spent until `retryAfter` (UNIX seconds), when Apple says.
        case rateLimited(retryAfter: Double?)
        /// Another non-2xx answer, with Apple's error code when the body has one.
        case refused(status: Int, errorCode: Int?)
        /// No answer: not connected, timed out, cut off.
        case unreachable(String)
        /// A 2xx answer that is not a `StatusResponse`.
        case malformed
        /// The key could not sign a token.
        case credentials(String)

        public var description: String {
            switch self {
            case .notFound: "Apple knows no such transaction (404)"
            case .rateLimited: "rate limited by Apple (429)"
            case .refused(let status, let code): "refused with HTTP \(status)" + (code.map { " (error \($0))" } ?? "")
            case .unreachable(let reason): "no answer: \(reason)"
            case .malformed: "the answer is not Apple's StatusResponse"
            case .credentials(let reason): reason
            }
        }
    }

    public let environment: Environment
    /// The App Store Server API's base (no path): Apple's host for the environment, or an emulator's.
    public let base: URL
    private let transport: any HTTPTransport
    private let clock: any RetentionClock
    private let namesEnvironment: Bool
    private let token = Mutex<(bundleId: String, keyId: String, signedAt: Double, text: String)?>(nil)
    private let sent = Atomic<Int>(0)

    public init(environment: Environment, transport: any HTTPTransport, base: URL? = nil, clock: any RetentionClock) {
        self.environment = environment
        self.transport = transport
        self.clock = clock
        let base = base ?? Self.appleBase(for: environment)
        self.base = base
        namesEnvironment = !RetentionMessagingClient.appleHosts.contains(base.host?.lowercased() ?? "")
    }

    /// `https://api.storekit.itunes.apple.com` or its sandbox twin, as Apple's documentation writes them.
    public static func appleBase(for environment: Environment) -> URL {
        switch environment {
        case .production: URL(string: "https://api.storekit.itunes.apple.com")!
        case .sandbox: URL(string: "https://api.storekit-sandbox.itunes.apple.com")!
        }
    }

    /// Why `base` cannot be used (not http(s), or plain http:// off loopback); nil when it can.
    public static func problem(with base: URL) -> String? { RetentionMessagingClient.problem(with: base) }

    /// Requests sent so far: each one spends Apple's rate-limit budget.
    public var requestsSent: Int { sent.load(ordering: .relaxed) }

    /// The customer's subscriptions, or why not, within `timeout` seconds.
    public func statuses(transactionId: String, credentials: Credentials, timeout: Double) async -> Result<StatusResponse, Failure> {
        guard !transactionId.isEmpty, transactionId.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            return .failure(.refused(status: 400, errorCode: NotificationHistoryFacts.invalidTransactionId))
        }
        let bearer: String
        do {
            bearer = try currentToken(credentials)
        } catch {
            return .failure(.credentials("\(error)"))
        }
        var text = base.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        guard let url = URL(string: text + SubscriptionStatusFacts.path(transactionId: transactionId)) else {
            return .failure(.unreachable("the endpoint \(base.absoluteString) does not make a URL"))
        }
        var headers: [(name: String, value: String)] = [("Authorization", "Bearer " + bearer), ("Accept", "application/json")]
        if namesEnvironment { headers.append((RetentionMessagingClient.environmentRequestHeader, environment.rawValue)) }
        sent.add(1, ordering: .relaxed)
        let response: HTTPResponse
        do {
            response = try await transport.send(HTTPRequest(method: "GET", url: url, headers: headers, connectTimeout: timeout, timeout: timeout))
        } catch {
            return .failure(.unreachable(error.kind.rawValue))
        }
        return Self.interpret(response)
    }

    static func interpret(_ response: HTTPResponse) -> Result<StatusResponse, Failure> {
        switch response.status {
        case 200..<300:
            guard let decoded = try? JSONDecoder().decode(StatusResponse.self, from: response.body) else { return .failure(.malformed) }
            return .success(decoded)
        case 404:
            return .failure(.notFound)
        case 429:
            // Apple's Retry-After is a UNIX time in milliseconds.
            let retryAfter = response.header("Retry-After").flatMap(Double.init).map { $0 / 1000 }
            return .failure(.rateLimited(retryAfter: retryAfter))
        default:
            if case .api(_, let code, _) = RetentionMessagingClient.apiError(response) {
                return .failure(.refused(status: response.status, errorCode: code))
            }
            return .failure(.refused(status: response.status, errorCode: nil))
        }
    }

    /// A token signed at most a few minutes ago for this App and key, or a new one.
    private func currentToken(_ credentials: Credentials) throws(RetentionMessagingError) -> String {
        let now = clock.now()
        if let held = token.withLock({ $0 }), held.bundleId == credentials.bundleId, held.keyId == credentials.keyId,
           now >= held.signedAt, !AuthenticationToken.isNearExpiry(signedAt: held.signedAt, now: now) {
            return held.text
        }
        let made = try AuthenticationToken.make(credentials, now: now)
        token.withLock { $0 = (credentials.bundleId, credentials.keyId, now, made) }
        return made
    }
}
