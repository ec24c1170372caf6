import Basics
import CLIKit
import Emulator
import Foundation
import RetentionMessaging
import RetentionMessagingModels
import RetentionSyncCommands
@testable import CommandTestSupport
import Testing

@Suite("A team's first weeks")
struct FirstWeeksTests {
    private func statusMessages(_ harness: CommandHarness) async throws -> [[String: Any]] {
        let run = await harness.run(["status", "--env", "production", "--format", "json"])
        let status = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        return try #require(status["messages"] as? [[String: Any]])
    }

    @Test("a REJECTED version that a fixed text superseded is history: status clears once the fix is approved")
    func supersededRejectionClears() async throws {
        let harness = try CommandHarness()
        #expect(await harness.run(["apply", "--env", "production"]).code == .success)
        let first = try await statusMessages(harness)
        let rejected = try #require(first.first { $0["name"] as? String == "everyday-calm" && $0["locale"] as? String == "en-US" }?["identifier"] as? String)
        try harness.emulator.rejectMessage(rejected, in: .production)
        #expect(await harness.run(["status", "--env", "production", "--detailed-exitcode"]).code == .needsAttention)

        try harness.edit("manifests/messages.yaml", replacing: "header: Your calm is worth keeping", with: "header: Your calm is worth it")
        #expect(await harness.run(["apply", "--env", "production"]).code == .success)
        harness.emulator.approveAllPending(in: .production)
        #expect(await harness.run(["apply", "--env", "production"]).code == .success)

        let status = await harness.run(["status", "--env", "production", "--detailed-exitcode"])
        #expect(status.code == .success, "\(status.stdout)")
        let old = try #require(try await statusMessages(harness).first { $0["identifier"] as? String == rejected })
        #expect(old["state"] as? String == "REJECTED")
        #expect(old["derived"] as? Bool == false)
        #expect(old["needs_attention"] as? Bool == false)
    }

    @Test("after a revert, the newer approved version is a rollback target (or, beyond the kept versions, a newer version), never an older one")
    func revertedVersionIsNotOlder() async throws {
        let harness = try CommandHarness()
        #expect(await harness.run(["apply", "--env", "sandbox"]).code == .success)
        try harness.edit("manifests/messages.yaml", replacing: "header: Before you go", with: "header: Wait a moment")
        #expect(await harness.run(["apply", "--env", "sandbox"]).code == .success)
        try harness.edit("manifests/messages.yaml", replacing: "header: Wait a moment", with: "header: Before you go")
        #expect(await harness.run(["apply", "--env", "sandbox"]).code == .success)

        func labels(_ extra: [String]) async throws -> [String] {
            let run = await harness.run(["plan", "--env", "sandbox", "--format", "json"] + extra)
            let plan = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
            return (plan["inventory"] as? [[String: Any]] ?? []).compactMap { $0["label"] as? String }
        }
        #expect(try await labels([]) == ["rollback_target"])
        #expect(try await labels(["--rollback-versions", "0"]) == ["newer_version"])
        let text = await harness.run(["plan", "--env", "sandbox"])
        #expect(text.stdout.contains("rollback target for before-you-go (en-US)"), "\(text.stdout)")
    }

    @Test("a lost state store is a missing state, not a first publish: every format says so, apply refuses, state migrate brings it back")
    func lostStateIsNotAFirstPublish() async throws {
        let harness = try CommandHarness()
        #expect(await harness.run(["apply", "--env", "sandbox"]).code == .success)
        // The runner that held the file store is gone: the document moves away.
        let store = harness.file("manifests/.retention-sync/sandbox-snapshot.json")
        let moved = harness.file("old-sandbox-state.json")
        try FileManager.default.moveItem(at: store, to: moved)

        let text = await harness.run(["plan", "--env", "sandbox"])
        #expect(text.stdout.contains("Missing state: The state store"), "\(text.stdout)")
        // Not a green plan: apply would refuse it, so the plan fails too, with or without --detailed-exitcode.
        #expect(text.code == .failure)
        #expect(text.stderr.contains("error: apply would refuse this plan: "), "\(text.stderr)")
        #expect(await harness.run(["plan", "--env", "sandbox", "--detailed-exitcode"]).code == .failure)
        #expect(!text.stderr.contains("First publish"))
        let markdown = await harness.run(["plan", "--env", "sandbox", "--format", "markdown"])
        #expect(markdown.stdout.contains("> **Missing state.** The state store"), "\(markdown.stdout)")
        let github = await harness.run(["plan", "--env", "sandbox", "--format", "github"])
        #expect(github.stdout.contains("::error title=missing state::"), "\(github.stdout)")
        let json = await harness.run(["plan", "--env", "sandbox", "--format", "json"])
        let plan = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let missing = try #require(plan["missing_state"] as? [String: Any])
        #expect(missing["content_at_apple"] as? Int == missing["content_derived"] as? Int)

        let refused = await harness.run(["apply", "--env", "sandbox"])
        #expect(refused.code == .failure)
        #expect(refused.stderr.contains("refusing to apply"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: store.path), "nothing was written")

        let migrated = await harness.run(["state", "migrate", "--env", "sandbox", "--from", moved.path])
        #expect(migrated.code == .success, "\(migrated.stderr)")
        #expect(migrated.stdout.contains("Moved the state of com.example.stillpoint"))
        #expect(await harness.run(["plan", "--env", "sandbox", "--detailed-exitcode"]).code == .success, "in sync again")
        // A second migrate never overwrites what the store now holds.
        let again = await harness.run(["state", "migrate", "--env", "sandbox", "--from", moved.path])
        #expect(again.code == .failure)
        #expect(again.stderr.contains("already holds a state document"))

        // Starting afresh on purpose is said explicitly.
        try FileManager.default.removeItem(at: store)
        #expect(await harness.run(["apply", "--env", "sandbox", "--first-publish"]).code == .success)
        #expect(FileManager.default.fileExists(atPath: store.path))
    }

    @Test("status says how long App Review takes here, and how long pending content has waited")
    func statusShowsReviewTime() async throws {
        let harness = try CommandHarness()
        #expect(await harness.run(["apply", "--env", "production"]).code == .success)
        harness.clock.advance(by: 2 * 86_400)
        #expect(await harness.run(["apply", "--env", "production"]).code == .success)
        let pending = await harness.run(["status", "--env", "production"])
        #expect(pending.stdout.contains("Review time (production"), "\(pending.stdout)")
        #expect(pending.stdout.contains("  waiting: "), "\(pending.stdout)")
        harness.emulator.approveAllPending(in: .production)
        harness.clock.advance(by: 86_400)
        #expect(await harness.run(["apply", "--env", "production"]).code == .success)
        let markdown = await harness.run(["status", "--env", "production", "--format", "markdown"])
        #expect(markdown.stdout.contains("<details><summary>Review time (production): median "), "\(markdown.stdout)")
    }
}
