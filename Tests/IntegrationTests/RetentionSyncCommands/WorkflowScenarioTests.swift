import Foundation
import HTTPClient
import HTTPCore
@testable import CommandTestSupport
import Testing
import TestSupport

/// The three team workflows played the way CI runners play them: every job is a fresh `git clone`
/// and a fresh `retention-sync` process, and jobs share nothing but the state store (moto's S3 on
/// loopback) and Apple (a loopback `retention-sync emulator` in production, where App Review is
/// an admin call).
@Suite("The team workflows, job by job on fresh runners", .serialized)
struct WorkflowScenarioTests {
    static let credentials = [
        "RETENTION_SYNC_KEY_ID": "TEST000001", "RETENTION_SYNC_ISSUER_ID": "57246542-96fe-1a63-e053-0824d011072a",
        "RETENTION_SYNC_PRIVATE_KEY_FILE": CommandHarness.repository.appendingPathComponent("fixtures/crypto/AuthKey_TEST000001.p8").path,
    ]

    /// A repository with the example app whose production state lives in the S3 store.
    struct Origin {
        let root: URL
        let repository: URL

        init(bucket: String) throws {
            root = FileManager.default.temporaryDirectory.appendingPathComponent("workflows-\(UUID().uuidString)")
            repository = root.appendingPathComponent("origin")
            try FileManager.default.createDirectory(at: repository, withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: CommandHarness.repository.appendingPathComponent("manifests"),
                                             to: repository.appendingPathComponent("manifests"))
            try? FileManager.default.removeItem(at: repository.appendingPathComponent("manifests/.retention-sync"))
            let app = repository.appendingPathComponent("manifests/app.yaml")
            var text = try String(contentsOf: app, encoding: .utf8)
            // Production keeps its state in S3; its realtime URL is left to the going-live path.
            text = text.replacingOccurrences(of: """
                  production:
                    realtimeURL: https://retention.stillpoint.example/apple/production
                    snapshotPath: .retention-sync/production-snapshot.json
                """, with: """
                  production:
                    stateStore: s3://\(bucket)/stillpoint/production
                """)
            try text.write(to: app, atomically: true, encoding: .utf8)
        }

        /// Runs git in the origin (or another folder) and returns its output; fails the test on an error.
        @discardableResult
        func git(_ arguments: [String], in folder: URL? = nil) async throws -> String {
            let directory = folder ?? repository
            let (status, output) = try await onOwnThread { () throws -> (Int32, String) in
                let process = Process()
                process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
                process.arguments = ["git", "-c", "user.name=Test", "-c", "user.email=test@example.com",
                                     "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"] + arguments
                process.currentDirectoryURL = directory
                let pipe = Pipe()
                process.standardOutput = pipe
                process.standardError = pipe
                try process.run()
                let data = pipe.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                return (process.terminationStatus, String(decoding: data, as: UTF8.self))
            }
            try #require(status == 0, "git \(arguments.joined(separator: " ")): \(output)")
            return output
        }

        /// A fresh runner: a new clone of `branch`, nothing else.
        func checkout(_ branch: String, job: String) async throws -> URL {
            let folder = root.appendingPathComponent("runner-\(job)")
            try await git(["clone", "--quiet", "--branch", branch, repository.path, folder.path], in: root)
            return folder
        }
    }

    @Test("PR plan → merge apply → App Review approves → scheduled reconcile publishes → revert PR shows a rollback with zero uploads → merge apply → in sync")
    func wholeLife() async throws {
        let server = try await MotoServer.start()
        defer { server.stop() }
        let origin = try Origin(bucket: server.bucket)
        defer { try? FileManager.default.removeItem(at: origin.root) }
        try await origin.git(["init", "--quiet"])
        try await origin.git(["add", "-A"])
        try await origin.git(["commit", "--quiet", "-m", "The retention messages"])

        let emulator = try await EmulatorProcess.start(in: origin.root, environment: Self.credentials, name: "emulator",
                                                       arguments: ["--env", "production", "--review", "manual"])
        let environment = Self.credentials.merging(server.environment(server.writer)) { _, new in new }
        let admin = CurlHTTPClient(configuration: .init(environment: [:]))

        /// One job: a fresh clone, one command, its exit status and output.
        func job(_ name: String, on branch: String, _ arguments: [String]) async throws -> (status: Int32?, output: String, errors: String) {
            let folder = try await origin.checkout(branch, job: name)
            let apple = arguments.first == "state" ? [] : ["--endpoint", emulator.endpoint]
            let child = try ChildProcess(arguments + ["--env", "production"] + apple,
                                         in: folder, environment: environment, name: name)
            let status = await child.finish(within: 120)
            return (status, String(decoding: child.output, as: UTF8.self), child.errors)
        }
        func appReviewApprovesEverything() async throws {
            let response = try await admin.send(HTTPRequest(method: "POST", url: URL(string: "\(emulator.endpoint)/emulator/approve-all")!))
            #expect(response.status == 200)
        }
        /// The digest of the snapshot published in the store, as a server would read it.
        func publishedDigest(_ name: String) async throws -> String? {
            let shown = try await job(name, on: "main", ["state", "show", "--format", "json"])
            try #require(shown.status == 0, "\(shown.errors)")
            let state = try #require(try JSONSerialization.jsonObject(with: Data(shown.output.utf8)) as? [String: Any])
            let document = state["document"] as? [String: Any]
            return (document?["published_snapshot"] as? [String: Any])?["digest"] as? String
        }
        func uploads(inPlanJSON text: String) throws -> Int {
            let plan = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
            let actions = plan["actions"] as? [[String: Any]] ?? []
            return actions.filter { ($0["kind"] as? String)?.hasPrefix("upload_") == true }.count
        }

        // The first merge: everything is uploaded and waits for App Review; nothing is published.
        let firstApply = try await job("merge-apply-1", on: "main", ["apply", "--auto-approve"])
        #expect(firstApply.status == 0, "\(firstApply.errors)")
        try await appReviewApprovesEverything()
        let reconcile = try await job("reconcile-1", on: "main", ["apply", "--auto-approve"])
        #expect(reconcile.status == 0, "\(reconcile.errors)")
        let settled = try await job("plan-settled", on: "main", ["plan", "--detailed-exitcode"])
        #expect(settled.status == 0, "in sync after the reconcile: \(settled.output) \(settled.errors)")
        let firstSnapshot = try #require(try await publishedDigest("state-1"), "the reconcile published a snapshot")

        // A pull request edits a header: its preview shows one new version to upload and the text change.
        try await origin.git(["switch", "--quiet", "-c", "calmer-header"])
        let messages = origin.repository.appendingPathComponent("manifests/messages.yaml")
        let text = try String(contentsOf: messages, encoding: .utf8)
        try text.replacingOccurrences(of: "header: Before you go", with: "header: Wait — before you go")
            .write(to: messages, atomically: true, encoding: .utf8)
        try await origin.git(["commit", "--quiet", "-am", "A calmer header"])
        // The preview job also saves the plan it showed (the workflow keeps it as an artifact).
        let reviewed = origin.root.appendingPathComponent("reviewed-calmer-header.json").path
        let preview = try await job("pr-plan", on: "calmer-header", ["plan", "--format", "markdown", "--detailed-exitcode", "--out", reviewed])
        #expect(preview.status == 2, "\(preview.errors)")
        #expect(preview.output.contains("Wait — before you go"), "the preview shows the new text: \(preview.output)")

        // Merged: the merge job applies exactly the plan the pull request showed; the new version is
        // uploaded and waits, the published one keeps serving meanwhile.
        try await origin.git(["switch", "--quiet", "main"])
        try await origin.git(["merge", "--quiet", "--no-ff", "-m", "Merge calmer-header", "calmer-header"])
        let mergeApply = try await job("merge-apply-2", on: "main", ["apply", "--auto-approve", "--plan", reviewed, "--replan-if-stale"])
        #expect(mergeApply.status == 0, "\(mergeApply.errors)")
        #expect(mergeApply.output.contains("Applying the saved plan \(reviewed)."), "\(mergeApply.output)")
        let waiting = try await job("plan-waiting", on: "main", ["plan", "--detailed-exitcode"])
        #expect(waiting.status == 0, "only waiting for review: \(waiting.output)")
        try await appReviewApprovesEverything()
        let publish = try await job("reconcile-2", on: "main", ["apply", "--auto-approve"])
        #expect(publish.status == 0, "\(publish.errors)")
        let editedSnapshot = try await publishedDigest("state-2")
        #expect(editedSnapshot != nil && editedSnapshot != firstSnapshot, "the approved edit is published")

        // Rollback by revert: the preview of the revert uploads nothing, the old content is approved.
        let merged = try await origin.git(["rev-parse", "HEAD^2"]).trimmingCharacters(in: .whitespacesAndNewlines)
        try await origin.git(["switch", "--quiet", "-c", "rollback"])
        try await origin.git(["revert", "--no-edit", merged])
        let rollbackPreview = try await job("rollback-plan", on: "rollback", ["plan", "--format", "json", "--detailed-exitcode"])
        #expect(rollbackPreview.status == 2, "the rollback has changes to apply: \(rollbackPreview.errors)")
        #expect(try uploads(inPlanJSON: rollbackPreview.output) == 0, "a rollback uploads nothing")

        try await origin.git(["switch", "--quiet", "main"])
        try await origin.git(["merge", "--quiet", "--ff-only", "rollback"])
        // A reviewed plan that no longer holds (the calmer-header plan, long applied, against the reverted
        // manifests): the merge job says why, plans again and applies what is true now.
        let rollbackApply = try await job("merge-apply-3", on: "main", ["apply", "--auto-approve", "--plan", reviewed, "--replan-if-stale"])
        #expect(rollbackApply.status == 0, "\(rollbackApply.errors)")
        #expect(rollbackApply.output.contains("Re-planned: the saved plan \(reviewed) no longer holds ("), "\(rollbackApply.output)")
        let strict = try await job("merge-apply-strict", on: "main", ["apply", "--auto-approve", "--plan", reviewed])
        #expect(strict.status == 1 && strict.errors.contains(reviewed), "without --replan-if-stale a stale plan is refused: \(strict.errors)")
        #expect(try await publishedDigest("state-3") == firstSnapshot, "the rollback publishes the first snapshot again")
        let final = try await job("plan-final", on: "main", ["plan", "--detailed-exitcode"])
        #expect(final.status == 0, "in sync after the rollback: \(final.output) \(final.errors)")
        let status = try await job("status-final", on: "main", ["status", "--detailed-exitcode"])
        #expect(status.status == 0, "nothing needs attention: \(status.output)")

        #expect(await emulator.stop() == 0)
    }
}
