import Crypto
import EventStore
import EventContract
import Foundation
import HTTPCore
import RealtimeServer
import RetentionMessagingModels
import Runtime
import Testing
import TestSupport

/// A snapshot with one split group on the monthly product: arm-a (the control) answers a message,
/// arm-b answers none, half of the customers each.
func splitSnapshot() throws -> RuntimeSnapshot {
    try RuntimeSnapshot(bundleId: bundleId, appAppleId: appAppleId, environment: .production, localeFallbacks: [:], rules: [
        SnapshotRule(id: "cancel/arm-a", version: "0123456789abcdef",
                     match: SnapshotMatch(products: [monthly], split: SnapshotSplit(salt: "upsell", lowerBucket: 0, upperBucket: 5000, control: true)),
                     response: SnapshotResponse(kind: .message, message: "stay", messageIdentifiers: ["en-US": messageId])),
        SnapshotRule(id: "cancel/arm-b", version: "0123456789abcdef",
                     match: SnapshotMatch(products: [monthly], split: SnapshotSplit(salt: "upsell", lowerBucket: 5000, upperBucket: 10000)),
                     response: SnapshotResponse(kind: .none)),
    ]).sealed()
}

/// Signs a notification as Apple does, with its nested transaction and renewal info.
func signedNotification(_ chain: AppleStyleSigningChain, type: String, subtype: String?, transaction: String, uuid: String,
                        environment: String = "Production", app: Int64 = appAppleId, at date: Int64) throws -> String {
    let info = TransactionPayload(transactionId: "9" + transaction, originalTransactionId: transaction, bundleId: bundleId, productId: monthly,
                                  purchaseDate: date - 86_400_000, expiresDate: date + 29 * 86_400_000, price: 9990, currency: "USD",
                                  environment: environment, signedDate: date)
    let renewal = RenewalInfoPayload(originalTransactionId: transaction, productId: monthly, autoRenewProductId: monthly,
                                     autoRenewStatus: subtype == "AUTO_RENEW_DISABLED" ? 0 : 1, environment: environment, signedDate: date)
    let payload = NotificationPayload(notificationType: type, subtype: subtype, notificationUUID: uuid, signedDate: date, data: NotificationData(
        appAppleId: app, bundleId: bundleId, environment: environment,
        signedTransactionInfo: try chain.sign(payloadJSON: Array(try CanonicalJSON.encode(info))),
        signedRenewalInfo: try chain.sign(payloadJSON: Array(try CanonicalJSON.encode(renewal)))))
    return try chain.sign(payloadJSON: Array(try CanonicalJSON.encode(payload)))
}

@Suite("serve records what it answers, and what became of the customer", .serialized)
struct DecisionRecordingTests {
    static let secret = "0123456789abcdef0123456789abcdef0123456789abcdef"

    final class Recorded {
        let folder: URL
        let recording: RealtimeService.Recording

        init() throws {
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("recorded-\(UUID().uuidString)")
            let recorder = EventRecorder(sink: FolderEventSink(root: folder),
                                         settings: .init(writerId: "serve-test", spool: folder.appendingPathComponent(".spool"), flushInterval: 0.05))
            recorder.start()
            recording = RealtimeService.Recording(recorder: recorder, pseudonyms: try PseudonymKey(secret: DecisionRecordingTests.secret))
        }

        deinit { try? FileManager.default.removeItem(at: folder) }

        /// Every line of `stream`, after the recorder stored everything.
        func lines(_ stream: EventStream) throws -> [[String: Any]] {
            recording.recorder.close()
            return try eventLines(under: folder, prefix: "events/v1/\(stream.rawValue)/environment=production/")
        }

        /// Every byte written under the folder, segments and spool alike.
        func allBytes() throws -> String { RealtimeServerTests.allBytes(under: folder) }
    }

    @Test("every answer and every refusal is one decision event with its rule, split arm and the customer's pseudonym — never the transaction id")
    func decisionsRecorded() async throws {
        let recorded = try Recorded()
        let running = try RunningService(snapshot: try splitSnapshot(), recording: recorded.recording)
        let transactions = (0..<40).map { String(2_000_000_000_000_100 + $0) }
        for transaction in transactions {
            #expect(try await running.post(requestBody(product: monthly, transaction: transaction)).status == 200)
        }
        let forger = try AppleStyleSigningChain(name: "forger")
        let forged = try JWS.sign(headerJSON: Array(try CanonicalJSON.encode(JWSHeader(alg: "ES256", x5c: forger.x5c))),
                                  payloadJSON: Array(try CanonicalJSON.encode(requestBody(transaction: "2000000000009999"))), key: forger.leafKey)
        #expect(try await running.post(forged).status == 401)
        let metrics = String(decoding: try await running.get("/metrics").body, as: UTF8.self)

        let lines = try recorded.lines(.decisions)
        #expect(lines.count == 41)
        let pseudonyms = try PseudonymKey(secret: Self.secret)
        let answered = lines.filter { $0["answer"] as? String != "refused" }
        #expect(Set(answered.compactMap { $0["customer"] as? String }) == Set(transactions.map(pseudonyms.pseudonym)))
        for line in answered {
            let arm = try #require(line["arm"] as? String)
            let bucket = TrafficBucket.bucket(salt: "upsell", originalTransactionId: transactions.first { pseudonyms.pseudonym($0) == line["customer"] as? String }!)
            #expect(arm == (bucket < 5000 ? "arm-a" : "arm-b"))
            #expect(line["flow"] as? String == "cancel" && line["rule"] as? String == arm && line["splitGroup"] as? String == "upsell")
            #expect(line["splitControl"] as? Bool == (arm == "arm-a"))
            #expect(line["answer"] as? String == (arm == "arm-a" ? "message" : "none"))
            #expect(line["messageIdentifier"] as? String == (arm == "arm-a" ? messageId : nil))
            #expect(line["localeServed"] as? String == (arm == "arm-a" ? "en-US" : nil))
            #expect(line["keyId"] as? String == pseudonyms.keyId && line["productId"] as? String == monthly)
            #expect(line["snapshot"] as? String == (try splitSnapshot()).digest)
            #expect((line["latencyMicros"] as? Int ?? -1) >= 0)
        }
        let refused = try #require(lines.first { $0["answer"] as? String == "refused" })
        #expect(refused["customer"] is NSNull && refused["rule"] is NSNull)
        #expect(Set(lines.compactMap { $0["eventId"] as? String }).count == 41)

        // Nowhere: not in the events, the log, or /metrics.
        let everything = try recorded.allBytes() + running.log.joined() + metrics
        for transaction in transactions + ["2000000000009999"] { #expect(!everything.contains(transaction)) }
        #expect(metrics.contains(#"retention_sync_decisions_total{arm="arm-a",environment="production",flow="cancel",group="upsell",kind="message",rule="cancel/arm-a"}"#))
        #expect(metrics.contains(#"retention_sync_decisions_total{arm="arm-b",environment="production",flow="cancel",group="upsell",kind="none",rule="cancel/arm-b"}"#))
        #expect(metrics.contains(#"retention_sync_events_recorded_total{stream="decisions"} 41"#))
    }

    @Test("when the events folder stops taking segments after start, /readyz and /metrics show a degraded recorder, in the tool's words, until it takes them again")
    func degradedRecorder() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("degraded-\(UUID().uuidString)")
        let events = folder.appendingPathComponent("events-root")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: events, withIntermediateDirectories: true)
        let notices = Locked<[String]>()
        let recorder = EventRecorder(sink: FolderEventSink(root: events),
                                     settings: .init(writerId: "serve-test", spool: folder.appendingPathComponent("spool"), flushInterval: 0.05),
                                     onNotice: { notices.append($0) })
        recorder.start()
        let recording = RealtimeService.Recording(recorder: recorder, pseudonyms: try PseudonymKey(secret: Self.secret))
        let running = try RunningService(snapshot: try splitSnapshot(), recording: recording)
        defer { recorder.close() }
        func readiness() async throws -> (status: Int, body: String) {
            let answer = try await running.get("/readyz")
            return (answer.status, String(decoding: answer.body, as: UTF8.self))
        }
        func metrics() async throws -> String { String(decoding: try await running.get("/metrics").body, as: UTF8.self) }
        /// Polls until `condition` holds, for at most 10 seconds (the recorder flushes every 50 ms).
        func eventually(_ condition: () async throws -> Bool) async throws -> Bool {
            let deadline = ContinuousClock.now + .seconds(10)
            while ContinuousClock.now < deadline {
                if try await condition() { return true }
                try await Task.sleep(nanoseconds: 20_000_000)
            }
            return try await condition()
        }

        #expect(try await running.post(requestBody(transaction: "2000000000000101")).status == 200)
        #expect(try await eventually { recorder.snapshot.storedSegments > 0 })
        #expect(try await readiness() == (200, "ready\n"))
        #expect(try await metrics().contains("retention_sync_event_store_up 1"))

        // The folder becomes a regular file: nothing can be created under it, for root too.
        try FileManager.default.removeItem(at: events)
        try Data("not a folder\n".utf8).write(to: events)
        #expect(try await running.post(requestBody(transaction: "2000000000000102")).status == 200)
        #expect(try await eventually { try await readiness().body.contains("degraded:") })
        let degraded = try await readiness()
        #expect(degraded.status == 200, "customers are still answered")
        #expect(degraded.body.contains("events: the event store \(events.path) refuses segments"), "\(degraded.body)")
        #expect(degraded.body.contains("\(events.standardizedFileURL.path) is a file, not a folder"), "\(degraded.body)")
        #expect(degraded.body.contains("wait in the spool \(folder.appendingPathComponent("spool").path)"), "\(degraded.body)")
        #expect(try await metrics().contains("retention_sync_event_store_up 0"))
        let said = notices.value.joined(separator: "\n") + degraded.body
        #expect(!said.contains("NSCocoaErrorDomain") && !said.contains("The operation could not be completed"), "\(said)")

        // Fixed: the spooled segment is stored, and the recorder is whole again.
        try FileManager.default.removeItem(at: events)
        try FileManager.default.createDirectory(at: events, withIntermediateDirectories: true)
        #expect(try await running.post(requestBody(transaction: "2000000000000103")).status == 200)
        #expect(try await eventually { try await readiness() == (200, "ready\n") })
        #expect(try await metrics().contains("retention_sync_event_store_up 1"))
        #expect(notices.value.contains { $0.contains("answers again") })
    }

    @Test("a genuine notification becomes one outcome event; a forged, foreign or malformed one is refused, counted and never recorded")
    func notificationsRecorded() async throws {
        let recorded = try Recorded()
        let running = try RunningService(snapshot: try splitSnapshot(), recording: recorded.recording)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let genuine = try signedNotification(running.chain, type: "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED",
                                             transaction: "2000000000000777", uuid: "0E5C3A4B-1F2D-4C3B-9A8B-7C6D5E4F3A2B", at: now)
        #expect(try await running.postNotification(genuine).status == 200)
        // Apple retries until it gets a 200: the same notification again is accepted, and is the same event.
        #expect(try await running.postNotification(genuine).status == 200)
        let forger = try AppleStyleSigningChain(name: "forger")
        let forged = try signedNotification(forger, type: "DID_RENEW", subtype: nil, transaction: "2000000000000778", uuid: UUID().uuidString, at: now)
        #expect(try await running.postNotification(forged).status == 401)
        let foreign = try signedNotification(running.chain, type: "DID_RENEW", subtype: nil, transaction: "2000000000000779",
                                             uuid: UUID().uuidString, app: 42, at: now)
        #expect(try await running.postNotification(foreign).status == 401)
        let sandbox = try signedNotification(running.chain, type: "DID_RENEW", subtype: nil, transaction: "2000000000000780",
                                             uuid: UUID().uuidString, environment: "Sandbox", at: now)
        #expect(try await running.postNotification(sandbox).status == 401)
        #expect(try await running.postNotification("not.a.jws").status == 401)
        let metrics = String(decoding: try await running.get("/metrics").body, as: UTF8.self)

        let outcomes = try recorded.lines(.outcomes)
        #expect(outcomes.count == 2)
        #expect(Set(outcomes.compactMap { $0["eventId"] as? String }) == ["0e5c3a4b-1f2d-4c3b-9a8b-7c6d5e4f3a2b"])
        let outcome = try #require(outcomes.first)
        let pseudonyms = try PseudonymKey(secret: Self.secret)
        #expect(outcome["customer"] as? String == pseudonyms.pseudonym("2000000000000777"))
        #expect(outcome["notificationType"] as? String == "DID_CHANGE_RENEWAL_STATUS" && outcome["subtype"] as? String == "AUTO_RENEW_DISABLED")
        #expect(outcome["autoRenewStatus"] as? Int == 0 && outcome["price"] as? Int == 9990 && outcome["currency"] as? String == "USD")
        #expect(outcome["expiresDate"] as? String == EventTime.format(now + 29 * 86_400_000))
        #expect(outcome["source"] as? String == "push")
        #expect(metrics.contains(#"retention_sync_notifications_total{environment="production",outcome="recorded"} 2"#))
        #expect(metrics.contains(#"retention_sync_notifications_total{environment="production",outcome="refused"} 4"#))
        let everything = try recorded.allBytes() + running.log.joined() + metrics
        for transaction in ["2000000000000777", "2000000000000778", "2000000000000779", "2000000000000780"] {
            #expect(!everything.contains(transaction))
        }
    }

    @Test("without a recording, the notifications path does not exist and answering is unchanged")
    func notRecording() async throws {
        let running = try RunningService(snapshot: try splitSnapshot())
        #expect(try await running.postNotification("x.y.z").status == 404)
        #expect(try await running.post(requestBody(product: monthly)).status == 200)
        #expect(!String(decoding: try await running.get("/metrics").body, as: UTF8.self).contains("retention_sync_events_recorded_total"))
    }
}

@Suite("Decision answers")
struct DecisionAnswerSpellingTests {
    @Test("every kind of snapshot response is spelt as the decision event's answer")
    func snapshotKindsAreDecisionAnswers() {
        for kind in SnapshotResponse.Kind.allCases {
            #expect(DecisionAnswer(rawValue: kind.rawValue) != nil, "\(kind.rawValue)")
        }
    }
}
