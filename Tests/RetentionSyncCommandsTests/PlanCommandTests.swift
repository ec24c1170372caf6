import Basics
import CLIKit
import Crypto
import Emulator
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import HTTPCore
import RetentionMessaging
import RetentionMessagingModels
import Operations
@testable import RetentionSyncCommands
import Runtime
@testable import CommandTestSupport
import Testing
import TestSupport
@testable import Views

@Suite("retention-sync plan")
struct PlanCommandTests {
    @Test("plan prints the summary line first and how many API calls it made")
    func summaryFirst() async throws {
        let harness = try CommandHarness()
        let run = await harness.run(["plan", "--env", "sandbox"])
        #expect(run.code == .success)
        let lines = run.stdout.components(separatedBy: "\n")
        // Sandbox approves this apply's uploads at once, so 6 actions run after them in the same apply: not blocked.
        #expect(lines[0] == "Plan (sandbox): 16 to upload, 2 to set and 6 more after these uploads, 0 blocked, 0 to delete")
        // Two list calls, one GET /default per declared pair (2 products × 3 locales), the realtime URL.
        #expect(lines[1] == "Read sandbox with 9 API calls.")
        #expect(harness.emulator.requestCount(in: .sandbox) == 9)
    }

    @Test("--detailed-exitcode: 2 while ready actions are pending, 0 in sync and 0 while only waiting for review")
    func detailedExitCode() async throws {
        let harness = try CommandHarness()
        #expect(await harness.run(["plan", "--env", "production", "--detailed-exitcode"]).code == .changesPending)
        #expect(await harness.run(["apply", "--env", "production"]).code == .success)
        let waiting = await harness.run(["plan", "--env", "production", "--detailed-exitcode"])
        #expect(waiting.code == .success)
        #expect(waiting.stdout.hasPrefix("Plan (production): 0 to upload, 0 to set, 7 blocked, 0 to delete"))
        harness.emulator.approveAllPending(in: .production)
        #expect(await harness.run(["plan", "--env", "production", "--detailed-exitcode"]).code == .changesPending)
        #expect(await harness.run(["apply", "--env", "production"]).code == .success)
        let synced = await harness.run(["plan", "--env", "production", "--detailed-exitcode"])
        #expect(synced.code == .success)
        #expect(synced.stdout.contains("No changes."))
    }

    @Test("App Review rejects a message the main branch already uses: plan and apply report it for attention (exit 3), not as an error")
    func rejectedAfterUseNeedsAttention() async throws {
        let harness = try CommandHarness()
        #expect(await harness.run(["apply", "--env", "production"]).code == .success)
        let id = try await identifier(harness, named: "before-you-go", locale: "de-DE")
        try harness.emulator.rejectMessage(id, in: .production)
        harness.emulator.approveAllPending(in: .production)
        // Ready actions are pending besides the rejection: 2 says there is something to apply.
        let pending = await harness.run(["plan", "--env", "production", "--detailed-exitcode"])
        #expect(pending.code == .changesPending)
        #expect(pending.stdout.contains("Needs attention (1), not caused by this change"))
        #expect(pending.stdout.contains("message 'before-you-go' (de-DE) version"))
        #expect(pending.stdout.contains("REJECTED by App Review after the main branch began using it"))
        #expect(!pending.stdout.contains("Problems ("))
        #expect(pending.stderr.contains("attention: 1 remote condition needs a person"))
        #expect(!pending.stderr.contains("error:"))
        let markdown = await harness.run(["plan", "--env", "production", "--format", "markdown"])
        #expect(markdown.stdout.contains("> [!WARNING]\n> **Needs attention**"))
        #expect(!markdown.stdout.contains("[!CAUTION]"))
        // apply does everything it can, then exits 3 with an attention line.
        let apply = await harness.run(["apply", "--env", "production"])
        #expect(apply.code == .needsAttention)
        #expect(apply.stderr.contains("attention: "))
        // Nothing is left to do but write a new version: plan says so with 3, and so does apply.
        let waiting = await harness.run(["plan", "--env", "production", "--detailed-exitcode"])
        #expect(waiting.code == .needsAttention)
        #expect(waiting.stdout.contains("nothing this run can do: waiting for a person"))
        let idle = await harness.run(["apply", "--env", "production"])
        #expect(idle.code == .needsAttention)
        #expect(idle.stderr.hasPrefix("attention: ") || idle.stderr.contains("\nattention: "))
        // Without --detailed-exitcode a plan that only needs attention succeeds, and still says why.
        let plain = await harness.run(["plan", "--env", "production"])
        #expect(plain.code == .success)
        #expect(plain.stderr.contains("attention: "))
    }

    @Test("a pull request that changes a message back to text App Review rejected fails its preview (exit 1, with an error line)")
    func revertToRejectedTextIsAnError() async throws {
        let harness = try CommandHarness()
        #expect(await harness.run(["apply", "--env", "production"]).code == .success)
        let id = try await identifier(harness, named: "before-you-go", locale: "de-DE")
        try harness.emulator.rejectMessage(id, in: .production)
        harness.emulator.approveAllPending(in: .production)
        // The team fixes the German text on main; the fix goes through review.
        try harness.edit("manifests/messages.yaml", replacing: "header: Bevor du gehst", with: "header: Bevor du jetzt gehst")
        #expect(await harness.run(["apply", "--env", "production"]).code == .success)
        // A later pull request brings the rejected text back.
        try harness.edit("manifests/messages.yaml", replacing: "header: Bevor du jetzt gehst", with: "header: Bevor du gehst")
        let run = await harness.run(["plan", "--env", "production", "--detailed-exitcode"])
        #expect(run.code == .failure)
        #expect(run.stdout.contains("Problems (1)"))
        #expect(run.stdout.contains("message 'before-you-go' (de-DE) version"))
        #expect(run.stdout.contains("was already REJECTED by App Review, and these manifests take it up"))
        #expect(run.stderr.contains("error: the plan has"))
        #expect(run.stderr.contains("these manifests must fix"))
    }

    @Test("a pull request whose own submission App Review rejects fails its preview; main, which never used it, is not asked to act")
    func pullRequestsRejectedSubmissionIsAnError() async throws {
        let harness = try CommandHarness()
        #expect(await harness.run(["apply", "--env", "production"]).code == .success)
        harness.emulator.approveAllPending(in: .production)
        #expect(await harness.run(["apply", "--env", "production"]).code == .success)
        try harness.edit("manifests/messages.yaml", replacing: "header: Bevor du gehst", with: "header: Warte kurz")
        #expect(await harness.run(["apply", "--env", "production", "--only-uploads", "--submitted-by", "pr-7"]).code == .success)
        let id = try await identifier(harness, named: "before-you-go", locale: "de-DE")
        try harness.emulator.rejectMessage(id, in: .production)
        let preview = await harness.run(["plan", "--env", "production", "--detailed-exitcode"])
        #expect(preview.code == .failure)
        #expect(preview.stdout.contains("was already REJECTED by App Review, and these manifests take it up"))
        #expect(preview.stderr.contains("error: "))
        // Main's manifests do not derive the pull request's text: main's plan is untouched by it.
        try harness.edit("manifests/messages.yaml", replacing: "header: Warte kurz", with: "header: Bevor du gehst")
        let main = await harness.run(["plan", "--env", "production", "--detailed-exitcode"])
        #expect(main.code == .success)
        #expect(!main.stderr.contains("attention:") && !main.stderr.contains("error:"))
    }

    /// The production identifier of a message localization, as `retention-sync id` prints it.
    func identifier(_ harness: CommandHarness, named name: String, locale: String) async throws -> String {
        let run = await harness.run(["id", "--env", "production", "--format", "json"])
        let listing = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
        let environments = listing?["environments"] as? [[String: Any]] ?? []
        let messages = environments.first?["messages"] as? [[String: Any]] ?? []
        let message = messages.first { $0["name"] as? String == name && $0["locale"] as? String == locale }
        return try #require(message?["identifier"] as? String)
    }

    @Test("the JSON plan is versioned and says separately whether the environment converged and how healthy it is")
    func jsonPlan() async throws {
        let harness = try CommandHarness()
        let run = await harness.run(["plan", "--env", "sandbox", "--format", "json"])
        let plan = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        #expect(plan["format_version"] as? String == "1.0")
        #expect(plan["converged"] as? Bool == false)
        #expect(plan["health"] as? String == "healthy")
        #expect(plan["api_calls"] as? Int == 9)
        let actions = try #require(plan["actions"] as? [[String: Any]])
        #expect(actions.allSatisfy { $0["id"] != nil && $0["reason"] != nil && $0["state"] != nil })
    }

    @Test("--out saves the plan with fingerprints and no secrets; --snapshot-out writes the snapshot apply would publish")
    func savedPlanAndSnapshot() async throws {
        let harness = try CommandHarness()
        let run = await harness.run(["plan", "--env", "sandbox", "--out", "plan.json", "--snapshot-out", "preview.json"])
        #expect(run.code == .success)
        let saved = try String(contentsOf: harness.file("plan.json"), encoding: .utf8)
        #expect(saved.contains("\"fingerprints\""))
        for secret in ["PRIVATE KEY", "Bearer", CommandHarness.key.pkcs8PEM] { #expect(!saved.contains(secret)) }
        let snapshot = try RuntimeSnapshot.load(contentsOf: harness.file("preview.json"))
        #expect(snapshot.environment == .sandbox)
        #expect(snapshot.rules.map(\.id) == ["cancel-flow/everyone-else"])
    }

    @Test("the Markdown plan is split into several comments below the limit")
    func markdownSplits() async throws {
        let harness = try CommandHarness()
        let run = await harness.run(["plan", "--env", "sandbox", "--format", "markdown", "--markdown-max-chars", "2000"])
        let comments = run.stdout.components(separatedBy: PlanView.commentSeparator)
        #expect(comments.count > 1)
        #expect(comments[0].hasPrefix("### retention-sync plan · sandbox"))
        #expect(comments[0].contains("**Plan (sandbox): 16 to upload"))
    }

    @Test("without credentials plan stops with a clear error before any request")
    func missingCredentials() async throws {
        let harness = try CommandHarness()
        let captured = CapturedConsole()
        let code = await CLI.run(["plan", "--env", "sandbox"],
                                 context: CommandContext(console: captured.console, environment: [:], currentDirectory: harness.root))
        #expect(code == .failure)
        #expect(captured.stderr.contains("RETENTION_SYNC_KEY_ID"))
        #expect(captured.stderr.contains("nothing was sent"))
    }

    @Test("plan without --env is a usage error")
    func envIsRequired() async throws {
        let harness = try CommandHarness()
        let run = await harness.run(["plan"])
        #expect(run.code == .usage)
        #expect(run.stderr.contains("--env is required"))
    }

    @Test("a Markdown comment limit too small for one section is a usage error; a small one is honoured")
    func markdownLimit() async throws {
        let harness = try CommandHarness()
        let tiny = await harness.run(["plan", "--env", "production", "--format", "markdown", "--markdown-max-chars", "100"])
        #expect(tiny.code == .usage)
        #expect(tiny.stderr.contains("--markdown-max-chars must be at least 500"))
        let small = await harness.run(["plan", "--env", "production", "--format", "markdown", "--markdown-max-chars", "1000"])
        #expect(small.code == .success)
        let comments = small.stdout.components(separatedBy: PlanView.commentSeparator)
        #expect(comments.count > 1 && comments.allSatisfy { $0.utf16.count <= 1000 })
    }

    @Test("two plan processes print the same JSON bytes, also after the emulator restarts from its state file")
    func byteIdenticalAcrossProcesses() async throws {
        let harness = try CommandHarness()
        let environment = [
            "RETENTION_SYNC_KEY_ID": "TEST000001", "RETENTION_SYNC_ISSUER_ID": "57246542-96fe-1a63-e053-0824d011072a",
            "RETENTION_SYNC_PRIVATE_KEY_FILE": CommandHarness.repository.appendingPathComponent("fixtures/crypto/AuthKey_TEST000001.p8").path,
        ]
        func run(_ arguments: [String], endpoint: String, name: String) async throws -> ChildProcess {
            let child = try ChildProcess(arguments + ["--env", "sandbox", "--endpoint", endpoint],
                                         in: harness.root, environment: environment, name: name)
            let status = await child.finish(within: 60)
            #expect(status == 0, "\(name): \(child.errors)")
            return child
        }

        // A remote with content, then an edit: the plan uploads, waits, republishes and lists an older version.
        let first = try await EmulatorProcess.start(in: harness.root, environment: environment, name: "emulator-1")
        _ = try await run(["apply"], endpoint: first.endpoint, name: "apply")
        try harness.edit("manifests/messages.yaml", replacing: "header: Before you go", with: "header: Wait a moment")
        let before = try await run(["plan", "--format", "json"], endpoint: first.endpoint, name: "plan-1")
        #expect(await first.stop() == 0)

        let second = try await EmulatorProcess.start(in: harness.root, environment: environment, name: "emulator-2")
        let after = try await run(["plan", "--format", "json"], endpoint: second.endpoint, name: "plan-2")
        #expect(await second.stop() == 0)

        let plan = try #require(try JSONSerialization.jsonObject(with: before.output) as? [String: Any])
        #expect((plan["actions"] as? [Any])?.isEmpty == false)
        #expect(after.output == before.output)
        let text = String(decoding: before.output, as: UTF8.self)
        #expect(!text.contains(harness.root.path) && !text.contains("127.0.0.1"))
    }
}
