import CLIKit
import Emulator
import Foundation
@testable import RetentionSyncCommands
import RetentionMessagingModels
@testable import CommandTestSupport
import Testing

@Suite("plan, apply and status on the state store")
struct StateWiringTests {
    /// The state document the harness's sandbox apply writes at the App's snapshotPath.
    static let documentPath = "manifests/.retention-sync/sandbox-snapshot.json"

    func document(_ harness: CommandHarness, _ path: String = documentPath) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: harness.file(path))) as? [String: Any])
    }

    @Test("a first plan says the store is reachable and empty; apply records uploads, defaults and the realtime URL")
    func firstPublishRecordsEverything() async throws {
        let harness = try CommandHarness()
        let plan = await harness.run(["plan", "--env", "sandbox"])
        #expect(plan.code == .success, "\(plan.stderr)")
        #expect(plan.stderr.contains("First publish: the state store "))
        let applied = await harness.run(["apply", "--env", "sandbox", "--auto-approve"])
        #expect(applied.code == .success, "\(applied.stderr)")
        let stored = try document(harness)
        let content = try #require(stored["content"] as? [[String: Any]])
        let messages = content.filter { $0["kind"] as? String == "message" }
        #expect(!messages.isEmpty)
        #expect(messages.allSatisfy { ($0["upload_body"] as? String)?.contains("\"header\"") == true })
        #expect(content.filter { $0["kind"] as? String == "image" }.allSatisfy { ($0["image"] as? [String: Any])?["sha256"] != nil })
        #expect(content.allSatisfy { (($0["review_states"] as? [[String: Any]])?.last?["state"] as? String) == "APPROVED" })
        #expect((stored["defaults"] as? [Any])?.count == 6)
        #expect(stored["published_snapshot"] is [String: Any])
        let again = await harness.run(["plan", "--env", "sandbox"])
        #expect(!again.stderr.contains("First publish"))
    }

    @Test("an in-sync plan reads only the refresh window of recorded defaults; the rotation finds drift and apply fixes it")
    func rotationConvergesOnDrift() async throws {
        let harness = try CommandHarness()
        #expect(await harness.run(["apply", "--env", "sandbox", "--auto-approve"]).code == .success)
        // Someone changes one default directly, outside the manifests.
        var state = harness.emulator.state(of: .sandbox)
        let drifted = try #require(state.defaults.keys.sorted().last)
        let wanted = state.defaults[drifted]
        state.defaults[drifted] = nil
        harness.emulator.restore(state, in: .sandbox)

        var found = false
        for _ in 0..<6 {
            let plan = await harness.run(["plan", "--env", "sandbox", "--refresh-defaults", "1", "--format", "json"])
            let json = try #require(try JSONSerialization.jsonObject(with: Data(plan.stdout.utf8)) as? [String: Any])
            #expect(json["api_calls"] as? Int == 4, "two lists, one default, the realtime URL")
            let apply = await harness.run(["apply", "--env", "sandbox", "--refresh-defaults", "1", "--auto-approve"])
            #expect(apply.code == .success, "\(apply.stderr)")
            if (json["converged"] as? Bool) == false {
                found = true
                break
            }
        }
        #expect(found, "six pairs, one per run: the rotation reaches the drifted pair within six runs")
        #expect(harness.emulator.state(of: .sandbox).defaults[drifted] == wanted)
        let full = await harness.run(["plan", "--env", "sandbox", "--refresh-defaults", "all", "--detailed-exitcode"])
        #expect(full.code == .success, "\(full.stdout)")
    }

    @Test("a store that cannot be read stops plan, apply and status with an error naming it, and nothing is sent")
    func unreadableStoreStops() async throws {
        let harness = try CommandHarness()
        #expect(await harness.run(["apply", "--env", "sandbox", "--auto-approve"]).code == .success)
        let url = harness.file(Self.documentPath)
        let good = try Data(contentsOf: url)
        let before = harness.emulator.state(of: .sandbox)

        // A digest mismatch: the document edited by hand.
        let text = String(decoding: good, as: UTF8.self).replacingOccurrences(of: "\"APPROVED\"", with: "\"REJECTED\"")
        #expect(text != String(decoding: good, as: UTF8.self))
        try Data(text.utf8).write(to: url)
        for command in ["plan", "apply", "status"] {
            let run = await harness.run([command, "--env", "sandbox", "--auto-approve"].filter { command == "apply" || $0 != "--auto-approve" })
            #expect(run.code == .failure, "\(command)")
            #expect(run.stderr.contains("cannot read the state: state store \(url.path)"), "\(command): \(run.stderr)")
            #expect(run.stderr.contains("digest does not match") || run.stderr.contains("does not parse"), "\(command): \(run.stderr)")
            #expect(!run.stderr.contains("nothing stored yet"))
        }
        // A corrupt object.
        try Data("{\"format_version\": \"1.0\", ".utf8).write(to: url)
        let corrupt = await harness.run(["plan", "--env", "sandbox"])
        #expect(corrupt.code == .failure)
        #expect(corrupt.stderr.contains("the state document does not parse"))
        #expect(harness.emulator.state(of: .sandbox).defaults == before.defaults)
        #expect(try Data(contentsOf: url) == Data("{\"format_version\": \"1.0\", ".utf8), "nothing overwrote the damaged document")

        // An S3 store nobody answers on.
        let unreachable = await harness.run(["plan", "--env", "sandbox", "--state-store", "s3://team-state/retention"],
                                            environment: ["AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "not-a-secret",
                                                          "AWS_REGION": "us-east-1", "AWS_ENDPOINT_URL_S3": "http://127.0.0.1:9"])
        #expect(unreachable.code == .failure)
        #expect(unreachable.stderr.contains("state store s3://team-state/retention/sandbox.json"), "\(unreachable.stderr)")
        #expect(!unreachable.stderr.contains("not-a-secret"))
    }

    @Test("two checkouts sharing only the store: the second plans from what the first applied")
    func twoCheckoutsShareTheStore() async throws {
        let first = try CommandHarness()
        let shared = FileManager.default.temporaryDirectory.appendingPathComponent("shared-state-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: shared) }
        #expect(await first.run(["apply", "--env", "sandbox", "--auto-approve", "--state-store", shared.path]).code == .success)
        let stored = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: shared.appendingPathComponent("sandbox.json"))) as? [String: Any])
        #expect(stored["published_snapshot"] is [String: Any])

        // A second checkout, on the same (emulated) Apple, with the old --snapshot-store spelling.
        let second = try CommandHarness(sharing: first)
        let plan = await second.run(["plan", "--env", "sandbox", "--snapshot-store", shared.path, "--detailed-exitcode"])
        #expect(plan.code == .success, "in sync: \(plan.stdout)\(plan.stderr)")
        #expect(!plan.stderr.contains("First publish"))
        #expect(!FileManager.default.fileExists(atPath: second.file(Self.documentPath).path), "plan never writes")
    }

    @Test("an existing snapshot file is migrated into a newly declared stateStore on the first apply")
    func migratesSnapshotFile() async throws {
        let harness = try CommandHarness()
        #expect(await harness.run(["apply", "--env", "sandbox", "--auto-approve"]).code == .success)
        let digest = try #require((try document(harness)["published_snapshot"] as? [String: Any])?["digest"] as? String)
        try harness.edit("manifests/app.yaml", replacing: "    snapshotPath: .retention-sync/sandbox-snapshot.json",
                         with: "    snapshotPath: .retention-sync/sandbox-snapshot.json\n    stateStore: .retention-sync/state")
        let plan = await harness.run(["plan", "--env", "sandbox", "--detailed-exitcode"])
        #expect(plan.stderr.contains("Migrating: the runtime snapshot file"), "\(plan.stderr)")
        #expect(plan.code == .success, "the migrated snapshot is the published one: \(plan.stdout)")
        #expect(await harness.run(["apply", "--env", "sandbox", "--auto-approve"]).code == .success)
        let migrated = try document(harness, "manifests/.retention-sync/state/sandbox.json")
        #expect((migrated["published_snapshot"] as? [String: Any])?["digest"] as? String == digest)
        #expect(!(await harness.run(["plan", "--env", "sandbox"])).stderr.contains("Migrating"))
    }

    @Test("status shows how long items are PENDING, flags REJECTED ones, and --detailed-exitcode exits 3")
    func reviewAge() async throws {
        let harness = try CommandHarness()
        #expect(await harness.run(["apply", "--env", "production", "--auto-approve"]).code == .success)
        let status = await harness.run(["status", "--env", "production"])
        #expect(status.stdout.contains("PENDING for 0 days (since "), "\(status.stdout)")
        #expect(await harness.run(["status", "--env", "production", "--detailed-exitcode"]).code == .success)
        #expect(await harness.run(["status", "--env", "production", "--detailed-exitcode", "--pending-warn-days", "0"]).code == .success,
                "0 days pending is not longer than 0 days")

        let rejected = try #require(harness.emulator.state(of: .production).messages.keys.sorted().first)
        try harness.emulator.rejectMessage(rejected, in: .production)
        let flagged = await harness.run(["status", "--env", "production", "--format", "markdown", "--detailed-exitcode"])
        #expect(flagged.code == .needsAttention)
        #expect(flagged.stdout.contains("need"), "\(flagged.stdout)")
        #expect(flagged.stdout.contains("| ⚠ | `\(rejected)` | REJECTED |"))
        let json = await harness.run(["status", "--env", "production", "--format", "json"])
        let document = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(document["needs_attention"] as? Int == 1)
        #expect(document["pending_warn_days"] as? Int == 7)
    }

    @Test("a changed message shows what changes against the version in use, in text, Markdown and JSON")
    func textChanges() async throws {
        let harness = try CommandHarness()
        #expect(await harness.run(["apply", "--env", "sandbox", "--auto-approve"]).code == .success)
        let unchanged = await harness.run(["plan", "--env", "sandbox", "--format", "json"])
        let before = try #require(try JSONSerialization.jsonObject(with: Data(unchanged.stdout.utf8)) as? [String: Any])
        #expect(before["format_version"] as? String == "1.0", "no text changes, no new keys")
        try harness.edit("manifests/messages.yaml", replacing: "    header: Your calm is worth keeping",
                         with: "    header: Wait — your calm is worth keeping")
        let text = await harness.run(["plan", "--env", "sandbox"])
        #expect(text.stdout.contains("header: \"Your calm is worth keeping\" → \"Wait — your calm is worth keeping\""), "\(text.stdout)")
        let markdown = await harness.run(["plan", "--env", "sandbox", "--format", "markdown"])
        #expect(markdown.stdout.contains("```diff\n- header: Your calm is worth keeping\n+ header: Wait — your calm is worth keeping\n```"), "\(markdown.stdout)")
        let json = await harness.run(["plan", "--env", "sandbox", "--format", "json"])
        let plan = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(plan["format_version"] as? String == "1.1")
        let upload = try #require((plan["actions"] as? [[String: Any]])?.first { $0["text_changes"] != nil })
        #expect(upload["replaces"] is String)
        let change = try #require((upload["text_changes"] as? [[String: Any]])?.first)
        #expect(change["field"] as? String == "header")
        #expect(change["before"] as? String == "Your calm is worth keeping")
    }

    @Test("the plan lists what is in review and for how long, flagged past --pending-warn-days and when REJECTED")
    func planReviewAges() async throws {
        let harness = try CommandHarness()
        #expect(await harness.run(["apply", "--env", "production", "--auto-approve"]).code == .success)
        let text = await harness.run(["plan", "--env", "production"])
        #expect(text.stdout.contains("In review ("), "\(text.stdout)")
        #expect(text.stdout.contains("PENDING for 0 days (since "))
        #expect(!text.stdout.contains("⚠"))
        let rejected = try #require(harness.emulator.state(of: .production).messages.keys.sorted().first)
        try harness.emulator.rejectMessage(rejected, in: .production)
        let json = await harness.run(["plan", "--env", "production", "--format", "json"])
        let plan = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(plan["format_version"] as? String == "1.1")
        let ages = try #require(plan["review_ages"] as? [[String: Any]])
        #expect(ages.contains { $0["identifier"] as? String == rejected && $0["state"] as? String == "REJECTED" && $0["flagged"] as? Bool == true })
        #expect(ages.contains { $0["state"] as? String == "PENDING" && $0["flagged"] as? Bool == false && $0["days"] as? Int == 0 })
        let markdown = await harness.run(["plan", "--env", "production", "--format", "markdown"])
        #expect(markdown.stdout.contains("<summary>In review (\(ages.count), ⚠ 1 need attention)</summary>"), "\(markdown.stdout)")
    }

    @Test("--prune refuses without a state store to read, and says how to configure one")
    func pruneNeedsTheState() async throws {
        let harness = try CommandHarness()
        try harness.edit("manifests/app.yaml", replacing: "    snapshotPath: .retention-sync/sandbox-snapshot.json\n", with: "")
        let run = await harness.run(["plan", "--env", "sandbox", "--prune"])
        #expect(run.code == .failure)
        #expect(run.stderr.contains("pruning needs the state store to be read"), "\(run.stderr)")
        #expect(run.stderr.contains("--state-store"))
        #expect(harness.emulator.state(of: .sandbox).messages.isEmpty)
    }
}
