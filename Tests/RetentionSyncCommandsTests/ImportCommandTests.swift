import CLIKit
import Emulator
import Foundation
import HTTPCore
import RetentionMessagingModels
@testable import CommandTestSupport
import Testing

/// A team that already runs Retention Messaging adopts it: `import` writes what Apple holds as
/// manifests, and the next plan changes nothing.
@Suite("retention-sync import")
struct ImportCommandTests {
    static let first = "a1a1a1a1-0000-4000-8000-000000000001"
    static let second = "b2b2b2b2-0000-4000-8000-000000000002"
    static let pending = "c3c3c3c3-0000-4000-8000-000000000003"
    static let later = "d4d4d4d4-0000-4000-8000-000000000004"

    /// Only the App: by default two products in two locales, both environments, a state file each.
    static func adoptingApp(_ harness: CommandHarness,
                            products: [String] = ["com.example.stillpoint.monthly", "com.example.stillpoint.yearly"],
                            locales: [String] = ["en-US", "de-DE"], environments: [String] = ["sandbox", "production"]) throws {
        let directory = try harness.clearManifests()
        var text = """
            apiVersion: retention-sync/v1
            kind: App
            bundleId: com.example.stillpoint
            environments:

            """
        for environment in environments {
            text += "  \(environment): { stateStore: .retention-sync/\(environment)-state.json }\n"
        }
        text += "products:\n"
        for product in products {
            text += "  - id: \(product)\n    locales: [\(locales.joined(separator: ", "))]\n"
        }
        try text.write(to: directory.appendingPathComponent("app.yaml"), atomically: true, encoding: .utf8)
    }

    static func seed(_ harness: CommandHarness, _ json: String, in environment: Environment = .sandbox) async throws {
        let request = HTTPRequest(method: "POST", url: URL(string: "http://127.0.0.1/emulator/seed")!,
                                  headers: [(name: "Content-Type", value: "application/json")], body: Data(json.utf8))
        let response = try #require(await harness.emulator.handle(request, environment: environment))
        #expect(response.status == 200, "\(String(decoding: response.body, as: UTF8.self))")
    }

    /// What a vendor left behind: three messages (one still in review), an image, three defaults (the
/// fourth pair has none: a problem the vendor left, which plan and apply call for attention; with
/// `everyPair`, it has one too), a realtime URL.
    static func seedVendorApp(_ harness: CommandHarness, everyPair: Bool = false) async throws {
        try await seed(harness, """
            {"messages": [{"identifier": "\(first)"}, {"identifier": "\(second)"}, {"identifier": "\(pending)", "state": "PENDING"}],
             "images": [{"identifier": "e5e5e5e5-0000-4000-8000-000000000005"}],
             "defaults": [{"productId": "com.example.stillpoint.monthly", "locale": "en-US", "messageIdentifier": "\(first)"},
                          {"productId": "com.example.stillpoint.monthly", "locale": "de-DE", "messageIdentifier": "\(second)"},
                          {"productId": "com.example.stillpoint.yearly", "locale": "en-US", "messageIdentifier": "\(first)"}\(everyPair ? "," : "")
                          \(everyPair ? #"{"productId": "com.example.stillpoint.yearly", "locale": "de-DE", "messageIdentifier": "\#(second)"}"# : "")],
             "realtimeURL": "https://vendor.example/apple/sandbox"}
            """)
    }

    static func files(_ harness: CommandHarness) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: harness.file("manifests").path).filter { $0.hasPrefix("imported") }.sorted()
    }

    @Test("importing an app a vendor runs: the estimate first, then manifests that validate, and plan says No changes with no upload")
    func importThenNoChanges() async throws {
        let harness = try CommandHarness()
        try Self.adoptingApp(harness)
        try await Self.seedVendorApp(harness)

        let run = await harness.run(["import", "--env", "sandbox"])
        #expect(run.code == .success, "\(run.stdout)\(run.stderr)")
        // 2 lists + 4 defaults (2 products × 2 locales) + the realtime URL.
        #expect(run.stdout.hasPrefix("Importing sandbox of com.example.stillpoint: about 7 calls"), "\(run.stdout)")
        #expect(run.stdout.contains("Read in 7 calls."))
        #expect(run.stdout.contains("Wrote manifests/imported-sandbox.yaml: 3 external messages, 1 external image, 3 defaults."), "\(run.stdout)")
        #expect(run.stdout.contains("realtime URL is https://vendor.example/apple/sandbox"))
        #expect(try Self.files(harness) == ["imported-sandbox.yaml"])
        let written = try String(contentsOf: harness.file("manifests/imported-sandbox.yaml"), encoding: .utf8)
        #expect(written.contains("kind: ExternalImage\nname: imported-sandbox-image-e5e5e5e5\nidentifiers:\n  sandbox: e5e5e5e5-0000-4000-8000-000000000005\n"),
                "\(written)")

        let validate = await harness.run(["validate"])
        #expect(validate.code == .success, "\(validate.stdout)\(validate.stderr)")
        #expect(!validate.stdout.contains(": error:"), "\(validate.stdout)")

        let before = harness.emulator.state(of: .sandbox)
        let plan = await harness.run(["plan", "--env", "sandbox"])
        #expect(plan.code == .success, "\(plan.stdout)\(plan.stderr)")
        #expect(plan.stdout.contains("No changes. sandbox matches the manifests."), "\(plan.stdout)")
        #expect(plan.stdout.contains("7 API calls") || plan.stdout.contains("7 calls"), "\(plan.stdout)")
        // The vendor left yearly/de-DE without a default: apply changes nothing and calls for attention to it.
        let apply = await harness.run(["apply", "--env", "sandbox"])
        #expect(apply.code == .needsAttention, "\(apply.stdout)\(apply.stderr)")
        #expect(apply.stderr.contains("1 declared pair has no default message at Apple and none in the manifests (com.example.stillpoint.yearly/de-DE)"),
                "\(apply.stderr)")
        let after = harness.emulator.state(of: .sandbox)
        #expect(after.messages.count == before.messages.count, "nothing uploaded")
        #expect(after.defaults == before.defaults, "no default changed")
        #expect(after.realtimeURL == "https://vendor.example/apple/sandbox")

        // Production has no identifiers for the imported messages: its defaults are left alone, not deleted.
        try await Self.seed(harness, """
            {"messages": [{"identifier": "\(Self.later)"}],
             "defaults": [{"productId": "com.example.stillpoint.monthly", "locale": "en-US", "messageIdentifier": "\(Self.later)"}]}
            """, in: .production)
        let production = await harness.run(["plan", "--env", "production"])
        #expect(production.stdout.contains("No changes"), "\(production.stdout)")
    }

    @Test("importing again after the vendor changed a default says which default differs, at Apple and in the manifests, and what the next plan does")
    func reimportReportsDrift() async throws {
        let harness = try CommandHarness()
        try Self.adoptingApp(harness)
        try await Self.seedVendorApp(harness)
        #expect(await harness.run(["import", "--env", "sandbox"]).code == .success)
        // The vendor, still writing, points monthly/en-US at a new message.
        try await Self.seed(harness, """
            {"messages": [{"identifier": "\(Self.later)"}],
             "defaults": [{"productId": "com.example.stillpoint.monthly", "locale": "en-US", "messageIdentifier": "\(Self.later)"}]}
            """)
        let again = await harness.run(["import", "--env", "sandbox"])
        #expect(again.code == .success, "\(again.stdout)\(again.stderr)")
        #expect(again.stdout.contains("""
            1 default differs from the manifests (changed at Apple since they were written); the next plan sets it back unless you change the Defaults (import --accept-drift writes it as Apple holds it):
              com.example.stillpoint.monthly/en-US is \(Self.later) (imported-sandbox-d4d4d4d4) at Apple, imported-sandbox-a1a1a1a1 in the manifests
            """), "\(again.stdout)")
        #expect(again.stdout.contains("(it sets back the defaults listed above that are still assigned otherwise)"), "\(again.stdout)")
        let plan = await harness.run(["plan", "--env", "sandbox"])
        #expect(plan.stdout.contains("set default com.example.stillpoint.monthly/en-US from imported-sandbox-d4d4d4d4"), "\(plan.stdout)")
    }

    @Test("importing with --accept-drift writes the vendor's change into the Defaults entry that assigned the pair, and the next plan says No changes")
    func acceptDriftWritesTheVendorsChange() async throws {
        let harness = try CommandHarness()
        try Self.adoptingApp(harness)
        try await Self.seedVendorApp(harness)
        #expect(await harness.run(["import", "--env", "sandbox"]).code == .success)
        let before = try String(contentsOf: harness.file("manifests/imported-sandbox.yaml"), encoding: .utf8)
        #expect(before.contains("  - { products: [com.example.stillpoint.monthly, com.example.stillpoint.yearly], locales: [en-US], message: imported-sandbox-a1a1a1a1 }\n"),
                "\(before)")
        try await Self.seed(harness, """
            {"messages": [{"identifier": "\(Self.later)"}],
             "defaults": [{"productId": "com.example.stillpoint.monthly", "locale": "en-US", "messageIdentifier": "\(Self.later)"}]}
            """)
        let again = await harness.run(["import", "--env", "sandbox", "--accept-drift"])
        #expect(again.code == .success, "\(again.stdout)\(again.stderr)")
        #expect(again.stdout.contains("--accept-drift writes it into the manifests as Apple holds it:"), "\(again.stdout)")
        #expect(again.stdout.contains("Wrote the drift into manifests/imported-sandbox.yaml: 1 default now assigns what Apple holds "
                                      + "(com.example.stillpoint.monthly/en-US → imported-sandbox-d4d4d4d4)."), "\(again.stdout)")
        #expect(again.stdout.contains("(it should say No changes)"), "\(again.stdout)")
        let after = try String(contentsOf: harness.file("manifests/imported-sandbox.yaml"), encoding: .utf8)
        // The grouped entry is split exactly: yearly keeps the old message, monthly/en-US names the vendor's new one.
        #expect(after.contains("  - { products: [com.example.stillpoint.monthly], locales: [en-US], message: imported-sandbox-d4d4d4d4 }\n"
                               + "  - { products: [com.example.stillpoint.yearly], locales: [en-US], message: imported-sandbox-a1a1a1a1 }\n"), "\(after)")
        #expect(after.components(separatedBy: "\n").count == before.components(separatedBy: "\n").count + 1, "one line became two, nothing else moved")
        #expect(try Self.files(harness) == ["imported-sandbox-2.yaml", "imported-sandbox.yaml"], "the vendor's new message is declared in a new file")

        #expect(await harness.run(["validate"]).code == .success)
        let plan = await harness.run(["plan", "--env", "sandbox", "--refresh-defaults", "all"])
        #expect(plan.stdout.contains("No changes. sandbox matches the manifests."), "\(plan.stdout)")
    }

    @Test("while the vendor still writes: apply --leave-drift keeps its change at Apple, import --accept-drift proposes it, and then nothing is set back")
    func coexistenceLeavesTheVendorsChange() async throws {
        let harness = try CommandHarness()
        try Self.adoptingApp(harness)
        try await Self.seedVendorApp(harness, everyPair: true)
        #expect(await harness.run(["import", "--env", "sandbox"]).code == .success)
        // The first apply records the adopted defaults: from now on a change at Apple is drift.
        let adopt = await harness.run(["apply", "--env", "sandbox", "--auto-approve"])
        #expect(adopt.code == .success, "\(adopt.stdout)\(adopt.stderr)")
        try await Self.seed(harness, """
            {"messages": [{"identifier": "\(Self.later)"}],
             "defaults": [{"productId": "com.example.stillpoint.monthly", "locale": "en-US", "messageIdentifier": "\(Self.later)"}]}
            """)
        let pair = DefaultKey(productId: "com.example.stillpoint.monthly", locale: "en-US")

        let reconcile = await harness.run(["apply", "--env", "sandbox", "--auto-approve", "--leave-drift", "--refresh-defaults", "all"])
        #expect(reconcile.code == .success, "\(reconcile.stdout)\(reconcile.stderr)")
        #expect(reconcile.stderr.contains("left as Apple holds it (--leave-drift): set default com.example.stillpoint.monthly/en-US"), "\(reconcile.stderr)")
        #expect(harness.emulator.state(of: .sandbox).defaults[pair] == Self.later, "the vendor's change stays")

        let proposal = await harness.run(["import", "--env", "sandbox", "--accept-drift"])
        #expect(proposal.code == .success, "\(proposal.stdout)\(proposal.stderr)")
        #expect(proposal.stdout.contains("1 default now assigns what Apple holds (com.example.stillpoint.monthly/en-US → imported-sandbox-d4d4d4d4)"),
                "\(proposal.stdout)")
        let plan = await harness.run(["plan", "--env", "sandbox", "--refresh-defaults", "all"])
        #expect(plan.stdout.contains("No changes. sandbox matches the manifests."), "\(plan.stdout)")

        // Without the flag, the reconcile sets a later change back, as it always did.
        try await Self.seed(harness, """
            {"defaults": [{"productId": "com.example.stillpoint.monthly", "locale": "en-US", "messageIdentifier": "\(Self.second)"}]}
            """)
        let enforce = await harness.run(["apply", "--env", "sandbox", "--auto-approve", "--refresh-defaults", "all"])
        #expect(enforce.code == .success, "\(enforce.stdout)\(enforce.stderr)")
        #expect(harness.emulator.state(of: .sandbox).defaults[pair] == Self.later)
    }

    @Test("a drifted default whose entry is not written on one line is left as it is, with the change to make by hand")
    func acceptDriftLeavesHandWrittenEntries() async throws {
        let harness = try CommandHarness()
        try Self.adoptingApp(harness)
        try await Self.seedVendorApp(harness, everyPair: true)
        try """
            apiVersion: retention-sync/v1
            kind: ExternalMessage
            name: vendor-first
            identifiers:
              sandbox: \(Self.first)
            ---
            apiVersion: retention-sync/v1
            kind: ExternalMessage
            name: vendor-later
            identifiers:
              sandbox: \(Self.later)
            ---
            apiVersion: retention-sync/v1
            kind: Defaults
            defaults:
              - products: "*"
                locales: "*"
                message: vendor-first

            """.write(to: harness.file("manifests/defaults.yaml"), atomically: true, encoding: .utf8)
        try await Self.seed(harness, """
            {"messages": [{"identifier": "\(Self.later)"}],
             "defaults": [{"productId": "com.example.stillpoint.monthly", "locale": "en-US", "messageIdentifier": "\(Self.later)"}]}
            """)
        let before = try String(contentsOf: harness.file("manifests/defaults.yaml"), encoding: .utf8)
        let run = await harness.run(["import", "--env", "sandbox", "--accept-drift"])
        #expect(run.stdout.contains("note: com.example.stillpoint.monthly/en-US was left assigned to vendor-first (manifests/defaults.yaml:16 is not written "
                                    + "on one line with explicit products and locales); assign it vendor-later yourself."), "\(run.stdout)")
        #expect(try String(contentsOf: harness.file("manifests/defaults.yaml"), encoding: .utf8) == before)
    }

    @Test("importing again adds only what is new, in a new file, and never rewrites the first")
    func reimportAddsOnlyNew() async throws {
        let harness = try CommandHarness()
        try Self.adoptingApp(harness)
        try await Self.seedVendorApp(harness)
        #expect(await harness.run(["import", "--env", "sandbox"]).code == .success)
        let firstFile = try String(contentsOf: harness.file("manifests/imported-sandbox.yaml"), encoding: .utf8)

        let again = await harness.run(["import", "--env", "sandbox"])
        #expect(again.code == .success)
        #expect(again.stdout.contains("Nothing new to import"), "\(again.stdout)")
        #expect(try Self.files(harness) == ["imported-sandbox.yaml"])

        try await Self.seed(harness, """
            {"messages": [{"identifier": "\(Self.later)"}],
             "defaults": [{"productId": "com.example.stillpoint.yearly", "locale": "de-DE", "messageIdentifier": "\(Self.later)"}]}
            """)
        let more = await harness.run(["import", "--env", "sandbox"])
        #expect(more.stdout.contains("Wrote manifests/imported-sandbox-2.yaml: 1 external message, 1 default."), "\(more.stdout)")
        #expect(try String(contentsOf: harness.file("manifests/imported-sandbox.yaml"), encoding: .utf8) == firstFile)
        let second = try String(contentsOf: harness.file("manifests/imported-sandbox-2.yaml"), encoding: .utf8)
        #expect(second.contains(Self.later) && !second.contains(Self.first))
        #expect(await harness.run(["validate"]).code == .success)
        #expect(await harness.run(["plan", "--env", "sandbox"]).stdout.contains("No changes"))
    }

    @Test("an environment without API access is a clear error, and import writes nothing")
    func noAccessWritesNothing() async throws {
        let harness = try CommandHarness(apiAccess: false)
        try Self.adoptingApp(harness)
        try await Self.seedVendorApp(harness)
        let run = await harness.run(["import", "--env", "sandbox"])
        #expect(run.code != .success)
        #expect(run.stderr.contains("import wrote nothing"), "\(run.stderr)")
        #expect(run.stderr.contains("404") || run.stderr.contains("access"), "\(run.stderr)")
        #expect(try Self.files(harness).isEmpty)
    }

    @Test("what import writes passes the schema's identifier pattern and names messages by their identifiers")
    func writtenShape() async throws {
        let harness = try CommandHarness()
        try Self.adoptingApp(harness)
        try await Self.seedVendorApp(harness)
        #expect(await harness.run(["import", "--env", "sandbox"]).code == .success)
        let text = try String(contentsOf: harness.file("manifests/imported-sandbox.yaml"), encoding: .utf8)
        #expect(text.contains("kind: ExternalMessage\nname: imported-sandbox-a1a1a1a1\nidentifiers:\n  sandbox: \(Self.first)\n"))
        #expect(text.contains("PENDING at Apple"))
        #expect(text.contains("  - { products: [com.example.stillpoint.monthly], locales: [de-DE], message: imported-sandbox-b2b2b2b2 }"))
    }
    static func state(_ harness: CommandHarness, _ environment: String = "sandbox") throws -> [String: Any] {
        let data = try Data(contentsOf: harness.file("manifests/.retention-sync/\(environment)-state.json"))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test("adopting an App whose only content is external: the first apply records what it adopted and their review states, and is no lost store; a store lost after an upload still is")
    func adoptionIsNoLostStore() async throws {
        let harness = try CommandHarness()
        try Self.adoptingApp(harness)
        try await Self.seedVendorApp(harness, everyPair: true)
        #expect(await harness.run(["import", "--env", "sandbox"]).code == .success)

        let plan = await harness.run(["plan", "--env", "sandbox", "--format", "json"])
        let planned = try #require(try JSONSerialization.jsonObject(with: Data(plan.stdout.utf8)) as? [String: Any])
        #expect(planned["missing_state"] == nil, "external content at Apple is no sign of a lost store")
        #expect(plan.stderr.contains("holds nothing yet; apply writes the first state document and records the 3 external messages and 1 external image Apple holds as adopted"),
                "\(plan.stderr)")
        let apply = await harness.run(["apply", "--env", "sandbox"])
        #expect(apply.code == .success, "no --first-publish needed: \(apply.stderr)")

        let adopted = try #require(try Self.state(harness)["adopted"] as? [[String: Any]])
        #expect(adopted.map { $0["identifier"] as? String } == [Self.first, Self.second, Self.pending, "e5e5e5e5-0000-4000-8000-000000000005"])
        #expect(adopted.map { $0["name"] as? String } == ["imported-sandbox-a1a1a1a1", "imported-sandbox-b2b2b2b2", "imported-sandbox-c3c3c3c3",
                                                           "imported-sandbox-image-e5e5e5e5"])
        #expect(adopted.map { $0["kind"] as? String } == ["message", "message", "message", "image"])
        #expect(adopted.allSatisfy { $0["adopted_at"] != nil && $0["deleted_at"] == nil })
        func states(_ identifier: String) throws -> [String] {
            let records = try #require(try Self.state(harness)["adopted"] as? [[String: Any]])
            let record = try #require(records.first { $0["identifier"] as? String == identifier })
            return (record["review_states"] as? [[String: Any]] ?? []).compactMap { $0["state"] as? String }
        }
        #expect(try states(Self.pending) == ["PENDING"])
        let again = await harness.run(["plan", "--env", "sandbox"])
        #expect(!again.stderr.contains("First publish"), "\(again.stderr)")

        // App Review decides on the vendor's pending message: the next apply records it, as for uploads.
        try harness.emulator.approveMessage(Self.pending, in: .sandbox)
        #expect(await harness.run(["apply", "--env", "sandbox"]).code == .success)
        #expect(try states(Self.pending) == ["PENDING", "APPROVED"])

        // The check is alive: once content the manifests derive is at Apple, losing the store is refused.
        try """
            apiVersion: retention-sync/v1
            kind: Message
            name: stay-calm
            localizations:
              en-US: { header: "Stay a little longer", body: "Ten minutes a day still counts." }

            """.write(to: harness.file("manifests/stay-calm.yaml"), atomically: true, encoding: .utf8)
        #expect(await harness.run(["apply", "--env", "sandbox"]).code == .success)
        try FileManager.default.removeItem(at: harness.file("manifests/.retention-sync/sandbox-state.json"))
        let lost = await harness.run(["plan", "--env", "sandbox", "--format", "json"])
        let missing = try #require((try JSONSerialization.jsonObject(with: Data(lost.stdout.utf8)) as? [String: Any])?["missing_state"] as? [String: Any])
        #expect(missing["content_at_apple"] as? Int == 1, "the uploaded message, not the three adopted ones")
        let refused = await harness.run(["apply", "--env", "sandbox"])
        #expect(refused.code != .success)
        #expect(refused.stderr.contains("refusing to apply"), "\(refused.stderr)")
    }
}
