import Basics
import Crypto
import Emulator
import EventStore
import Foundation
import Operations
import RetentionMessaging
import RetentionMessagingModels
import RetentionSyncCommands
import Runtime
import StateStore

/// `outcomes pull` against the emulator's Notification History: N signed notifications (default
/// 5,000) are put in history, then one pull reads, verifies and records them all. Prints the calls
/// it made, per 1,000 notifications, and the time, then a second pull an hour later (the cursor's
/// overlap): what a scheduled job costs when nothing happened.
@Sendable func outcomesBenchmark(_ arguments: [String]) async throws {
    func option(_ name: String) -> String? {
        arguments.firstIndex(of: name).flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
    }
    let count = option("--notifications").flatMap(Int.init) ?? 5_000
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("outcomes-bench-\(getpid())")
    defer { try? FileManager.default.removeItem(at: folder) }
    let day = 86_400_000.0
    let chain = try AppleStyleSigningChain(name: "bench", notBefore: (SystemClock().time() - 40 * UTCTime.day).date)
    let key = ES256PrivateKey.generate()
    let bundleId = "com.example.bench", appAppleId: Int64 = 1_234_567_890
    var configuration = EmulatorConfiguration(publicKey: key.publicKey, keyId: "BENCHKEY01", issuerId: "57246542-96fe-1a63-e053-0824d011072a",
                                              bundleId: bundleId, clock: SystemClock(), appAppleId: appAppleId)
    configuration.useTestChain(chain)
    let emulator = Emulator(configuration: configuration)
    let signer = NotificationSigner(chain: chain)

    // A month of notifications, evenly spread over the 20 days before now.
    let now = SystemClock().time().milliseconds
    let started = ContinuousClock.now
    var records: [NotificationHistoryRecord] = []
    for index in 0..<count {
        let signedDate = now - Int64(20 * day) + Int64(index) * Int64(20 * day) / Int64(count)
        let original = String(2_000_000_000_000_000 + index)
        let transaction = TransactionPayload(transactionId: original, originalTransactionId: original, bundleId: bundleId, productId: "com.example.monthly",
                                             purchaseDate: signedDate, expiresDate: signedDate + Int64(30 * day), price: 9990, currency: "USD",
                                             transactionReason: "RENEWAL", environment: "Sandbox", signedDate: signedDate)
        let renewal = RenewalInfoPayload(originalTransactionId: original, productId: "com.example.monthly", autoRenewProductId: "com.example.monthly",
                                         autoRenewStatus: 1, environment: "Sandbox", signedDate: signedDate)
        let uuid = UUID().uuidString.lowercased()
        let payload = NotificationPayload(notificationType: "DID_RENEW", notificationUUID: uuid, signedDate: signedDate,
                                          data: NotificationData(appAppleId: appAppleId, bundleId: bundleId, environment: "Sandbox",
                                                                 signedTransactionInfo: nil, signedRenewalInfo: nil))
        let signed = try signer.signNotification(payload, transaction: transaction, renewal: renewal)
        records.append(NotificationHistoryRecord(signedPayload: signed, signedDate: signedDate, notificationType: "DID_RENEW", subtype: nil,
                                                 notificationUUID: uuid, transactionId: original, originalTransactionId: original, sendAttempts: []))
    }
    emulator.appendNotificationHistory(records, in: .sandbox)
    print("outcomes: \(count) signed notifications in the emulator's sandbox history (made in \(seconds(since: started)))")

    let client = RetentionMessagingClient(environment: .sandbox,
                                          credentials: Credentials(keyId: "BENCHKEY01", issuerId: "57246542-96fe-1a63-e053-0824d011072a",
                                                                   bundleId: bundleId, privateKey: key),
                                          transport: emulator.transport(defaultEnvironment: .sandbox), pacing: .unlimited, clock: SystemClock())
    let store = FolderObjectStore(root: folder)
    let pseudonyms = try PseudonymKey(secret: String(repeating: "b3", count: 24))
    func pull(_ name: String, until: Int64) async throws {
        let calls = client.notificationHistoryCalls
        let recorder = EventRecorder(sink: FolderEventSink(root: folder), settings: .init(writerId: "bench-\(name)", spool: folder.appendingPathComponent(".spool")))
        recorder.start()
        let job = OutcomePull(environment: .sandbox,
                              verifier: NotificationVerifier(trustedRoots: [chain.root], bundleId: bundleId, appAppleId: appAppleId, environment: .sandbox, clock: SystemClock()),
                              pseudonyms: pseudonyms, recorder: recorder, store: store,
                              fetch: { request, token in try await client.notificationHistory(request, paginationToken: token) })
        let start = ContinuousClock.now
        let summary = try await job.run(since: nil, until: until)
        let made = client.notificationHistoryCalls - calls
        let perThousand = summary.notifications > 0 ? String(format: "%.1f", Double(made) * 1000 / Double(summary.notifications)) : "-"
        print("  \(name): \(summary.notifications) notifications, \(summary.recorded) recorded, \(summary.refused.values.reduce(0, +)) refused; "
              + "\(made) call\(made == 1 ? "" : "s") (\(perThousand) per 1,000 notifications); \(seconds(since: start)) (verifying every JWS; no pacing)")
    }
    try await pull("first run (backfill)", until: now)
    try await pull("next run, an hour later", until: now + 3_600_000)
    print("  Apple's budget for Get Notification History: 50 requests/s in production, 5/s in sandbox (hourly); "
          + "at 20 records a call, \(count) notifications take at least \(String(format: "%.0f", Double((count + 19) / 20) / 5)) s of sandbox budget")
}

private func seconds(since start: ContinuousClock.Instant) -> String {
    let elapsed = ContinuousClock.now - start
    return String(format: "%.2f s", Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
}
