import CLIKit
import Foundation
@testable import RetentionSyncCommands
@testable import CommandTestSupport
import Testing

@Suite("retention-sync state show")
struct StateCommandTests {
    @Test("before the first apply the store is reachable and empty; afterwards the published snapshot shows, migrated")
    func showsStateBeforeAndAfterApply() async throws {
        let harness = try CommandHarness()
        let before = await harness.run(["state", "show", "--env", "sandbox"])
        #expect(before.code == .success, "\(before.stderr)")
        #expect(before.stdout.contains("reachable, nothing stored yet"))
        #expect(before.stdout.contains("The next apply is a first publish."))

        let applied = await harness.run(["apply", "--env", "sandbox"])
        #expect(applied.code == .success, "\(applied.stderr)")
        let after = await harness.run(["state", "show", "--env", "sandbox"])
        #expect(after.code == .success, "\(after.stderr)")
        #expect(after.stdout.contains("State of com.example.stillpoint sandbox in "))
        #expect(!after.stdout.contains("migrated from"), "apply wrote a state document at snapshotPath")
        #expect(after.stdout.contains("published snapshot: "))
        #expect(after.stdout.contains("(APPROVED "), "apply recorded the uploads with their review states")

        let json = await harness.run(["state", "show", "--env", "sandbox", "--format", "json"])
        let shown = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let document = try #require(shown["document"] as? [String: Any])
        #expect(document["format_version"] as? String == "1.1")
        #expect(document["environment"] as? String == "sandbox")
        #expect((shown["store"] as? String)?.hasSuffix("manifests/.retention-sync/sandbox-snapshot.json") == true)
    }

    @Test("pointing one environment at another's state file is refused, naming the file")
    func anotherEnvironmentsFileIsRefused() async throws {
        let harness = try CommandHarness()
        let applied = await harness.run(["apply", "--env", "sandbox"])
        #expect(applied.code == .success, "\(applied.stderr)")
        let shown = await harness.run(["state", "show", "--env", "production",
                                       "--state-store", "manifests/.retention-sync/sandbox-snapshot.json"])
        #expect(shown.code == .failure)
        #expect(shown.stderr.contains("sandbox-snapshot.json: the state document is not this environment's"))
    }

    @Test("an App that names a stateStore is read there, starting from its old snapshot file")
    func declaredStateStore() async throws {
        let harness = try CommandHarness()
        let applied = await harness.run(["apply", "--env", "sandbox"])
        #expect(applied.code == .success, "\(applied.stderr)")
        try harness.edit("manifests/app.yaml", replacing: "    snapshotPath: .retention-sync/sandbox-snapshot.json",
                         with: "    snapshotPath: .retention-sync/sandbox-snapshot.json\n    stateStore: .retention-sync/state")
        let shown = await harness.run(["state", "show", "--env", "sandbox", "--format", "json"])
        #expect(shown.code == .success, "\(shown.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [String: Any])
        #expect((json["store"] as? String)?.hasSuffix("manifests/.retention-sync/state/sandbox.json") == true)
        #expect((json["migrated_from"] as? String)?.hasSuffix("manifests/.retention-sync/sandbox-snapshot.json") == true)
        #expect(json["version"] is NSNull)
    }

    @Test("a missing action or an unknown location scheme is a usage error")
    func usageErrors() async throws {
        let harness = try CommandHarness()
        #expect(await harness.run(["state", "--env", "sandbox"]).code == .usage)
        let scheme = await harness.run(["state", "show", "--env", "sandbox", "--state-store", "gs://bucket/x"])
        #expect(scheme.code == .usage)
        #expect(scheme.stderr.contains("uses 'gs://'"))
    }
}
