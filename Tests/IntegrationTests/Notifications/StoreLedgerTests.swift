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

@Suite("The ledger beside the state, in an S3-compatible store (moto)")
struct StoreLedgerTests {
    @Test("two runs sharing only the bucket tell each event once")
    func onceThroughS3() async throws {
        let server = try await MotoServer.start()
        defer { server.stop() }
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let configuration = try S3Configuration.fromEnvironment(server.environment(server.writer), store: "test")
        let owner = StateOwner(bundleId: "com.example.app", appAppleId: nil, environment: .production)
        let store = S3StateStore(bucket: server.bucket, key: "retention-sync/production.json", owner: owner,
                                 configuration: configuration, transport: MotoServer.client)
        let ledger = StateStoreNotificationLedger(store: store)
        #expect(ledger.name == "s3://retention-state/retention-sync/production.notifications.json")
        for _ in 0..<2 {
            var notifier = Notifier(webhook: Webhook(url: receiver.url(path: secretPath), format: .json), ledger: ledger,
                                    transport: CurlHTTPClient())
            notifier.pause = { _ in }
            let outcome = await notifier.send(everyKindOfEvent(), now: now)
            #expect(outcome.warnings == [])
        }
        #expect(receiver.received.count == NotificationEvent.Kind.allCases.count)
    }
}
