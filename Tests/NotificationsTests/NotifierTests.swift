import Basics
import Foundation
import HTTPCore
import HTTPClient
import HTTPServer
import Notifications
import RetentionMessagingModels
import StateStore
@testable import EngineTestSupport
import Testing
import TestSupport

@Suite("Notifications through a webhook on loopback")
struct NotifierTests {
    @Test("each event is told once across two runs, and twice in one run is still once")
    func onceAcrossRuns() async throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let folder = try temporaryFolder()
        let ledger = FileNotificationLedger(besideStateDocument: folder + "/production.json")
        let events = everyKindOfEvent()

        let first = await notifier(receiver.url(path: secretPath), ledger: ledger).send(events + events, now: now)
        #expect(first.warnings == [])
        #expect(first.sent.count == NotificationEvent.Kind.allCases.count)
        #expect(receiver.received.count == NotificationEvent.Kind.allCases.count)
        #expect(receiver.received.allSatisfy { $0.path == secretPath && $0.contentType == "application/json" })
        let texts = receiver.received.compactMap { $0.json?["text"] as? String }
        #expect(texts.count == events.count)
        #expect(texts.first == "[retention-sync] com.example.app production: message winback (de-DE) was REJECTED by App Review; change its content and apply again")

        let second = await notifier(receiver.url(path: secretPath), ledger: ledger).send(events, now: now.adding(seconds: 3600))
        #expect(second.sent == [])
        #expect(Set(second.alreadySent) == Set(events.map(\.key)))
        #expect(receiver.received.count == events.count)

        let stored = try NotificationLedgerDocument.decode(Data(contentsOf: URL(fileURLWithPath: folder + "/production.notifications.json")))
        #expect(Set(stored.sent.keys) == Set(events.map(\.key)))
        #expect(stored.sent.values.allSatisfy { $0 == now })
    }

    @Test("a new occurrence is told even when an earlier one of the same kind was")
    func newOccurrence() async throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let ledger = FileNotificationLedger(path: try temporaryFolder() + "/ledger.json")
        let drift = { (found: String) in
            NotificationEvent.driftCorrected(bundleId: "com.example.app", environment: .production,
                                             what: "realtime URL", found: found, correctedTo: "https://a.example", at: now)
        }
        _ = await notifier(receiver.url(path: "/hook"), ledger: ledger).send([drift("https://b.example")], now: now)
        _ = await notifier(receiver.url(path: "/hook"), ledger: ledger).send([drift("https://b.example")], now: now)
        _ = await notifier(receiver.url(path: "/hook"), ledger: ledger).send([drift("https://c.example")], now: now)
        #expect(receiver.received.count == 2)
    }

    @Test("a performance test's rate and an experiment's difference read as percent and points, as the commands say them")
    func numbersReadAsTheCommandsSayThem() {
        let summaries = everyKindOfEvent().map(\.summary)
        #expect(summaries.contains { $0.hasSuffix("performance test PASS, 100% answered in time") }, "\(summaries)")
        #expect(summaries.contains { $0.contains("on kept_24h (+4.2 points, interval +1.1 to +7.3, always-valid sequential interval)") }, "\(summaries)")
        #expect(!summaries.contains { $0.contains("10000") || $0.contains("+0.0420") })
    }

    @Test("the JSON format carries the event's kind, key and facts with sorted keys")
    func jsonFormat() async throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let ledger = FileNotificationLedger(path: try temporaryFolder() + "/ledger.json")
        let rejected = everyKindOfEvent()[0]
        _ = await notifier(receiver.url(path: "/hook"), format: .json, ledger: ledger).send([rejected], now: now)
        let body = try #require(receiver.received.first).text
        #expect(body == #"{"bundle_id":"com.example.app","details":{"content_kind":"message","identifier":"5f0c6b7e-0000-5000-8000-000000000001","locale":"de-DE","name":"winback"},"environment":"production","event":"content_rejected","format_version":"1.0","key":"content_rejected:com.example.app:production:5f0c6b7e-0000-5000-8000-000000000001","source":"retention-sync","summary":"com.example.app production: message winback (de-DE) was REJECTED by App Review; change its content and apply again"}"#)
    }

    @Test("a webhook that is down only warns, records nothing, and the next run delivers")
    func downWebhookWarns() async throws {
        let down = try RefusingPort()
        let downURL = down.url(path: secretPath)
        let ledger = FileNotificationLedger(path: try temporaryFolder() + "/ledger.json")
        let events = everyKindOfEvent()

        let outcome = await notifier(downURL, ledger: ledger).send(events, now: now)
        #expect(outcome.sent == [])
        #expect(outcome.failed.count == events.count)
        #expect(outcome.warnings.count == 1)
        let warning = try #require(outcome.warnings.first)
        #expect(warning.hasPrefix("notifications: the webhook did not answer after 3 attempts ("))
        #expect(warning.hasSuffix("\(events.count) notification(s) are sent by the next run"))
        #expect(!warning.contains(secretPath) && !warning.contains("s3cr3t"))

        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let retry = await notifier(receiver.url(path: secretPath), ledger: ledger).send(events, now: now)
        #expect(retry.sent.count == events.count)
        #expect(receiver.received.count == events.count)
    }

    @Test("a webhook answering 5xx is tried three times per event, then warns")
    func serverErrorsAreRetried() async throws {
        let receiver = try WebhookReceiver(answering: 503, body: "busy")
        defer { receiver.stop() }
        let ledger = FileNotificationLedger(path: try temporaryFolder() + "/ledger.json")
        let outcome = await notifier(receiver.url(path: secretPath), ledger: ledger).send(Array(everyKindOfEvent().prefix(2)), now: now)
        // The first event's three attempts show the webhook is down; the second is kept for the next run.
        #expect(receiver.received.count == 3)
        #expect(outcome.warnings == ["notifications: the webhook did not answer after 3 attempts (HTTP 503: busy); 2 notification(s) are sent by the next run"])
        #expect(!FileManager.default.fileExists(atPath: ledger.path))
    }

    @Test("the URL never appears, even when the receiver's refusal repeats it")
    func urlNeverPrinted() async throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let url = receiver.url(path: secretPath)
        receiver.answer(404, body: "no_service: \(url.absoluteString) \(secretPath)")
        let ledger = FileNotificationLedger(path: try temporaryFolder() + "/ledger.json")
        let webhook = Webhook(url: url, format: .slack)
        let outcome = await notifier(url, ledger: ledger).send([everyKindOfEvent()[0]], now: now)
        #expect(outcome.warnings == ["notifications: the webhook refused the content_rejected notification (HTTP 404: no_service: <webhook> <webhook>); check RETENTION_SYNC_WEBHOOK_URL and RETENTION_SYNC_WEBHOOK_FORMAT"])
        var dumped = ""
        dump(webhook, to: &dumped)
        for text in [webhook.description, String(reflecting: webhook), dumped, "\(outcome)"] {
            #expect(!text.contains("s3cr3t"), "\(text)")
        }
    }

    @Test("the environment configures the webhook, and a bad value is named without echoing it")
    func configuration() throws {
        #expect(try Webhook.fromEnvironment([:]) == nil)
        #expect(try Webhook.fromEnvironment([Webhook.urlVariable: "  "]) == nil)
        let slack = try #require(try Webhook.fromEnvironment([Webhook.urlVariable: "https://hooks.example.com" + secretPath]))
        #expect(slack.format == .slack)
        let json = try #require(try Webhook.fromEnvironment([Webhook.urlVariable: "https://hooks.example.com/x",
                                                             Webhook.formatVariable: "JSON"]))
        #expect(json.format == .json)
        #expect(throws: WebhookConfigurationError("RETENTION_SYNC_WEBHOOK_URL is not an http(s) URL; set it to the webhook's full URL")) {
            try Webhook.fromEnvironment([Webhook.urlVariable: "hooks.example.com" + secretPath])
        }
        #expect(throws: WebhookConfigurationError("RETENTION_SYNC_WEBHOOK_FORMAT=teams is not a format; use slack or json")) {
            try Webhook.fromEnvironment([Webhook.urlVariable: "https://hooks.example.com/x", Webhook.formatVariable: "teams"])
        }
        // From a mounted secret: the file RETENTION_SYNC_WEBHOOK_URL_FILE names.
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("webhook-\(UUID().uuidString)")
        try ("https://hooks.example.com" + secretPath + "\n").write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let mounted = try #require(try Webhook.fromEnvironment([Webhook.urlVariable + "_FILE": file.path]))
        #expect(mounted.url == slack.url)
        #expect(throws: WebhookConfigurationError("RETENTION_SYNC_WEBHOOK_URL_FILE names \(file.path).gone, which is not a file this process can read: "
                                                  + "give the path of the file that holds RETENTION_SYNC_WEBHOOK_URL")) {
            try Webhook.fromEnvironment([Webhook.urlVariable + "_FILE": file.path + ".gone"])
        }
    }

    @Test("a ledger that cannot be read tells nothing and says how to recover")
    func unreadableLedger() async throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let path = try temporaryFolder() + "/ledger.json"
        try Data("not json".utf8).write(to: URL(fileURLWithPath: path))
        let outcome = await notifier(receiver.url(path: "/hook"), ledger: FileNotificationLedger(path: path)).send(everyKindOfEvent(), now: now)
        #expect(receiver.received.isEmpty)
        #expect(outcome.warnings == ["notifications: nothing sent: cannot read the ledger: \(path) is not a notification ledger; delete the file to start a new ledger"])
        #expect(outcome.failed.count == NotificationEvent.Kind.allCases.count)
    }

    @Test("ledger entries older than the retention are dropped when it is saved")
    func ledgerRetention() throws {
        var document = NotificationLedgerDocument(sent: ["old": now.adding(seconds: -181 * 86_400), "recent": now.adding(seconds: -86_400)])
        document.expire(now: now)
        #expect(Array(document.sent.keys) == ["recent"])
    }
}
