import Basics
import CLIKit
import Crypto
import Emulator
import EventContract
import EventStore
import RetentionMessaging
import Foundation
import RetentionMessagingModels
@testable import RetentionSyncCommands
@testable import CommandTestSupport
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

    @Test("outcomes pull refuses a window that starts after it ends, naming both times, before it calls Apple")
    func reversedWindow() async throws {
        let harness = try CommandHarness()
        let chain = try AppleStyleSigningChain(name: "apple", notBefore: Date(timeIntervalSince1970: harness.clock.now() - 40 * 86_400))
        try Data(chain.root.pem.utf8).write(to: harness.file("root.pem"))
        let environment = [PseudonymKey.environmentVariable: Self.secret]
        let reversed = await harness.run(["outcomes", "pull", "--env", "sandbox", "--root", "root.pem", "--since", "2026-12-03",
                                          "--until", "2026-11-26", "--event-spool", "spool"], environment: environment)
        #expect(reversed.code == .usage, "\(reversed.stderr)")
        #expect(reversed.stderr.contains("starts after it ends: --since is 2026-12-03T00:00:00.000Z and --until is 2026-11-26T00:00:00.000Z"),
                "\(reversed.stderr)")
        // --since alone, later than now (an emulator's clock was moved ahead): the end is now.
        let future = await harness.run(["outcomes", "pull", "--env", "sandbox", "--root", "root.pem", "--since", "2099-01-01",
                                        "--event-spool", "spool"], environment: environment)
        #expect(future.code == .usage, "\(future.stderr)")
        #expect(future.stderr.contains("--since is 2099-01-01T00:00:00.000Z and it ends now ("), "\(future.stderr)")
    }

    @Test("a first backfill that Apple refuses as starting more than its history back (an emulator's clock moved ahead) says to pass --since")
    func startTooFarBackHasAHint() async throws {
        let harness = try CommandHarness()
        let chain = try AppleStyleSigningChain(name: "apple", notBefore: Date(timeIntervalSince1970: harness.clock.now() - 40 * 86_400))
        try Data(chain.root.pem.utf8).write(to: harness.file("root.pem"))
        let environment = [PseudonymKey.environmentVariable: Self.secret]
        // This machine's clock is the emulator's unmoved one.
        let until = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: harness.clock.now()))
        let arguments = ["outcomes", "pull", "--env", "sandbox", "--root", "root.pem", "--until", until, "--event-spool", "spool"]
        // A day of skew is inside the backfill's margin: the first run reads 29 of Apple's 30 days.
        _ = await harness.emulator.advanceClock(by: 0.5 * 86_400)
        let skewed = await harness.run(arguments, environment: environment)
        #expect(skewed.code == .success, "\(skewed.stderr)")
        // Five days ahead, the start is 34 days back by the emulator's clock: refused as Apple refuses it.
        let cursor = harness.file("manifests/.retention-sync/events/v1/cursors/outcomes-pull/environment=sandbox.json")
        try FileManager.default.removeItem(at: cursor)
        _ = await harness.emulator.advanceClock(by: 4.5 * 86_400)
        let refused = await harness.run(arguments, environment: environment)
        #expect(refused.code == .failure, "\(refused.stderr)")
        #expect(refused.stderr.contains("errorCode 4000012"), "\(refused.stderr)")
        #expect(refused.stderr.contains("hint: Apple's clock puts the start more than 30 days back: pass --since with a later start"),
                "\(refused.stderr)")
    }

    /// A decision serve stored under the pseudonym key `keyId`, in the partition of `time`.
    func storeDecision(_ harness: CommandHarness, keyId: String, at time: Int64) throws {
        let (date, hour) = EventTime.partition(time)
        let folder = harness.file("manifests/.retention-sync/events/v1/decisions/environment=sandbox/date=\(date)/hour=\(hour)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let line = #"{"alternateProductId":null,"answer":"message","arm":null,"customer":"\#(String(repeating: "c5", count: 32))","environment":"sandbox","eventId":"00000000-0000-4000-8000-000000000001","flow":"cancel-flow","keyId":"\#(keyId)","latencyMicros":800,"localeRequested":"en-US","localeServed":"en-US","messageIdentifier":"m","offerIdentifier":null,"productId":"com.example.stillpoint.monthly","requestIdentifier":"r1","rule":"stay","schema":1,"snapshot":"sha256:00","splitControl":false,"splitGroup":null,"time":"\#(EventTime.format(time))","type":"decision"}"#
        try Data((line + "\n").utf8).write(to: folder.appendingPathComponent("serve-a-0000000001.ndjson"))
    }

    @Test("outcomes pull run with a different secret from serve's says so at once, by the keys of the decisions already stored")
    func differentSecretFromServe() async throws {
        let harness = try CommandHarness()
        let now = Int64(harness.clock.now() * 1000)
        let chain = try AppleStyleSigningChain(name: "apple", notBefore: Date(timeIntervalSince1970: harness.clock.now() - 40 * 86_400))
        try Data(chain.root.pem.utf8).write(to: harness.file("root.pem"))
        harness.emulator.appendNotificationHistory([try record(chain, original: "2000000000000777", at: now - 3_600_000)], in: .sandbox)
        let until = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(now) / 1000 + 60))
        let environment = [PseudonymKey.environmentVariable: Self.secret]
        let arguments = ["outcomes", "pull", "--env", "sandbox", "--root", "root.pem", "--until", until, "--event-spool", "spool"]
        let ours = try PseudonymKey(secret: Self.secret).keyId

        // serve's decisions carry another key: two days ago is still "the newest decisions stored".
        try storeDecision(harness, keyId: "c5deb78e", at: now - 2 * 86_400_000)
        let mismatched = await harness.run(arguments, environment: environment)
        #expect(mismatched.code == .needsAttention, "\(mismatched.stdout)\(mismatched.stderr)")
        #expect(mismatched.stderr.contains("warning: this run's RETENTION_SYNC_PSEUDONYM_SECRET has key id \(ours), but the newest decisions "
                                           + "serve stored carry c5deb78e"), "\(mismatched.stderr)")
        #expect(mismatched.stdout.contains("warning: key id \(ours) is not the key of the newest decisions stored (c5deb78e)"), "\(mismatched.stdout)")

        // Once serve records under the same secret, the same run is quiet.
        try storeDecision(harness, keyId: ours, at: now - 60_000)
        let matched = await harness.run(arguments, environment: environment)
        #expect(matched.code == .success, "\(matched.stdout)\(matched.stderr)")
        #expect(!matched.stderr.contains("key id"))
    }
}
