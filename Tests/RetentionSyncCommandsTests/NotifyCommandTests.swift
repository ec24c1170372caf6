import CLIKit
import Emulator
import Foundation
import RetentionMessagingModels
@testable import RetentionSyncCommands
@testable import CommandTestSupport
@testable import EngineTestSupport
import Testing
import TestSupport

@Suite("Notifications from status runs")
struct NotifyCommandTests {
    static let secretPath = "/services/T0ACME/B0RETAIN/s3cr3tT0k3nNeverPrinted"

    @Test("an hourly status tells the team about a rejection once, and never prints the webhook URL")
    func rejectionToldOnce() async throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let harness = try CommandHarness()
        #expect(await harness.run(["apply", "--env", "production"]).code == .success)
        let status = try #require(try JSONSerialization.jsonObject(with: Data(await harness.run(["status", "--env", "production", "--format", "json"]).stdout.utf8)) as? [String: Any])
        let messages = try #require(status["messages"] as? [[String: Any]])
        let rejected = try #require(messages.first { $0["name"] as? String == "everyday-calm" && $0["locale"] as? String == "en-US" }?["identifier"] as? String)
        try harness.emulator.rejectMessage(rejected, in: .production)

        let environment = ["RETENTION_SYNC_WEBHOOK_URL": receiver.url(path: Self.secretPath).absoluteString]
        let first = await harness.run(["status", "--env", "production"], environment: environment)
        let second = await harness.run(["status", "--env", "production"], environment: environment)
        #expect(first.code == .success && second.code == .success)
        #expect(receiver.received.count == 1)
        let text = try #require(receiver.received.first?.json?["text"] as? String)
        #expect(text == "[retention-sync] com.example.stillpoint production: message everyday-calm (en-US) was REJECTED by App Review; change its content and apply again")
        #expect(first.stderr.contains("Notified the slack webhook of 1 event(s)."))
        #expect(!second.stderr.contains("Notified"))
        for run in [first, second] {
            #expect(!run.stdout.contains("s3cr3t") && !run.stderr.contains("s3cr3t"))
        }
        #expect(FileManager.default.fileExists(atPath: harness.file("manifests/.retention-sync/production-snapshot.notifications.json").path))
    }

    @Test("a split group whose ready arm waits for another arm's review is told once: the group stays as published")
    func heldSplitGroupToldOnce() async throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let harness = try CommandHarness()
        #expect(await harness.run(["apply", "--env", "production"]).code == .success)
        // App Review approves everything but the upsell arm's message.
        let status = try #require(try JSONSerialization.jsonObject(with: Data(await harness.run(["status", "--env", "production", "--format", "json"]).stdout.utf8)) as? [String: Any])
        for message in try #require(status["messages"] as? [[String: Any]]) where message["name"] as? String != "switch-to-yearly" {
            try harness.emulator.approveMessage(try #require(message["identifier"] as? String), in: .production)
        }
        for image in try #require(status["images"] as? [[String: Any]]) {
            try harness.emulator.approveImage(try #require(image["identifier"] as? String), in: .production)
        }
        let environment = ["RETENTION_SYNC_WEBHOOK_URL": receiver.url(path: Self.secretPath).absoluteString]
        #expect(await harness.run(["status", "--env", "production"], environment: environment).code == .success)
        #expect(await harness.run(["status", "--env", "production"], environment: environment).code == .success)
        let texts = receiver.received.compactMap { $0.json?["text"] as? String }.filter { $0.contains("split group") }
        #expect(texts == ["[retention-sync] com.example.stillpoint production: split group yearly-upsell stays as published: "
                          + "cancel-flow/upsell-control is ready but waits for cancel-flow/upsell-yearly to pass App Review, "
                          + "so no customer changes arm until every arm is approved"])
    }

    @Test("a webhook that is down leaves status successful with one warning")
    func downWebhookOnlyWarns() async throws {
        let down = try RefusingPort()
        let url = down.url(path: Self.secretPath)
        let harness = try CommandHarness()
        #expect(await harness.run(["apply", "--env", "production"]).code == .success)
        let status = try #require(try JSONSerialization.jsonObject(with: Data(await harness.run(["status", "--env", "production", "--format", "json"]).stdout.utf8)) as? [String: Any])
        let rejected = try #require((status["messages"] as? [[String: Any]])?.first?["identifier"] as? String)
        try harness.emulator.rejectMessage(rejected, in: .production)

        let run = await harness.run(["status", "--env", "production", "--detailed-exitcode"],
                                    environment: ["RETENTION_SYNC_WEBHOOK_URL": url.absoluteString, "RETENTION_SYNC_WEBHOOK_FORMAT": "json"])
        #expect(run.code == .needsAttention)
        let warnings = run.stderr.split(separator: "\n").filter { $0.hasPrefix("warning: notifications:") }
        #expect(warnings.count == 1)
        #expect(warnings.first?.contains("1 notification(s) are sent by the next run") == true)
        #expect(!run.stdout.contains("s3cr3t") && !run.stderr.contains("s3cr3t"))
    }
}

@Suite("Notifications from apply runs")
struct NotifyApplyTests {
    @Test("a default changed outside the manifests is set back by apply and told once as drift")
    func driftToldOnce() async throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let harness = try CommandHarness()
        let environment = ["RETENTION_SYNC_WEBHOOK_URL": receiver.url(path: NotifyCommandTests.secretPath).absoluteString,
                           "RETENTION_SYNC_WEBHOOK_FORMAT": "json"]
        #expect(await harness.run(["apply", "--env", "sandbox", "--auto-approve"], environment: environment).code == .success)
        #expect(receiver.received.isEmpty)
        var state = harness.emulator.state(of: .sandbox)
        let drifted = try #require(state.defaults.keys.sorted().last)
        let wanted = try #require(state.defaults[drifted])
        state.defaults[drifted] = nil
        harness.emulator.restore(state, in: .sandbox)

        let apply = await harness.run(["apply", "--env", "sandbox", "--refresh-defaults", "all", "--auto-approve"], environment: environment)
        #expect(apply.code == .success, "\(apply.stderr)")
        #expect(harness.emulator.state(of: .sandbox).defaults[drifted] == wanted)
        #expect(await harness.run(["apply", "--env", "sandbox", "--refresh-defaults", "all", "--auto-approve"], environment: environment).code == .success)
        #expect(receiver.received.count == 1)
        let event = try #require(receiver.received.first?.json)
        #expect(event["event"] as? String == "drift_corrected")
        let details = try #require(event["details"] as? [String: String])
        #expect(details["found"] == "(no default)")
        #expect(details["corrected_to"] == wanted.lowercased() || details["corrected_to"] == wanted)
        #expect(!apply.stdout.contains("s3cr3t") && !apply.stderr.contains("s3cr3t"))
    }

    @Test("a failed apply in CI tells the team once, naming the run")
    func failedApplyTold() async throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let harness = try CommandHarness()
        harness.emulator.setFaults(FaultInjection(haltAfterRequests: 14))
        let environment = ["RETENTION_SYNC_WEBHOOK_URL": receiver.url(path: NotifyCommandTests.secretPath).absoluteString,
                           "RETENTION_SYNC_WEBHOOK_FORMAT": "json", "GITHUB_SERVER_URL": "https://github.com",
                           "GITHUB_REPOSITORY": "acme/stillpoint", "GITHUB_RUN_ID": "77"]
        let failed = await harness.run(["apply", "--env", "sandbox"], environment: environment)
        #expect(failed.code == .failure)
        let event = try #require(receiver.received.last?.json)
        #expect(event["event"] as? String == "apply_failed")
        #expect(event["key"] as? String == "apply_failed:com.example.stillpoint:sandbox:https://github.com/acme/stillpoint/actions/runs/77")
        let details = try #require(event["details"] as? [String: String])
        #expect(details["completed"] == "5")
        #expect(!failed.stderr.contains("s3cr3t"))
    }
}
