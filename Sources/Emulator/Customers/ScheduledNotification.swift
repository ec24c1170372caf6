public import Basics
import Foundation
import HTTPClient
import HTTPCore
import RetentionMessaging
import RetentionMessagingModels
import Synchronization

/// A notification a simulated customer will produce when the emulator's clock reaches `date`:
/// everything but the signatures, which are made at delivery with `signedDate` = `date`.
struct ScheduledNotification: Sendable {
    /// ms since 1970.
    var date: Int64
    var environment: Environment
    var notificationType: String
    var subtype: String?
    var notificationUUID: String
    var appAppleId: Int64?
    var bundleId: String
    /// 1 active, 2 expired.
    var status: Int
    var transaction: TransactionPayload
    var renewal: RenewalInfoPayload
    /// Where the signed notification is POSTed as `{"signedPayload": …}`; nil keeps it in the history only.
    var pushURL: URL?
    var pushTimeout: Double
}

/// A production notification whose push failed, waiting for Apple's next attempt: the same signed
/// notification, POSTed again `NotificationRetry.delays` after the previous attempt.
struct NotificationRetry: Sendable {
    /// ms since 1970: when the next attempt is made.
    var date: Int64
    var notification: ScheduledNotification
    var payload: String
    /// Attempts made so far (the first included).
    var attempts: Int

    /// Apple's retries of a version 2 notification that got no success response: five, at 1, 12,
    /// 24, 48 and 72 hours after the previous attempt — in production only; sandbox sends once
    /// (Apple: "Responding to App Store Server Notifications").
    static let delays: [Int64] = [1, 12, 24, 48, 72].map { $0 * 3_600_000 }

    /// The next attempt after a failed one at `attemptDate`, or nil when Apple stops here.
    static func after(_ notification: ScheduledNotification, payload: String, attempts: Int, attemptDate: Int64) -> NotificationRetry? {
        guard notification.environment == .production, notification.pushURL != nil, attempts <= delays.count else { return nil }
        return NotificationRetry(date: attemptDate + delays[attempts - 1], notification: notification, payload: payload, attempts: attempts)
    }
}

/// Whose Notification History a delivered notification joins: its app's, in its environment.
private struct HistoryKey: Hashable {
    var bundleId: String
    var environment: Environment
}

extension Emulator {
    /// Moves the emulator's clock forward to `time` (never back) and delivers every scheduled
    /// notification whose date has come, in date order: each is signed with `signedDate` = its date
    /// (no earlier than the signing chain's `notBefore`, so a receiver can verify it), POSTed to its
    /// push URL when it has one, and appended with the attempt's result to its environment's
    /// Notification History — a failed push included. A production push that fails is tried again
    /// as Apple does (`NotificationRetry.delays`), each attempt added to the same history entry.
    /// Returns how many notifications were delivered (retries not counted).
    @discardableResult
    public func advanceClock(to time: UTCTime) async -> Int {
        setClockOffset(time.seconds(since: UTCTime(milliseconds: 0)) - configuration.clock.now())
        let limit = max(now, time).milliseconds
        var delivered = 0
        // In rounds: what came due for the first time, then the retries due. A failure in a round may
        // make a retry that falls due (an hour or more later) within this advance: the next round sends it.
        while true {
            let (due, retries) = core.withLock { core in
                (Self.takeDue(&core.scheduledNotifications, by: limit, date: \.date, uuid: \.notificationUUID),
                 Self.takeDue(&core.notificationRetries, by: limit, date: \.date, uuid: \.notification.notificationUUID))
            }
            guard !due.isEmpty || !retries.isEmpty else { return delivered }
            delivered += await deliver(due)
            await retry(retries)
        }
    }

    /// Removes from `items` those dated by `limit` and returns them in date order (ties by UUID).
    private static func takeDue<Item>(_ items: inout [Item], by limit: Int64, date: KeyPath<Item, Int64>,
                                      uuid: KeyPath<Item, String>) -> [Item] {
        let due = items.filter { $0[keyPath: date] <= limit }
        guard !due.isEmpty else { return [] }
        items.removeAll { $0[keyPath: date] <= limit }
        return due.sorted { ($0[keyPath: date], $0[keyPath: uuid]) < ($1[keyPath: date], $1[keyPath: uuid]) }
    }

    /// Signs, pushes and records notifications that came due for the first time.
    private func deliver(_ due: [ScheduledNotification]) async -> Int {
        guard !due.isEmpty else { return 0 }
        guard let signer = configuration.notificationSigner else {
            log("warning: \(due.count) simulated notifications dropped: the emulator has no notification signer")
            return 0
        }
        var signed: [(notification: ScheduledNotification, signedDate: Int64, payload: String)] = []
        for notification in due {
            let signedDate = max(notification.date, signer.validFrom)
            var transaction = notification.transaction
            transaction.signedDate = signedDate
            var renewal = notification.renewal
            renewal.signedDate = signedDate
            let payload = NotificationPayload(
                notificationType: notification.notificationType, subtype: notification.subtype, notificationUUID: notification.notificationUUID,
                signedDate: signedDate,
                data: NotificationData(appAppleId: notification.appAppleId, bundleId: notification.bundleId,
                                       environment: notification.environment.appleName, signedTransactionInfo: nil,
                                       signedRenewalInfo: nil, status: notification.status))
            do {
                signed.append((notification, signedDate, try signer.signNotification(payload, transaction: transaction, renewal: renewal)))
            } catch {
                log("warning: a simulated \(notification.notificationType) could not be signed: \(error)")
            }
        }
        let attempts = await push(signed.map { (notification: $0.notification, attemptDate: $0.signedDate, payload: $0.payload) })
        var records: [HistoryKey: [NotificationHistoryRecord]] = [:]
        var retries: [NotificationRetry] = []
        for (index, item) in signed.enumerated() {
            let notification = item.notification
            records[HistoryKey(bundleId: notification.bundleId, environment: notification.environment), default: []].append(NotificationHistoryRecord(
                signedPayload: item.payload, signedDate: item.signedDate, notificationType: notification.notificationType,
                subtype: notification.subtype, notificationUUID: notification.notificationUUID,
                transactionId: notification.transaction.transactionId, originalTransactionId: notification.transaction.originalTransactionId,
                sendAttempts: attempts[index].map { [$0] } ?? []))
            if let attempt = attempts[index], attempt.sendAttemptResult != SendAttemptResult.success.rawValue,
               let next = NotificationRetry.after(notification, payload: item.payload, attempts: 1,
                                                  attemptDate: attempt.attemptDate ?? item.signedDate) {
                retries.append(next)
            }
        }
        for (key, list) in records.sorted(by: { ($0.key.bundleId, $0.key.environment) < ($1.key.bundleId, $1.key.environment) }) {
            appendNotificationHistory(list, in: key.environment, bundleId: key.bundleId)
        }
        if !retries.isEmpty { core.withLock { $0.notificationRetries.append(contentsOf: retries) } }
        return signed.count
    }

    /// Apple's next attempts at notifications whose earlier pushes failed: the same signed
    /// notification, each attempt added to its history entry, and the next one scheduled while any remain.
    private func retry(_ retries: [NotificationRetry]) async {
        guard !retries.isEmpty else { return }
        let attempts = await push(retries.map { (notification: $0.notification, attemptDate: $0.date, payload: $0.payload) })
        var later: [NotificationRetry] = []
        for (index, retry) in retries.enumerated() {
            guard let attempt = attempts[index] else { continue }
            let notification = retry.notification
            addSendAttempt(attempt, to: notification.notificationUUID, in: notification.environment, bundleId: notification.bundleId)
            if attempt.sendAttemptResult != SendAttemptResult.success.rawValue,
               let next = NotificationRetry.after(notification, payload: retry.payload, attempts: retry.attempts + 1, attemptDate: retry.date) {
                later.append(next)
            }
        }
        persist()
        if !later.isEmpty { core.withLock { $0.notificationRetries.append(contentsOf: later) } }
    }

    /// Moves the emulator's clock forward by `seconds` and delivers what came due (see `advanceClock(to:)`).
    @discardableResult
    public func advanceClock(by seconds: Double) async -> Int {
        await advanceClock(to: now.adding(seconds: max(0, seconds)))
    }

    /// Notifications scheduled and not yet delivered.
    public var scheduledNotificationCount: Int { core.withLock { $0.scheduledNotifications.count } }

    /// Production notifications whose push failed, waiting for Apple's next attempt.
    public var pendingNotificationRetries: Int { core.withLock { $0.notificationRetries.count } }

    func schedule(_ notifications: [ScheduledNotification]) {
        core.withLock { $0.scheduledNotifications.append(contentsOf: notifications) }
    }

    /// POSTs each notification that has a push URL, at most 8 at once, started in date order;
    /// returns one attempt per notification (nil when it had no URL). Apple counts any status from
    /// 200 to 206 as received.
    private func push(_ items: [(notification: ScheduledNotification, attemptDate: Int64, payload: String)]) async -> [SendAttemptItem?] {
        guard items.contains(where: { $0.notification.pushURL != nil }) else { return items.map { _ in nil } }
        let limit = 8
        let transport: any HTTPTransport = configuration.realtimeTransport ?? CurlHTTPClient(configuration: .init(
            connectTimeout: 5, timeout: 30, caBundlePath: configuration.realtimeCABundlePath,
            maxConcurrentTransfers: limit, environment: [:], userAgent: "retention-sync-emulator"))
        return await withTaskGroup(of: (Int, SendAttemptItem?).self) { group in
            var results = [SendAttemptItem?](repeating: nil, count: items.count)
            var inFlight = 0
            for (index, (notification, attemptDate, payload)) in items.enumerated() {
                guard let url = notification.pushURL else { continue }
                if inFlight >= limit, let (done, attempt) = await group.next() {
                    results[done] = attempt
                    inFlight -= 1
                }
                inFlight += 1
                group.addTask {
                    let body = (try? CanonicalJSON.encode(ResponseBodyV2(signedPayload: payload))) ?? Data()
                    let request = HTTPRequest(method: "POST", url: url, headers: [(name: "Content-Type", value: "application/json")],
                                              body: body, connectTimeout: notification.pushTimeout, timeout: notification.pushTimeout)
                    let result: SendAttemptResult
                    do throws(HTTPError) {
                        result = (200...206).contains(try await transport.send(request).status) ? .success : .unsuccessfulHTTPResponseCode
                    } catch {
                        result = PerformanceTestRunner.classify(error)
                    }
                    return (index, SendAttemptItem(attemptDate: attemptDate, sendAttemptResult: result.rawValue))
                }
            }
            for await (done, attempt) in group { results[done] = attempt }
            return results
        }
    }
}
