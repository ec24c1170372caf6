public import Basics
import Crypto
import Foundation
import HTTPCore
import RetentionMessaging
public import RetentionMessagingModels
import Synchronization

// Get Notification History, as the App Store Server API answers it
// (developer.apple.com/documentation/appstoreserverapi/get-notification-history).

extension Emulator {
    /// The emulator's now: its configured clock, plus however far a customer simulation moved it.
    /// History windows and "an `endDate` in the future counts as now" are read from it.
    public var now: UTCTime { UTCTime(milliseconds: Int64(((configuration.clock.now() + clockOffset) * 1000).rounded(.down))) }

    /// Seconds a customer simulation moved the emulator's clock ahead of `configuration.clock` (0 until then).
    public var clockOffset: Double { core.withLock { $0.clockOffset } }

    /// Moves the emulator's clock ahead of `configuration.clock` by `seconds` (never back: a smaller
    /// value than the current offset is ignored).
    public func setClockOffset(_ seconds: Double) {
        core.withLock { $0.clockOffset = max($0.clockOffset, seconds) }
    }

    /// Every notification the emulator produced for an app (nil: the first app) in `environment`, in the order produced.
    public func notificationHistory(in environment: Environment, bundleId: String? = nil) -> [NotificationHistoryRecord] {
        state(of: environment, bundleId: bundleId).notificationHistory
    }

    /// Appends notifications to an app's history in an environment (and writes the state file, if any).
    public func appendNotificationHistory(_ records: [NotificationHistoryRecord], in environment: Environment, bundleId: String? = nil) {
        guard !records.isEmpty else { return }
        core.withLock { core in core[core.app(bundleId), environment].state.notificationHistory.append(contentsOf: records) }
        persist()
    }

    /// Adds a later attempt to send a notification to its entry in the history (the entry is kept
    /// where it is: Apple's history lists notifications by their first attempt). Saved by the caller.
    func addSendAttempt(_ attempt: SendAttemptItem, to notificationUUID: String, in environment: Environment, bundleId: String) {
        core.withLock { core in
            let app = core.app(bundleId)
            guard let index = core[app, environment].state.notificationHistory.lastIndex(where: { $0.notificationUUID == notificationUUID }) else { return }
            core[app, environment].state.notificationHistory[index].sendAttempts.append(attempt)
        }
    }

    /// Apple's 429 (with `Retry-After` in UNIX milliseconds) for an App Store Server API endpoint whose
    /// budget is spent, taking a token otherwise; nil while rate limits are off or a token was there.
    func serverAPILimit(_ endpointClass: EndpointClass, bucket: inout TokenBucket?, environment: Environment, now: Double) -> RouteResult? {
        guard let limits = configuration.rateLimit.limits else { return nil }
        let perSecond = limits.perSecond(endpointClass, in: environment)
        var taken = bucket ?? TokenBucket(capacity: perSecond * limits.window, rate: perSecond, now: now)
        let wait = taken.take(now: now)
        bucket = taken
        guard let wait else { return nil }
        var response = Responses.error(429, NotificationHistoryFacts.rateLimitExceeded, "Rate limit exceeded.")
        response.headers.append((name: "Retry-After", value: String(Int64(((now + wait) * 1000).rounded(.up)))))
        return RouteResult(response: response, note: "rate limited")
    }

    /// `POST /inApps/v1/notifications/history[?paginationToken=…]`. Runs under the core's lock,
    /// after the bearer token was accepted; `now` is the configured clock's.
    func notificationHistoryRoute(_ request: ParsedRequest, app: String, environment: Environment, core: inout Core, now: Double) -> RouteResult {
        guard request.method == "POST" else { return RouteResult(response: HTTPResponse(status: 405), note: "method not allowed") }
        if let refused = serverAPILimit(.notificationHistory, bucket: &core[app, environment].historyBucket, environment: environment, now: now) {
            return refused
        }
        let nowMs = Int64(((now + core.clockOffset) * 1000).rounded(.down))
        switch HistoryQuery.parse(request.body, paginationToken: request.query["paginationToken"], environment: environment, now: nowMs) {
        case .failure(let refusal):
            return RouteResult(response: Responses.error(400, refusal.code, refusal.message), note: refusal.message)
        case .success(let query):
            let page = query.page(of: core[app, environment].state.notificationHistory)
            return RouteResult(response: Responses.json(page))
        }
    }
}

/// A Get Notification History request, checked as Apple checks it, and the page it asks for.
struct HistoryQuery {
    struct Refusal: Error {
        var code: Int
        var message: String
    }

    var request: NotificationHistoryRequest
    /// `endDate`, or now when it lies in the future.
    var end: Int64
    /// The canonical JSON of the request's fields, hashed: a pagination token is good for this body only.
    var fingerprint: String
    /// After which record the page starts (from the pagination token).
    var after: Cursor?

    /// Where a page ended: the last record's `signedDate` and its place in the history.
    struct Cursor: Codable {
        var signedDate: Int64
        var index: Int
    }

    private struct Token: Codable {
        var request: String
        var after: Cursor
    }

    /// A field that is absent (nil), or present with the wrong shape (`value` nil).
    private struct Field<T: Decodable>: Decodable {
        var value: T?
        init(from decoder: any Decoder) throws { value = try? decoder.singleValueContainer().decode(T.self) }
    }

    private struct Body: Decodable {
        var startDate: Field<Int64>?
        var endDate: Field<Int64>?
        var notificationType: Field<String>?
        var notificationSubtype: Field<String>?
        var transactionId: Field<String>?
        var onlyFailures: Field<Bool>?
    }

    static func parse(_ data: Data, paginationToken: String?, environment: Environment, now: Int64) -> Result<HistoryQuery, Refusal> {
        guard let body = try? JSONDecoder().decode(Body.self, from: data) else {
            return .failure(Refusal(code: EmulatorErrorCode.invalidRequest, message: "Invalid request body."))
        }
        guard let start = body.startDate?.value, start >= 0 else {
            return .failure(Refusal(code: NotificationHistoryFacts.invalidStartDate, message: "Invalid start date."))
        }
        guard let endDate = body.endDate?.value, endDate >= 0 else {
            return .failure(Refusal(code: NotificationHistoryFacts.invalidEndDate, message: "Invalid end date."))
        }
        guard start < endDate else {
            return .failure(Refusal(code: NotificationHistoryFacts.startDateAfterEndDate, message: "Start date is after or equal to the end date."))
        }
        let days = NotificationHistoryFacts.days(environment)
        guard start >= now - Int64(days) * 86_400_000 else {
            return .failure(Refusal(code: NotificationHistoryFacts.startDateTooFarInPast,
                                    message: "Start date is more than \(days) days in the past."))
        }
        if body.notificationType?.value == nil && body.notificationType != nil
            || body.notificationSubtype?.value == nil && body.notificationSubtype != nil
            || body.transactionId?.value == nil && body.transactionId != nil
            || body.onlyFailures?.value == nil && body.onlyFailures != nil {
            return .failure(Refusal(code: EmulatorErrorCode.invalidRequest, message: "Invalid request body."))
        }
        let type = body.notificationType?.value
        let subtype = body.notificationSubtype?.value
        let transactionId = body.transactionId?.value
        if transactionId != nil && (type != nil || subtype != nil) {
            return .failure(Refusal(code: NotificationHistoryFacts.multipleFiltersSupplied,
                                    message: "Supply either a transaction id or a notification type, not both."))
        }
        guard NotificationTypes.isValidFilter(type: type, subtype: subtype) else {
            return .failure(Refusal(code: NotificationHistoryFacts.invalidNotificationType, message: "Invalid notification type or subtype."))
        }
        if let transactionId, transactionId.isEmpty || !transactionId.allSatisfy({ $0.isASCII && $0.isNumber }) {
            return .failure(Refusal(code: NotificationHistoryFacts.invalidTransactionId, message: "Invalid transaction id."))
        }
        let request = NotificationHistoryRequest(startDate: start, endDate: endDate, notificationType: type, notificationSubtype: subtype,
                                                 transactionId: transactionId, onlyFailures: body.onlyFailures?.value)
        let fingerprint = Digest.sha256Hex(Array((try? CanonicalJSON.encode(request)) ?? Data()))
        var query = HistoryQuery(request: request, end: min(endDate, now), fingerprint: fingerprint)
        if let paginationToken {
            guard let bytes = Base64URL.decode(paginationToken),
                  let token = try? JSONDecoder().decode(Token.self, from: Data(bytes)),
                  token.request == fingerprint else {
                return .failure(Refusal(code: NotificationHistoryFacts.invalidPaginationToken, message: "Invalid pagination token."))
            }
            query.after = token.after
        }
        return .success(query)
    }

    /// At most `pageSize` records in ascending `signedDate` order (ties in the order produced),
    /// with `hasMore` and, when there are more, the token for the next page.
    func page(of history: [NotificationHistoryRecord]) -> NotificationHistoryResponse {
        let originals: Set<String>? = request.transactionId.map { id in
            // Any transaction of the customer names the subscription: find its original id.
            Set([id] + history.filter { $0.transactionId == id || $0.originalTransactionId == id }.compactMap(\.originalTransactionId))
        }
        let matching = history.indices.filter { index in
            let record = history[index]
            guard record.signedDate >= request.startDate, record.signedDate <= end else { return false }
            if let after, (record.signedDate, index) <= (after.signedDate, after.index) { return false }
            if let type = request.notificationType, record.notificationType != type { return false }
            if let subtype = request.notificationSubtype, record.subtype != subtype { return false }
            if let originals, !originals.contains(record.originalTransactionId ?? "") { return false }
            if request.onlyFailures == true, !record.neverDelivered { return false }
            return true
        }.sorted { (history[$0].signedDate, $0) < (history[$1].signedDate, $1) }
        let shown = matching.prefix(NotificationHistoryFacts.pageSize)
        let hasMore = matching.count > shown.count
        var token: String?
        if hasMore, let last = shown.last,
           let data = try? CanonicalJSON.encode(Token(request: fingerprint, after: Cursor(signedDate: history[last].signedDate, index: last))) {
            token = Base64URL.encode(Array(data))
        }
        return NotificationHistoryResponse(
            notificationHistory: shown.map { NotificationHistoryResponseItem(signedPayload: history[$0].signedPayload, sendAttempts: history[$0].sendAttempts) },
            hasMore: hasMore, paginationToken: token)
    }
}
