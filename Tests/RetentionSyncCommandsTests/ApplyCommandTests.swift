import CLIKit
import Crypto
import Emulator
import Foundation
import RetentionMessaging
import Reconciler
import RetentionMessagingModels
@testable import RetentionSyncCommands
@testable import CommandTestSupport
import Testing

@Suite("retention-sync apply")
struct ApplyCommandTests {
    @Test("applying twice prints 'No changes' and uploads nothing the second time")
    func applyTwice() async throws {
        let harness = try CommandHarness()
        let first = await harness.run(["apply", "--env", "sandbox"])
        #expect(first.code == .success)
        #expect(first.stdout.contains("Apply complete: 24 done"))
        let uploads = harness.emulator.state(of: .sandbox).messages.count
        let requests = harness.emulator.requestCount(in: .sandbox)
        let second = await harness.run(["apply", "--env", "sandbox"])
        #expect(second.code == .success)
        #expect(second.stdout.contains("No changes. Nothing to apply."))
        #expect(harness.emulator.state(of: .sandbox).messages.count == uploads)
        #expect(harness.emulator.requestCount(in: .sandbox) == requests + 9)
    }

    @Test("apply --plan applies a saved plan, and refuses one saved before the manifests changed")
    func savedPlans() async throws {
        let harness = try CommandHarness()
        #expect(await harness.run(["plan", "--env", "sandbox", "--out", "plan.json"]).code == .success)
        let applied = await harness.run(["apply", "--env", "sandbox", "--plan", "plan.json"])
        #expect(applied.code == .success)
        #expect(applied.stdout.contains("Applying the saved plan plan.json."))

        #expect(await harness.run(["plan", "--env", "sandbox", "--out", "stale.json"]).code == .success)
        try harness.edit("manifests/messages.yaml", replacing: "header: Before you go", with: "header: Wait a moment")
        let refused = await harness.run(["apply", "--env", "sandbox", "--plan", "stale.json"])
        #expect(refused.code == .failure)
        #expect(refused.stderr.contains("the manifests changed since the plan was made"))
        #expect(harness.emulator.state(of: .sandbox).messages.count == 12)
    }

    @Test("applying a reviewed plan after App Review approved its waiting content says what it publishes instead of waiting")
    func savedPlanAfterReviewProgressed() async throws {
        let harness = try CommandHarness()
        #expect(await harness.run(["apply", "--env", "production"]).code == .success)
        #expect(await harness.run(["plan", "--env", "production", "--out", "reviewed.json", "--detailed-exitcode"]).code == .success)
        harness.emulator.approveAllPending(in: .production)
        let fresh = await harness.run(["plan", "--env", "production", "--format", "json"])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(fresh.stdout.utf8)) as? [String: Any])
        let publish = try #require((json["actions"] as? [[String: Any]])?.first { $0["kind"] as? String == "publish_snapshot" })
        let digest = try #require(publish["snapshot_digest"] as? String)
        let applied = await harness.run(["apply", "--env", "production", "--plan", "reviewed.json", "--format", "github"])
        #expect(applied.code == .success, "\(applied.stdout)\(applied.stderr)")
        #expect(applied.stdout.contains("Review progressed since the plan was saved: publishing \(PlanAction.shortDigest(digest)) instead of waiting (the saved plan showed sha256:"),
                "\(applied.stdout)")
        #expect(applied.stdout.contains("::notice title=Review progressed::"), "\(applied.stdout)")
        #expect(applied.stdout.contains("Review progressed since the plan was saved: set default"), "\(applied.stdout)")
        // A plan applied as it was saved says nothing of the kind.
        #expect(await harness.run(["plan", "--env", "production", "--out", "again.json"]).code == .success)
        let same = await harness.run(["apply", "--env", "production", "--plan", "again.json"])
        #expect(!same.stdout.contains("Review progressed"))
    }

    @Test("a failed apply writes a report of what succeeded, and the next apply finishes the job")
    func reportAfterFailure() async throws {
        let harness = try CommandHarness()
        harness.emulator.setFaults(FaultInjection(haltAfterRequests: 14))
        let failed = await harness.run(["apply", "--env", "sandbox", "--report", "report.json"])
        #expect(failed.code == .failure)
        #expect(failed.stderr.contains("run apply again to finish"))
        let report = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: harness.file("report.json"))) as? [String: Any])
        #expect(report["completed"] as? Bool == false)
        let results = report["results"] as? [[String: Any]] ?? []
        #expect(results.filter { $0["outcome"] as? String == "done" }.count == 5)
        #expect(results.last?["outcome"] as? String == "failed")

        harness.emulator.setFaults(.none)
        let resumed = await harness.run(["apply", "--env", "sandbox"])
        #expect(resumed.code == .success)
        #expect(await harness.run(["plan", "--env", "sandbox", "--detailed-exitcode"]).code == .success)
    }

    @Test("--prune keeps the approved versions a revert needs, deletes them when named, and refuses a mass delete without --prune-force")
    func prune() async throws {
        let harness = try CommandHarness()
        #expect(await harness.run(["apply", "--env", "sandbox"]).code == .success)
        // An edit leaves the old version behind: approved, recorded, so a rollback target that --prune keeps.
        try harness.edit("manifests/messages.yaml", replacing: "header: Before you go", with: "header: Wait a moment")
        #expect(await harness.run(["apply", "--env", "sandbox"]).code == .success)
        #expect(harness.emulator.state(of: .sandbox).messages.count == 13)
        let items = try await inventory(harness)
        let target = try #require(items.first { $0["label"] as? String == "rollback_target" })
        let identifier = try #require(target["identifier"] as? String)
        #expect((target["name"] as? String)?.hasPrefix("before-you-go") == true, "\(target)")
        #expect(target["prune"] as? String == "kept: an approved version a revert would use (delete it with --prune-id)")
        let kept = await harness.run(["apply", "--env", "sandbox", "--prune"])
        #expect(kept.code == .success)
        #expect(!kept.stdout.contains("delete message"))
        #expect(harness.emulator.state(of: .sandbox).messages.count == 13)
        // Named explicitly, it goes.
        let named = await harness.run(["apply", "--env", "sandbox", "--prune-id", identifier])
        #expect(named.code == .success)
        #expect(named.stdout.contains("delete message"))
        #expect(harness.emulator.state(of: .sandbox).messages.count == 12)

        // A new identity namespace gives every piece of content a new identifier, so a prune that
        // keeps no rollback versions would delete half of what is there: refused without --prune-force.
        try harness.edit("manifests/app.yaml", replacing: "bundleId: com.example.stillpoint",
                         with: "bundleId: com.example.stillpoint\nidentityNamespace: 6ba7b810-9dad-11d1-80b4-00c04fd430c8")
        #expect(await harness.run(["apply", "--env", "sandbox"]).code == .success)
        #expect(await harness.run(["plan", "--env", "sandbox", "--prune"]).code == .success, "the old versions are rollback targets")
        let refused = await harness.run(["plan", "--env", "sandbox", "--prune", "--rollback-versions", "0"])
        #expect(refused.code == .failure)
        #expect(refused.stdout.contains("prune protection: this would delete 16 of 32"))
        // A saved plan whose deletions were refused never runs them.
        _ = await harness.run(["plan", "--env", "sandbox", "--prune", "--rollback-versions", "0", "--out", "refused.json"])
        #expect(await harness.run(["apply", "--env", "sandbox", "--plan", "refused.json"]).code == .failure)
        #expect(harness.emulator.state(of: .sandbox).messages.count == 24)
        #expect(await harness.run(["apply", "--env", "sandbox", "--prune", "--prune-force", "--rollback-versions", "0"]).code == .success)
        #expect(harness.emulator.state(of: .sandbox).messages.count == 12)
        #expect(harness.emulator.state(of: .sandbox).images.count == 4)
    }

    private func inventory(_ harness: CommandHarness) async throws -> [[String: Any]] {
        let run = await harness.run(["plan", "--env", "sandbox", "--format", "json"])
        let plan = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        return plan["inventory"] as? [[String: Any]] ?? []
    }
}

@Suite("retention-sync apply: options that cannot go together")
struct ApplyOptionTests {
    @Test("--prune with a saved plan is refused, since the saved plan decides what is deleted")
    func pruneWithSavedPlan() async throws {
        let harness = try CommandHarness()
        #expect(await harness.run(["plan", "--env", "sandbox", "--out", "plan.json"]).code == .success)
        let requests = harness.emulator.requestCount(in: .sandbox)
        let refused = await harness.run(["apply", "--env", "sandbox", "--plan", "plan.json", "--prune"])
        #expect(refused.code == .usage)
        #expect(refused.stderr.contains("the saved plan decides what is deleted"))
        #expect(harness.emulator.requestCount(in: .sandbox) == requests)
    }
}

@Suite("retention-sync plan against Apple: TLS settings")
struct TransportSettingsTests {
    @Test("an unreadable RETENTION_SYNC_CA_BUNDLE is an error that names the variable, before any request")
    func unreadableCABundle() async throws {
        let captured = CapturedConsole()
        let environment = [
            "RETENTION_SYNC_KEY_ID": "TESTKEY123",
            "RETENTION_SYNC_ISSUER_ID": "57246542-96fe-1a63-e053-0824d011072a",
            "RETENTION_SYNC_PRIVATE_KEY": CommandHarness.key.pkcs8PEM,
            "RETENTION_SYNC_CA_BUNDLE": "/nonexistent/corporate-ca.pem",
        ]
        let context = CommandContext(console: captured.console, environment: environment,
                                     currentDirectory: CommandHarness.repository)
        let code = await CLI.run(["plan", "--env", "sandbox"], context: context)
        #expect(code == .failure)
        #expect(captured.stderr.contains("RETENTION_SYNC_CA_BUNDLE: cannot read /nonexistent/corporate-ca.pem"))
        #expect(!captured.stderr.contains("BEGIN PRIVATE KEY"))
    }
}
