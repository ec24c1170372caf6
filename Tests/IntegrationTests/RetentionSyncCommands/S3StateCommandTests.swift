import Foundation
@testable import RetentionSyncCommands
@testable import CommandTestSupport
import Testing
import TestSupport

/// The real `retention-sync` binary against a loopback `retention-sync emulator` process and moto's
/// S3-compatible server: separate processes and separate checkouts that share only the store.
@Suite("plan and apply on an S3-compatible store, as separate processes")
struct S3StateCommandTests {
    static let credentials = [
        "RETENTION_SYNC_KEY_ID": "TEST000001", "RETENTION_SYNC_ISSUER_ID": "57246542-96fe-1a63-e053-0824d011072a",
        "RETENTION_SYNC_PRIVATE_KEY_FILE": CommandHarness.repository.appendingPathComponent("fixtures/crypto/AuthKey_TEST000001.p8").path,
    ]

    @Test("two checkouts share only an S3 store: a missing object is a first publish, racing applies lose nothing, wrong credentials stop plan")
    func twoCheckoutsOnS3() async throws {
        let server = try await MotoServer.start()
        defer { server.stop() }
        let first = try CommandHarness()
        let second = try CommandHarness()
        let emulator = try await EmulatorProcess.start(in: first.root, environment: Self.credentials, name: "emulator")
        let store = "s3://\(server.bucket)/retention-sync"
        let writer = Self.credentials.merging(server.environment(server.writer)) { _, new in new }

        func run(_ arguments: [String], in harness: CommandHarness, environment: [String: String] = writer,
                 name: String) throws -> ChildProcess {
            try ChildProcess(arguments + ["--env", "sandbox", "--endpoint", emulator.endpoint, "--state-store", store],
                             in: harness.root, environment: environment, name: name)
        }

        // Nothing stored yet: reachable and empty is a first publish, said prominently.
        let plan = try run(["plan"], in: first, name: "plan-first")
        #expect(await plan.finish(within: 60) == 0, "\(plan.errors)")
        #expect(plan.errors.contains("First publish: the state store s3://\(server.bucket)/retention-sync/sandbox.json"), "\(plan.errors)")

        // Two applies from two checkouts at once: each either finishes or stops on the conflict.
        let racing = try [run(["apply", "--auto-approve"], in: first, name: "apply-1"),
                          run(["apply", "--auto-approve"], in: second, name: "apply-2")]
        var statuses: [Int32?] = []
        for child in racing { statuses.append(await child.finish(within: 120)) }
        #expect(statuses.contains(0), "\(racing.map(\.errors))")
        for (child, status) in zip(racing, statuses) where status != 0 {
            #expect(child.errors.contains("state store s3://"), "a lost race names the store: \(child.errors)")
        }
        // Whatever the race left, one more apply from the second checkout converges, and a plan from
        // the first checkout then sees nothing to do: the store carried everything between them.
        let again = try run(["apply", "--auto-approve"], in: second, name: "apply-3")
        #expect(await again.finish(within: 120) == 0, "\(again.errors)")
        let check = try run(["plan", "--detailed-exitcode"], in: first, name: "plan-check")
        #expect(await check.finish(within: 60) == 0, "in sync: \(String(decoding: check.output, as: UTF8.self)) \(check.errors)")
        #expect(!check.errors.contains("First publish"))
        let show = try ChildProcess(["state", "show", "--env", "sandbox", "--state-store", store, "--format", "json"],
                                    in: second.root, environment: writer, name: "show")
        #expect(await show.finish(within: 60) == 0, "\(show.errors)")
        let shown = try #require(try JSONSerialization.jsonObject(with: show.output) as? [String: Any])
        let document = try #require(shown["document"] as? [String: Any])
        #expect(document["published_snapshot"] is [String: Any])
        #expect((document["content"] as? [Any])?.isEmpty == false)

        // Wrong credentials: an error naming the store, never "nothing published", and no secret printed.
        var wrong = writer
        wrong["AWS_SECRET_ACCESS_KEY"] = "not-the-secret-value"
        let refused = try run(["plan"], in: first, environment: wrong, name: "plan-wrong")
        #expect(await refused.finish(within: 60) == 1)
        #expect(refused.errors.contains("cannot read the state: state store s3://"), "\(refused.errors)")
        #expect(!refused.errors.contains("not-the-secret-value") && !refused.errors.contains("First publish"))

        #expect(await emulator.stop() == 0)
    }
}
