import CLIKit
import Emulator
import Foundation
import RetentionMessagingModels
@testable import CommandTestSupport
import Testing
import TestSupport

/// `retention-sync preview` as a person runs it: offline from the manifests, with the review states
/// the state document recorded, and never a request to Apple.
@Suite("Previewing the messages from the command line")
struct PreviewCommandTests {
    @Test("after an apply to sandbox, the index shows the review states the state document recorded, and Apple is not asked")
    func reviewStatesFromTheStateDocument() async throws {
        let harness = try CommandHarness()
        let apply = await harness.run(["apply", "--env", "sandbox"])
        #expect(apply.code == .success, "\(apply.stderr)")
        let requests = (harness.emulator.requestCount(in: .sandbox), harness.emulator.requestCount(in: .production))
        let run = await harness.run(["preview", "--out", "site"])
        #expect(run.code == .success, "\(run.stderr)")
        #expect(run.stdout == "site/index.html: 4 message pages, 12 localizations, \(try Self.kilobytes(harness.file("site"))) KB\n")
        #expect((harness.emulator.requestCount(in: .sandbox), harness.emulator.requestCount(in: .production)) == requests, "no call to Apple")
        let index = try String(contentsOf: harness.file("site/index.html"), encoding: .utf8)
        #expect(index.contains("<strong>sandbox</strong>: as the state document in .retention-sync/sandbox-snapshot.json in the manifest folder recorded them (Apple was not asked)"))
        #expect(index.contains("<strong>production</strong>: .retention-sync/production-snapshot.json in the manifest folder holds no state document yet"))
        let row = try #require(index.split(separator: "\n").first { $0.contains("#loc-en-US\">everyday-calm</a>") })
        #expect(row.hasSuffix("<td><span class=\"state-APPROVED\">APPROVED</span></td><td><span class=\"muted\">not uploaded</span></td></tr>"))
    }

    @Test("--offline reads no store, and the pages say the review states are unknown")
    func offline() async throws {
        let harness = try CommandHarness()
        let run = await harness.run(["preview", "--out", "site", "--offline", "--env", "production"])
        #expect(run.code == .success, "\(run.stderr)")
        let index = try String(contentsOf: harness.file("site/index.html"), encoding: .utf8)
        #expect(index.contains("<strong>production</strong>: unknown: --offline, the state store was not read"))
        #expect(!index.contains("<strong>sandbox</strong>"))
        let page = try String(contentsOf: harness.file("site/messages/everyday-calm.html"), encoding: .utf8)
        #expect(page.contains("<h2>en-US <span class=\"muted\">· production:</span> <span class=\"muted\">unknown</span></h2>"))
    }

    @Test("an --out folder that is not a previous preview is refused, and left as it was")
    func refusesAnotherFolder() async throws {
        let harness = try CommandHarness()
        try FileManager.default.createDirectory(at: harness.file("docs"), withIntermediateDirectories: true)
        try Data("keep me".utf8).write(to: harness.file("docs/notes.md"))
        let run = await harness.run(["preview", "--out", "docs", "--offline"])
        #expect(run.code == .failure)
        #expect(run.stderr == "error: docs exists and is not a previous preview (it has no .retention-sync-preview); refusing to replace it — choose another --out, or remove the folder\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: harness.file("docs").path) == ["notes.md"])
        let again = await harness.run(["preview", "--out", "site", "--offline"])
        #expect(again.code == .success)
        let rerun = await harness.run(["preview", "--out", "site", "--offline"])
        #expect(rerun.code == .success, "a previous preview is replaced")
    }

    @Test("invalid manifests make no preview")
    func invalidManifests() async throws {
        let harness = try CommandHarness()
        try harness.edit("manifests/messages.yaml", replacing: "    header: Before you go\n", with: "    header: \(String(repeating: "x", count: 70))\n")
        let run = await harness.run(["preview", "--out", "site", "--offline"])
        #expect(run.code == .failure)
        #expect(run.stderr.contains("[header-too-long]"))
        #expect(!FileManager.default.fileExists(atPath: harness.file("site").path))
    }

    static func kilobytes(_ site: URL) throws -> Int {
        var bytes = 0
        for name in ["index.html"] + (try FileManager.default.contentsOfDirectory(atPath: site.appendingPathComponent("messages").path)).map({ "messages/\($0)" }) {
            bytes += try Data(contentsOf: site.appendingPathComponent(name)).count
        }
        return (bytes + 1023) / 1024
    }
}
