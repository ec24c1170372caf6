import Basics
public import Foundation
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

/// Whose Notification History a delivered notification joins: its app's, in its environment.
private struct HistoryKey: Hashable {
    var bundleId: String
    var environment: Environment
}

extension Emulator {
    /// Moves the emulator's clock forward to `date` (never back) and delivers every scheduled
    /// notification whose date has come, in date order: each is signed with `signedDate` = its date
    /// (no earlier than the signing chain's `notBefore`, so a receiver can verify it), POSTed to its
    /// push URL when it has one, and appended with the attempt's result to its environment's
    /// Notification History — a failed push included. Returns how many were delivered.
    @discardableResult
    public func advanceClock(to date: Date) async -> Int {
        setClockOffset(date.timeIntervalSince1970 - configuration.clock.now())
        let limit = Int64((now.timeIntervalSince1970 * 1000).rounded(.down))
        let due = core.withLock { core -> [ScheduledNotification] in
            let (due, later) = core.scheduledNotifications.reduce(into: ([ScheduledNotification](), [ScheduledNotification]())) {
                if $1.date <= limit { $0.0.append($1) } else { $0.1.append($1) }
            }
            core.scheduledNotifications = later
            return due.sorted { ($0.date, $0.notificationUUID) < ($1.date, $1.notificationUUID) }
        }
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
        let attempts = await push(signed)
        var records: [HistoryKey: [NotificationHistoryRecord]] = [:]
        for (index, item) in signed.enumerated() {
            let notification = item.notification
            records[HistoryKey(bundleId: notification.bundleId, environment: notification.environment), default: []].append(NotificationHistoryRecord(
                signedPayload: item.payload, signedDate: item.signedDate, notificationType: notification.notificationType,
                subtype: notification.subtype, notificationUUID: notification.notificationUUID,
                transactionId: notification.transaction.transactionId, originalTransactionId: notification.transaction.originalTransactionId,
                sendAttempts: attempts[index].map { [$0] } ?? []))
        }
        for (key, list) in records.sorted(by: { ($0.key.bundleId, $0.key.environment) < ($1.key.bundleId, $1.key.environment) }) {
            appendNotificationHistory(list, in: key.environment, bundleId: key.bundleId)
        }
        return signed.count
    }

    /// Moves the emulator's clock forward by `seconds` and delivers what came due (see `advanceClock(to:)`).
    @discardableResult
    public func advanceClock(by seconds: Double) async -> Int {
        await advanceClock(to: now.addingTimeInterval(max(0, seconds)))
    }

    /// Notifications scheduled and not yet delivered.
    public var scheduledNotificationCount: Int { core.withLock { $0.scheduledNotifications.count } }

    func schedule(_ notifications: [ScheduledNotification]) {
        core.withLock { $0.scheduledNotifications.append(contentsOf: notifications) }
    }

    /// POSTs each notification that has a push URL, at most 8 at once, started in date order;
    /// returns one attempt per notification (nil when it had no URL).
    private func push(_ items: [(notification: ScheduledNotification, signedDate: Int64, payload: String)]) async -> [SendAttemptItem?] {
        guard items.contains(where: { $0.notification.pushURL != nil }) else { return items.map { _ in nil } }
        let limit = 8
        let transport: any HTTPTransport = configuration.realtimeTransport ?? CurlHTTPClient(configuration: .init(
            connectTimeout: 5, timeout: 30, caBundlePath: configuration.realtimeCABundlePath,
            maxConcurrentTransfers: limit, environment: [:], userAgent: "retention-sync-emulator"))
        return await withTaskGroup(of: (Int, SendAttemptItem?).self) { group in
            var results = [SendAttemptItem?](repeating: nil, count: items.count)
            var inFlight = 0
            for (index, (notification, signedDate, payload)) in items.enumerated() {
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
                        result = try await transport.send(request).status == 200 ? .success : .unsuccessfulHTTPResponseCode
                    } catch {
                        result = PerformanceTestRunner.classify(error)
                    }
                    return (index, SendAttemptItem(attemptDate: signedDate, sendAttemptResult: result.rawValue))
                }
            }
            for await (done, attempt) in group { results[done] = attempt }
            return results
        }
    }
}
