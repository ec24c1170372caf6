import CLIKit
import Foundation
import RetentionSyncCommands
@testable import CommandTestSupport
import Testing
import TestSupport

@Suite("retention-sync state history")
struct StateHistoryCommandTests {
    @Test("every apply that writes the state is listed in history, and state show --version prints that version")
    func historyListsEveryWrite() async throws {
        let harness = try CommandHarness()
        #expect(await harness.run(["apply", "--env", "sandbox"]).code == .success)
        try harness.edit("manifests/messages.yaml", replacing: "header: Before you go", with: "header: Wait a moment")
        #expect(await harness.run(["apply", "--env", "sandbox"]).code == .success)

        let json = await harness.run(["state", "history", "--env", "sandbox", "--format", "json"])
        #expect(json.code == .success, "\(json.stderr)")
        let history = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let versions = try #require(history["versions"] as? [[String: Any]])
        #expect(versions.count >= 2, "\(json.stdout)")
        #expect(versions.last?["current"] as? Bool == true)
        let numbers = versions.compactMap { $0["number"] as? Int }
        #expect(numbers == numbers.sorted() && Set(numbers).count == numbers.count)

        let first = try #require(numbers.first)
        let shown = await harness.run(["state", "show", "--env", "sandbox", "--version", String(first), "--format", "json"])
        #expect(shown.code == .success, "\(shown.stderr)")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [String: Any])
        #expect((document["document"] as? [String: Any])?["digest"] as? String == versions.first?["digest"] as? String)

        let text = await harness.run(["state", "history", "--env", "sandbox"])
        #expect(text.stdout.contains("(current)"))
        // One version per line pair, real line breaks (never an escaped "\u{A}").
        #expect(!text.stdout.contains("\\u{A}"), "\(text.stdout)")
        let lines = text.stdout.split(separator: "\n")
        #expect(lines.first?.hasPrefix("History of ") == true)
        #expect(lines.count == 1 + 2 * versions.count, "\(text.stdout)")
        #expect(lines.dropFirst().enumerated().allSatisfy { index, line in index % 2 == 0 ? line.hasPrefix("  #") : line.hasPrefix("         by ") })
        let missing = await harness.run(["state", "show", "--env", "sandbox", "--version", "999"])
        #expect(missing.code == .failure)
        #expect(missing.stderr.contains("keeps no version 999"))
    }

    @Test("state migrate carries the history: file store → S3 → another file store, the same versions each time")
    func migrateCarriesHistory() async throws {
        let server = try await MotoServer.start()
        defer { server.stop() }
        let harness = try CommandHarness()
        #expect(await harness.run(["apply", "--env", "sandbox"]).code == .success)
        try harness.edit("manifests/messages.yaml", replacing: "header: Before you go", with: "header: Wait a moment")
        #expect(await harness.run(["apply", "--env", "sandbox"]).code == .success)
        try harness.edit("manifests/messages.yaml", replacing: "header: Wait a moment", with: "header: Hold on")
        #expect(await harness.run(["apply", "--env", "sandbox"]).code == .success)
        let s3 = server.environment(server.writer)

        func history(_ store: String) async throws -> [[String: String]] {
            let run = await harness.run(["state", "history", "--env", "sandbox", "--state-store", store, "--format", "json"], environment: s3)
            #expect(run.code == .success, "\(run.stderr)")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
            return try #require(json["versions"] as? [[String: Any]]).map { version in
                ["number": "\(version["number"] ?? "")", "digest": version["digest"] as? String ?? "", "current": "\(version["current"] ?? "")"]
            }
        }
        let file = harness.file("manifests/.retention-sync/sandbox-snapshot.json").path
        let original = try await history(file)
        #expect(original.count >= 3, "\(original)")

        let bucket = "s3://\(server.bucket)/moved"
        let toS3 = await harness.run(["state", "migrate", "--env", "sandbox", "--from", file, "--state-store", bucket], environment: s3)
        #expect(toS3.code == .success, "\(toS3.stderr)")
        #expect(toS3.stdout.contains("with its history: \(original.count - 1) earlier versions"), "\(toS3.stdout)")
        #expect(try await history(bucket) == original)

        let back = harness.file("elsewhere/sandbox.json").path
        let toFile = await harness.run(["state", "migrate", "--env", "sandbox", "--from", bucket, "--state-store", back], environment: s3)
        #expect(toFile.code == .success, "\(toFile.stderr)")
        #expect(try await history(back) == original)
        #expect(await harness.run(["plan", "--env", "sandbox", "--state-store", back, "--detailed-exitcode"]).code == .success, "in sync from the moved store")
    }
}
