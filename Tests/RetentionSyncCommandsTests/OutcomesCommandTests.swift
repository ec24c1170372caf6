import Basics
import CLIKit
import Crypto
import Emulator
import EventStore
import RetentionMessaging
import Foundation
import RetentionMessagingModels
@testable import RetentionSyncCommands
import Testing
import TestSupport

@Suite("retention-sync outcomes pull")
struct OutcomesCommandTests {
    static let secret = "a11ce5a11ce5a11ce5a11ce5a11ce5a11ce5a11ce5"

    /// A sandbox notification about `original`, signed by `chain`, as Apple keeps it in history.
    func record(_ chain: AppleStyleSigningChain, original: String, at signedDate: Int64) throws -> NotificationHistoryRecord {
        let transaction = TransactionPayload(transactionId: original, originalTransactionId: original, bundleId: "com.example.stillpoint",
                                             productId: "com.example.stillpoint.monthly", purchaseDate: signedDate,
                                             expiresDate: signedDate + 30 * 86_400_000, price: 4990, currency: "EUR", environment: "Sandbox",
                                             signedDate: signedDate)
        let renewal = RenewalInfoPayload(originalTransactionId: original, productId: "com.example.stillpoint.monthly",
                                         autoRenewProductId: "com.example.stillpoint.monthly", autoRenewStatus: 1, environment: "Sandbox",
                                         signedDate: signedDate)
        let uuid = UUID().uuidString.lowercased()
        let payload = NotificationPayload(notificationType: "DID_RENEW", notificationUUID: uuid, signedDate: signedDate,
                                          data: NotificationData(appAppleId: nil, bundleId: "com.example.stillpoint", environment: "Sandbox",
                                                                 signedTransactionInfo: nil, signedRenewalInfo: nil))
        let signed = try NotificationSigner(chain: chain).signNotification(payload, transaction: transaction, renewal: renewal)
        return NotificationHistoryRecord(signedPayload: signed, signedDate: signedDate, notificationType: "DID_RENEW", subtype: nil,
                                         notificationUUID: uuid, transactionId: original, originalTransactionId: original, sendAttempts: [])
    }

    @Test("outcomes pull records Notification History beside the state once each, refuses a forgery, and the next run reads only the overlap")
    func pullsHistory() async throws {
        let harness = try CommandHarness()
        let now = Int64(harness.clock.now() * 1000)
        let chain = try AppleStyleSigningChain(name: "apple", notBefore: Date(timeIntervalSince1970: harness.clock.now() - 40 * 86_400))
        let forger = try AppleStyleSigningChain(name: "forger", notBefore: Date(timeIntervalSince1970: harness.clock.now() - 40 * 86_400))
        try Data(chain.root.pem.utf8).write(to: harness.file("root.pem"))
        var records = try (0..<45).map { try record(chain, original: String(2_000_000_000_000_500 + $0), at: now - Int64(45 - $0) * 3_600_000) }
        records.append(try record(forger, original: "2000000000009999", at: now - 1_800_000))
        harness.emulator.appendNotificationHistory(records.sorted { $0.signedDate < $1.signedDate }, in: .sandbox)
        let until = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(now) / 1000 + 60))
        let environment = [PseudonymKey.environmentVariable: Self.secret]
        let arguments = ["outcomes", "pull", "--env", "sandbox", "--root", "root.pem", "--until", until, "--event-spool", "spool"]

        let first = await harness.run(arguments, environment: environment)
        #expect(first.code == .needsAttention, "a forged notification needs a person: \(first.stderr)")
        #expect(first.stdout.contains("46 notification(s): 45 recorded as outcomes in "), "\(first.stdout)")
        #expect(first.stdout.contains("3 page(s), 3 call(s)"), "\(first.stdout)")
        #expect(first.stdout.contains("1 refused and not recorded (untrusted_chain 1)"), "\(first.stdout)")
        let lines = try eventLines(under: harness.file("manifests/.retention-sync"), prefix: "events/v1/outcomes/environment=sandbox/")
        #expect(lines.count == 45)
        #expect(Set(lines.compactMap { $0["eventId"] as? String }) == Set(records.dropLast().map(\.notificationUUID)))
        #expect(Set(lines.compactMap { $0["source"] as? String }) == ["pull"])
        let stored = try String(contentsOf: harness.file("manifests/.retention-sync/events/v1/cursors/outcomes-pull/environment=sandbox.json"), encoding: .utf8)
        #expect(stored.contains("\"until\""))
        for record in records { #expect(!(lines.description + first.stdout + first.stderr).contains(record.originalTransactionId ?? "-")) }

        // The next scheduled run starts an hour before the cursor: only what was sent in that hour (the forgery) again.
        let second = await harness.run(arguments, environment: environment)
        #expect(second.stdout.contains("1 page(s), 1 call(s)"), "\(second.stdout)")
        #expect(second.stdout.contains("1 notification(s): 0 recorded"), "\(second.stdout)")
        #expect(second.code == .needsAttention)

        let withoutSecret = await harness.run(arguments)
        #expect(withoutSecret.code == .usage)
        #expect(withoutSecret.stderr.contains("RETENTION_SYNC_PSEUDONYM_SECRET is not set"))
    }
}
