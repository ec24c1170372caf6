import CLIKit
import Foundation
import RetentionSyncCommands
import Testing

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
}
