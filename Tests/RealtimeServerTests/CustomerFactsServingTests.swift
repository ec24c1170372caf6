import Crypto
import EventStore
import EventContract
import Foundation
import HTTPCore
import RealtimeServer
import RetentionMessagingModels
import Runtime
import StateStore
import Testing
import TestSupport

/// A snapshot whose first rule answers only customers of the German storefront, and whose second
/// answers every other monthly customer.
func storefrontSnapshot() throws -> RuntimeSnapshot {
    try RuntimeSnapshot(bundleId: bundleId, appAppleId: appAppleId, environment: .production, localeFallbacks: [:], rules: [
        SnapshotRule(id: "cancel/germany", version: "0123456789abcdef",
                     match: SnapshotMatch(products: [monthly], customer: CustomerConditions(storefronts: ["DEU"])),
                     response: SnapshotResponse(kind: .message, message: "bleib", messageIdentifiers: ["en-US": otherMessageId])),
        SnapshotRule(id: "cancel/everyone", version: "0123456789abcdef", match: SnapshotMatch(products: [monthly]),
                     response: SnapshotResponse(kind: .message, message: "stay", messageIdentifiers: ["en-US": messageId])),
    ]).sealed()
}

/// A notification about `transaction` whose signed transaction names `storefront`, signed at `date`.
func storefrontNotification(_ chain: AppleStyleSigningChain, transaction: String, storefront: String, at date: Int64,
                            billingRetry: Bool? = nil) throws -> String {
    let info = TransactionPayload(transactionId: "9" + transaction, originalTransactionId: transaction, bundleId: bundleId, productId: monthly,
                                  purchaseDate: date - 86_400_000, expiresDate: date + 29 * 86_400_000, price: 9990, currency: "EUR",
                                  environment: "Production", signedDate: date, storefront: storefront,
                                  originalPurchaseDate: date - 200 * 86_400_000, inAppOwnershipType: "PURCHASED")
    let renewal = RenewalInfoPayload(originalTransactionId: transaction, productId: monthly, autoRenewProductId: monthly, autoRenewStatus: 1,
                                     environment: "Production", signedDate: date, isInBillingRetryPeriod: billingRetry)
    let payload = NotificationPayload(notificationType: "DID_RENEW", notificationUUID: UUID().uuidString, signedDate: date, data: NotificationData(
        appAppleId: appAppleId, bundleId: bundleId, environment: "Production",
        signedTransactionInfo: try chain.sign(payloadJSON: Array(try CanonicalJSON.encode(info))),
        signedRenewalInfo: try chain.sign(payloadJSON: Array(try CanonicalJSON.encode(renewal)))))
    return try chain.sign(payloadJSON: Array(try CanonicalJSON.encode(payload)))
}

/// `serve` answers the person: what Apple signed about a customer (pushed to it, or published as a
/// facts table) decides which rule answers, and every decision records what it knew and from where.
@Suite("serve answers from the customer's facts", .serialized)
struct CustomerFactsServingTests {
    static let secret = DecisionRecordingTests.secret
    static let german = "2000000000000501", american = "2000000000000502", stranger = "2000000000000503"

    /// A recording whose facts store is the events folder itself, as `serve` sets it up.
    final class Recorded {
        let folder: URL
        let recording: RealtimeService.Recording

        init() throws {
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("facts-\(UUID().uuidString)")
            let recorder = EventRecorder(sink: FolderEventSink(root: folder),
                                         settings: .init(writerId: "serve-test", spool: folder.appendingPathComponent(".spool"), flushInterval: 0.05))
            recorder.start()
            recording = RealtimeService.Recording(recorder: recorder, pseudonyms: try PseudonymKey(secret: CustomerFactsServingTests.secret),
                                                  facts: FolderObjectStore(root: folder))
        }

        deinit { try? FileManager.default.removeItem(at: folder) }

        /// Every byte written under the folder: segments, spool and facts tables alike.
        func allBytes() throws -> String { RealtimeServerTests.allBytes(under: folder) }

        func decisions() throws -> [[String: Any]] {
            recording.recorder.close()
            return try eventLines(under: folder, prefix: "events/v1/decisions/environment=production/")
        }

        /// Publishes `facts` (transaction id → facts) as `facts publish` does, under `keyId`'s pseudonyms.
        func publish(_ facts: [String: CustomerFacts], keyId: String? = nil, environment: String = "production") async throws {
            let pseudonyms = recording.pseudonyms
            let table = Dictionary(uniqueKeysWithValues: facts.map { (pseudonyms.pseudonym($0.key), $0.value) })
            let header = FactsTable.Header(bundleId: bundleId, environment: environment, keyId: keyId ?? pseudonyms.keyId,
                                           count: table.count, newestFact: 1_795_000_000_000)
            let bytes = try FactsTable.encode(table, header: header)
            let digest = FactsPointer.digest(bytes)
            let key = "\(FactsPointer.folder(environment: "production"))/table-\(digest.suffix(16)).rsfacts"
            let store = FolderObjectStore(root: folder)
            try await store.put(key, bytes)
            let pointer = FactsPointer(table: key, digest: digest, count: table.count, builtAt: 1_795_000_000_000, keyId: header.keyId)
            try await store.put(FactsPointer.key(environment: "production"), Array(try CanonicalJSON.encode(pointer)))
        }
    }

    /// The message a customer is answered with.
    static func answer(_ running: RunningService, _ transaction: String) async throws -> String? {
        let response = try await running.post(requestBody(transaction: transaction))
        return (try json(response)["message"] as? [String: Any])?["messageIdentifier"] as? String
    }

    @Test("a notification's storefront reaches the next answer: the German customer gets the German rule, the others the next, and each decision says what it knew")
    func notificationsDecideTheNextAnswer() async throws {
        let recorded = try Recorded()
        let running = try RunningService(snapshot: try storefrontSnapshot(), recording: recorded.recording)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        #expect(try await Self.answer(running, Self.german) == messageId, "nothing is known yet: the rule for DEU must not answer")
        #expect(try await running.postNotification(try storefrontNotification(running.chain, transaction: Self.german, storefront: "DEU", at: now - 60_000)).status == 200)
        #expect(try await running.postNotification(try storefrontNotification(running.chain, transaction: Self.american, storefront: "USA", at: now - 60_000)).status == 200)
        #expect(try await Self.answer(running, Self.german) == otherMessageId)
        #expect(try await Self.answer(running, Self.american) == messageId)
        #expect(try await Self.answer(running, Self.stranger) == messageId)

        // A notification signed earlier (it was delayed) does not overwrite what a later one said.
        #expect(try await running.postNotification(try storefrontNotification(running.chain, transaction: Self.german, storefront: "USA", at: now - 3_600_000)).status == 200)
        #expect(try await Self.answer(running, Self.german) == otherMessageId)
        // A forged one changes nothing.
        let forger = try AppleStyleSigningChain(name: "forger")
        #expect(try await running.postNotification(try storefrontNotification(forger, transaction: Self.american, storefront: "DEU", at: now)).status == 401)
        #expect(try await Self.answer(running, Self.american) == messageId)

        let metrics = String(decoding: try await running.get("/metrics").body, as: UTF8.self)
        #expect(metrics.contains(#"retention_sync_decision_facts_total{environment="production",source="notification"} 4"#))
        #expect(metrics.contains(#"retention_sync_decision_facts_total{environment="production",source="unknown"} 2"#))

        let pseudonyms = recorded.recording.pseudonyms
        let decisions = try recorded.decisions()
        let german = decisions.filter { $0["customer"] as? String == pseudonyms.pseudonym(Self.german) }
        #expect(german.map { $0["facts"] as? String } == ["unknown", "notification", "notification"])
        #expect(german.map { $0["storefront"] as? String } == [nil, "DEU", "DEU"])
        #expect(german.last?["tenureBand"] as? String == "3-12m")
        #expect(german.last?["billing"] as? String == "none")
        #expect(german.last?["offerWithin90Days"] as? Bool == false)
        #expect(german.last?["factsAsOf"] as? String == EventTime.format(now - 60_000))
        let stranger = try #require(decisions.first { $0["customer"] as? String == pseudonyms.pseudonym(Self.stranger) })
        #expect(stranger["facts"] as? String == "unknown" && stranger["storefront"] is NSNull && stranger["factsAsOf"] is NSNull)

        // No transaction id in any event, log line or metric: customers are their pseudonyms only.
        let everything = try recorded.allBytes() + running.log.joined() + metrics
        for transaction in [Self.german, Self.american, Self.stranger] {
            #expect(!everything.contains(transaction))
        }
    }

    @Test("a published facts table reaches a replica that received no notification; a damaged table, or one for another key, is refused and the previous keeps serving")
    func aPublishedTableReachesEveryReplica() async throws {
        let recorded = try Recorded()
        let running = try RunningService(snapshot: try storefrontSnapshot(), recording: recorded.recording)
        try await recorded.publish([Self.german: CustomerFacts(storefront: "DEU", transactionAsOf: 1_794_000_000_000),
                                    Self.american: CustomerFacts(storefront: "USA", transactionAsOf: 1_794_000_000_000)])
        running.service.reloadSnapshots()
        #expect(running.service.facts(for: .production)?.table?.count == 2)
        #expect(try await Self.answer(running, Self.german) == otherMessageId)
        #expect(try await Self.answer(running, Self.american) == messageId)

        // The table is replaced by a file that is not the one the pointer's digest names.
        let store = FolderObjectStore(root: recorded.folder)
        let pointerKey = FactsPointer.key(environment: "production")
        var pointer = try JSONDecoder().decode(FactsPointer.self, from: try #require(try await store.get(pointerKey)))
        pointer.digest = "sha256:" + String(repeating: "0", count: 64)
        try await store.put(pointerKey, Array(try CanonicalJSON.encode(pointer)))
        running.service.reloadSnapshots()
        #expect(try await Self.answer(running, Self.german) == otherMessageId, "the previous table keeps serving")

        // A table keyed with another pseudonym secret would match nobody: refused.
        try await recorded.publish([Self.american: CustomerFacts(storefront: "DEU", transactionAsOf: 1_794_000_000_000)], keyId: "0badc0de")
        running.service.reloadSnapshots()
        #expect(try await Self.answer(running, Self.american) == messageId)
        #expect(try await Self.answer(running, Self.german) == otherMessageId)

        let metrics = String(decoding: try await running.get("/metrics").body, as: UTF8.self)
        #expect(metrics.contains(#"retention_sync_facts_refused_total{environment="production"} 2"#))
        #expect(metrics.contains(#"retention_sync_facts_customers{environment="production"} 2"#))
        #expect(running.log.contains { $0.contains("facts_refused") && $0.contains("pseudonym key 0badc0de") })
        let decisions = try recorded.decisions()
        #expect(decisions.allSatisfy { $0["facts"] as? String == "table" })
        let everything = try recorded.allBytes() + running.log.joined() + metrics
        #expect(!everything.contains(Self.german) && !everything.contains(Self.american))
    }
}
