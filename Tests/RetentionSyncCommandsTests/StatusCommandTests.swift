import CLIKit
import Emulator
import Foundation
import RetentionMessaging
import RetentionMessagingModels
@testable import RetentionSyncCommands
@testable import CommandTestSupport
import Testing

@Suite("retention-sync status")
struct StatusCommandTests {
    @Test("status lists every remote message with its review state, what it is, where it is used and what comes next")
    func statusAfterProductionApply() async throws {
        let harness = try CommandHarness()
        #expect(await harness.run(["apply", "--env", "production"]).code == .success)
        let run = await harness.run(["status", "--env", "production", "--format", "json"])
        #expect(run.code == .success)
        let status = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let messages = try #require(status["messages"] as? [[String: Any]])
        #expect(messages.count == 12)
        #expect(messages.allSatisfy { $0["state"] as? String == "PENDING" && $0["derived"] as? Bool == true })
        let calm = try #require(messages.first { $0["name"] as? String == "everyday-calm" && $0["locale"] as? String == "en-US" })
        #expect((calm["next"] as? String)?.hasPrefix("wait for App Review; then becomes default") == true)

        harness.emulator.approveAllPending(in: .production)
        #expect(await harness.run(["apply", "--env", "production"]).code == .success)
        let text = await harness.run(["status", "--env", "production"])
        #expect(text.stdout.hasPrefix("Status (production) of com.example.stillpoint: in sync, health healthy"))
        #expect(text.stdout.contains("in use: default com.example.stillpoint.monthly/en-US, default com.example.stillpoint.yearly/en-US"))
        #expect(text.stdout.contains("in use: rule cancel-flow/upsell-control (en-US)"))
    }
}
