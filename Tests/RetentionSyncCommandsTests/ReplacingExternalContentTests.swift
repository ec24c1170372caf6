import CLIKit
import Emulator
import Foundation
import HTTPCore
import RetentionMessagingModels
@testable import CommandTestSupport
import Testing
import TestSupport

/// A team that ran Retention Messaging through a vendor adopts it and then replaces the vendor's
/// text with its own, one step at a time, in production, where App Review holds every upload. The
/// commands are the ones the manual's "Replacing external messages step by step" lists, in order.
@Suite("Replacing a vendor's message step by step")
struct ReplacingExternalContentTests {
    static let english = "7d6c5b4a-3f2e-4d1c-9b0a-1e2f3a4b5c6d"
    static let german = "0b9a3f7e-1c2d-4e5f-8a9b-0c1d2e3f4a5b"
    static let spring = "5a5a5a5a-0000-4000-8000-00000000aaa1"
    static let summer = "6b6b6b6b-0000-4000-8000-00000000bbb2"
    static let englishPair = DefaultKey(productId: "com.example.stillpoint.monthly", locale: "en-US")
    static let germanPair = DefaultKey(productId: "com.example.stillpoint.monthly", locale: "de-DE")

    /// A line of the manual, placeholders filled in, run as a person would: `retention-sync …`
    /// in-process, `curl -X METHOD "$RETENTION_SYNC_ENDPOINT/production/…"` as the admin request the
    /// emulator's server would forward.
    static func runManualLine(_ line: String, in harness: CommandHarness) async throws -> CommandHarness.Run {
        let words = line.replacingOccurrences(of: "$RETENTION_SYNC_ENDPOINT/production", with: "http://127.0.0.1")
            .replacingOccurrences(of: "\"", with: "").split(separator: " ").map(String.init)
        guard words.first == "curl" else { return await harness.run(Array(words.dropFirst())) }
        let url = try #require(URL(string: words[3]))
        let response = try #require(await harness.emulator.handle(HTTPRequest(method: words[2], url: url), environment: .production))
        return CommandHarness.Run(code: response.status == 200 ? .success : .failure,
                                  stdout: String(decoding: response.body, as: UTF8.self), stderr: "")
    }

    /// The manual's block, between its marker (`<!-- scenario: NAME -->`) and the block's end: every
    /// command line (comments dropped) and the outcome its comment promises after `# →`, in order.
    static func manualSteps(_ scenario: String = "replacing-external") throws -> [(command: String, promise: String?)] {
        let text = try Repository.text("docs/migrating-from-a-vendor.md")
        let start = try #require(text.range(of: "<!-- scenario: \(scenario) -->\n```sh\n"), "the manual's block")
        let end = try #require(text.range(of: "\n```", range: start.upperBound..<text.endIndex))
        return text[start.upperBound..<end.lowerBound].split(separator: "\n").compactMap { line in
            guard line.hasPrefix("retention-sync ") || line.hasPrefix("curl ") else { return nil }
            let parts = line.components(separatedBy: "# →")
            let command = parts[0].trimmingCharacters(in: .whitespaces)
            return (command, parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : nil)
        }
    }

    @Test("replacing a vendor's default: import, upload the new message (PENDING), switch (blocked until App Review approves), apply, delete the vendor's message with --prune-id")
    func replaceVendorDefault() async throws {
        let harness = try CommandHarness()
        try ImportCommandTests.adoptingApp(harness, products: ["com.example.stillpoint.monthly"], locales: ["en-US", "de-DE"],
                                            environments: ["production"])
        // What the vendor left: one message per locale as the defaults, two older campaigns unused.
        try await ImportCommandTests.seed(harness, """
            {"messages": [{"identifier": "\(Self.english)"}, {"identifier": "\(Self.german)"},
                          {"identifier": "\(Self.spring)"}, {"identifier": "\(Self.summer)"}],
             "defaults": [{"productId": "\(Self.englishPair.productId)", "locale": "en-US", "messageIdentifier": "\(Self.english)"},
                          {"productId": "\(Self.germanPair.productId)", "locale": "de-DE", "messageIdentifier": "\(Self.german)"}]}
            """, in: .production)
        var ran: [(command: String, output: String)] = []
        var newId = ""
        /// Runs a line of the manual as a person would, its placeholders filled in.
        func run(_ line: String) async throws -> CommandHarness.Run {
            let filled = line.replacingOccurrences(of: "\"$OLD_ID\"", with: Self.english).replacingOccurrences(of: "$NEW_ID", with: newId)
            let result = try await Self.runManualLine(filled, in: harness)
            ran.append((line, result.stdout + result.stderr))
            #expect(result.code == .success, "\(line)\n\(result.stdout)\(result.stderr)")
            return result
        }
        func held() -> EmulatorState { harness.emulator.state(of: .production) }
        func state() throws -> [String: Any] {
            let data = try Data(contentsOf: harness.file("manifests/.retention-sync/production-state.json"))
            return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        }

        // 0. Adopt: no upload, and the state records the four messages it adopted.
        _ = try await run("retention-sync import --env production")
        _ = try await run("retention-sync plan --env production")
        let adoptingApply = try await run("retention-sync apply --env production")
        #expect(!adoptingApply.stderr.contains("holds nothing, but Apple already holds"), "adoption is not a lost store")
        #expect(held().messages.count == 4)
        let adopted = try #require(try state()["adopted"] as? [[String: Any]])
        #expect(adopted.compactMap { $0["identifier"] as? String } == [Self.german, Self.spring, Self.summer, Self.english])
        #expect(adopted.first { $0["identifier"] as? String == Self.english }?["name"] as? String == "imported-production-7d6c5b4a")

        // 1. The new text as a managed message: uploaded, and held PENDING by App Review.
        try """
            apiVersion: retention-sync/v1
            kind: Message
            name: stay-calm
            localizations:
              en-US: { header: "Stay a little longer", body: "Ten minutes a day still counts." }

            """.write(to: harness.file("manifests/stay-calm.yaml"), atomically: true, encoding: .utf8)
        _ = try await run("retention-sync plan --env production")
        _ = try await run("retention-sync apply --env production")
        newId = try #require(held().messages.first { $0.value.body.header == "Stay a little longer" }?.key)
        #expect(held().messages[newId]?.state == .pending)
        #expect(held().defaults[Self.englishPair] == Self.english, "the vendor's default keeps serving")

        // 2. Switch the default: the review gate holds it, and apply leaves the vendor's message serving.
        try harness.edit("manifests/imported-production.yaml", replacing: "locales: [en-US], message: imported-production-7d6c5b4a",
                         with: "locales: [en-US], message: stay-calm")
        let blocked = try await run("retention-sync plan --env production")
        // The reviewer reads what customers see before and after.
        #expect(blocked.stdout.contains("! set default com.example.stillpoint.monthly/en-US from imported-production-7d6c5b4a (external, content unknown) → stay-calm \(newId)"),
                "\(blocked.stdout)")
        #expect(blocked.stdout.contains("waiting for message 'stay-calm' (en-US): PENDING review"))
        _ = try await run("retention-sync apply --env production")
        #expect(held().defaults[Self.englishPair] == Self.english, "held until approved")

        // 3. App Review approves: the switch goes live; the other locale keeps the vendor's message.
        _ = try await run(#"curl -X POST "$RETENTION_SYNC_ENDPOINT/production/emulator/messages/$NEW_ID/approve""#)
        #expect(held().messages[newId]?.state == .approved)
        _ = try await run("retention-sync plan --env production")
        _ = try await run("retention-sync apply --env production")
        #expect(held().defaults[Self.englishPair] == newId)
        #expect(held().defaults[Self.germanPair] == Self.german)

        // 4. A plain prune keeps the external message; naming it deletes it, and nothing else.
        _ = try await run("retention-sync plan --env production --prune")
        _ = try await run(#"retention-sync apply --env production --prune-id "$OLD_ID""#)
        #expect(held().messages.keys.sorted() == [Self.german, Self.spring, newId, Self.summer].sorted())
        let deleted = try #require(try state()["adopted"] as? [[String: Any]]).first { $0["identifier"] as? String == Self.english }
        #expect(deleted?["deleted_at"] != nil, "the state says the adopted message was deleted")
        let imported = try String(contentsOf: harness.file("manifests/imported-production.yaml"), encoding: .utf8)
        let document = try #require(imported.components(separatedBy: "---\n").first { $0.contains("name: imported-production-7d6c5b4a\n") })
        try imported.replacingOccurrences(of: document + "---\n", with: "").write(to: harness.file("manifests/imported-production.yaml"),
                                                                                   atomically: true, encoding: .utf8)
        #expect(await harness.run(["validate"]).code == .success)
        _ = try await run("retention-sync plan --env production")

        // The manual lists exactly these lines, in this order, and each printed what the manual promises.
        let manual = try Self.manualSteps()
        #expect(ran.map(\.command) == manual.map(\.command))
        for ((command, output), (_, promise)) in zip(ran, manual) {
            guard let promise else { continue }
            #expect(output.contains(promise), "\(command) promised '\(promise)':\n\(output)")
        }
    }
}
