import CLIKit
import Emulator
import Foundation
import HTTPCore
import RetentionMessagingModels
@testable import CommandTestSupport
import Testing

/// A team that already runs Retention Messaging (by hand, a script or a vendor) declares the
/// messages it did not make with `kind: ExternalMessage`, and the emulator holds such content
/// through `POST /emulator/seed`.
@Suite("external content")
struct ExternalContentTests {
    static let sandboxId = "0b9a3f7e-1c2d-4e5f-8a9b-0c1d2e3f4a5b"
    static let productionId = "7d6c5b4a-3f2e-4d1c-9b0a-1e2f3a4b5c6d"
    static let strangerId = "11111111-2222-4333-8444-555555555555"

    /// One product, one locale, both environments; the default is the external message.
    static func writeManifests(_ harness: CommandHarness, defaultMessage: String = "legacy-calm",
                               sandboxId: String = sandboxId) throws {
        let files = [
            "app.yaml": """
            apiVersion: retention-sync/v1
            kind: App
            bundleId: com.example.stillpoint
            appAppleId: 6450012345
            environments:
              sandbox: { stateStore: .retention-sync/sandbox-state.json }
              production: { stateStore: .retention-sync/production-state.json }
            products:
              - id: com.example.stillpoint.monthly
                locales: [en-US]
            """,
            "legacy.yaml": """
            apiVersion: retention-sync/v1
            kind: ExternalMessage
            name: legacy-calm
            identifiers:
              sandbox: \(sandboxId)
              production: \(productionId)
            assumedText:
              en-US: { header: "Before you go", body: "Your streak is waiting for you." }
            """,
            "messages.yaml": """
            apiVersion: retention-sync/v1
            kind: Message
            name: stay-calm
            localizations:
              en-US: { header: "Stay a little longer", body: "Ten minutes a day still counts." }
            """,
            "defaults.yaml": """
            apiVersion: retention-sync/v1
            kind: Defaults
            defaults:
              - products: "*"
                locales: "*"
                message: \(defaultMessage)
            """,
        ]
        try harness.writeManifests(files)
    }

    /// `POST /emulator/seed` on the in-process emulator, as a test or a person with curl would.
    static func seed(_ harness: CommandHarness, _ json: String, in environment: Environment) async throws -> HTTPResponse {
        let request = HTTPRequest(method: "POST", url: URL(string: "http://127.0.0.1/emulator/seed")!,
                                  headers: [(name: "Content-Type", value: "application/json")], body: Data(json.utf8))
        return try #require(await harness.emulator.handle(request, environment: environment))
    }

    static func planJSON(_ harness: CommandHarness, _ arguments: [String]) async throws -> [String: Any] {
        let run = await harness.run(["plan", "--format", "json"] + arguments)
        let object = try #require(try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8)), "no JSON: \(run.stderr)")
        return try #require(object as? [String: Any], "plan printed no JSON: \(run.stderr)")
    }

    static func actions(_ plan: [String: Any]) -> [[String: Any]] { plan["actions"] as? [[String: Any]] ?? [] }

    @Test("seeding the emulator with content the tool did not make: messages, images and defaults with any identifiers and states")
    func seedRoute() async throws {
        let harness = try CommandHarness()
        let answer = try await Self.seed(harness, """
            {"messages": [{"identifier": "\(Self.productionId)", "state": "PENDING"},
                          {"identifier": "\(Self.strangerId)", "state": "REJECTED", "header": "Wait", "body": "Please stay."}],
             "images": [{"identifier": "22222222-3333-4444-8555-666666666666", "state": "APPROVED", "size": "BULLET_POINT"}],
             "defaults": [{"productId": "com.example.stillpoint.monthly", "locale": "en-US", "messageIdentifier": "\(Self.productionId)"}],
             "realtimeURL": "https://vendor.example/apple"}
            """, in: .production)
        #expect(answer.status == 200)
        let state = harness.emulator.state(of: .production)
        #expect(state.messages[Self.productionId]?.state == .pending)
        #expect(state.messages[Self.strangerId]?.state == .rejected)
        #expect(state.messages[Self.strangerId]?.body.header == "Wait")
        #expect(state.images["22222222-3333-4444-8555-666666666666"]?.size == .bulletPoint)
        #expect(state.defaults[DefaultKey(productId: "com.example.stillpoint.monthly", locale: "en-US")] == Self.productionId)
        #expect(state.realtimeURL == "https://vendor.example/apple")
        #expect(harness.emulator.state(of: .sandbox).messages.isEmpty, "production's seed stays out of sandbox")

        let badIdentifier = try await Self.seed(harness, #"{"messages": [{"identifier": "not-a-uuid"}]}"#, in: .sandbox)
        #expect(badIdentifier.status == 400)
        #expect(String(decoding: badIdentifier.body, as: UTF8.self).contains("not a UUID"))
        let danglingDefault = try await Self.seed(harness, """
            {"defaults": [{"productId": "p", "locale": "en-US", "messageIdentifier": "\(Self.sandboxId)"}]}
            """, in: .sandbox)
        #expect(danglingDefault.status == 400)
        #expect(harness.emulator.state(of: .sandbox).defaults.isEmpty, "a refused seed changes nothing")
    }

    @Test("an external message used as a default waits for App Review: PENDING blocks the default, APPROVED makes it ready, and it is never uploaded")
    func defaultGatedByReview() async throws {
        let harness = try CommandHarness()
        try Self.writeManifests(harness)
        #expect(try await Self.seed(harness, #"{"messages": [{"identifier": "\#(Self.productionId)", "state": "PENDING"}]}"#,
                                    in: .production).status == 200)

        let pending = try await Self.planJSON(harness, ["--env", "production"])
        let blocked = try #require(Self.actions(pending).first { $0["message_identifier"] as? String == Self.productionId })
        #expect(blocked["state"] as? String == "blocked")
        #expect(!Self.actions(pending).contains { ($0["identifier"] as? String) == Self.productionId },
                "the external message is never uploaded")
        let waiting = try #require(blocked["waiting_for"] as? [[String: Any]])
        #expect(waiting.first?["state"] as? String == "PENDING")

        let text = await harness.run(["plan", "--env", "production"])
        #expect(text.stdout.contains("legacy-calm"))

        try harness.emulator.approveMessage(Self.productionId, in: .production)
        let approved = try await Self.planJSON(harness, ["--env", "production"])
        let ready = try #require(Self.actions(approved).first { $0["message_identifier"] as? String == Self.productionId })
        #expect(ready["state"] as? String == "ready")

        let apply = await harness.run(["apply", "--env", "production", "--auto-approve"])
        #expect(apply.code == .success, "\(apply.stdout)\(apply.stderr)")
        #expect(harness.emulator.state(of: .production).defaults[DefaultKey(productId: "com.example.stillpoint.monthly", locale: "en-US")]
                == Self.productionId)
        let status = await harness.run(["status", "--env", "production"])
        #expect(status.stdout.contains("legacy-calm external (content unknown)"), "\(status.stdout)")
    }

    @Test("a flow rule answers with an external message once App Review approved it; until then the rule is left out of the published snapshot")
    func ruleGatedByReview() async throws {
        let harness = try CommandHarness()
        try Self.writeManifests(harness, defaultMessage: "stay-calm")
        try harness.edit("manifests/app.yaml", replacing: "production: { stateStore",
                         with: "production: { snapshotPath: .retention-sync/production-snapshot.json, stateStore")
        try """
            apiVersion: retention-sync/v1
            kind: Flow
            name: cancel-flow
            rules:
              - name: legacy-answer
                response: { message: legacy-calm }

            """.write(to: harness.file("manifests/flow.yaml"), atomically: true, encoding: .utf8)
        #expect(try await Self.seed(harness, #"{"messages": [{"identifier": "\#(Self.productionId)", "state": "PENDING"}]}"#,
                                    in: .production).status == 200)

        func rule(_ plan: [String: Any]) throws -> [String: Any] {
            let publish = try #require(Self.actions(plan).first { ($0["rules"] as? [[String: Any]]) != nil })
            return try #require((publish["rules"] as? [[String: Any]])?.first { $0["id"] as? String == "cancel-flow/legacy-answer" })
        }
        let pending = try rule(try await Self.planJSON(harness, ["--env", "production"]))
        #expect(pending["outcome"] as? String == "left_out")
        let waiting = try #require(pending["waiting_for"] as? [[String: Any]])
        #expect(waiting.contains { $0["identifier"] as? String == Self.productionId })

        try harness.emulator.approveMessage(Self.productionId, in: .production)
        let approved = try rule(try await Self.planJSON(harness, ["--env", "production"]))
        #expect(approved["outcome"] as? String == "added")
    }

    @Test("an external message Apple does not hold is an error in the plan, not a wait for an upload that never comes")
    func externalMissingAtApple() async throws {
        let harness = try CommandHarness()
        try Self.writeManifests(harness)
        let plan = try await Self.planJSON(harness, ["--env", "sandbox"])
        let action = try #require(Self.actions(plan).first { $0["message_identifier"] as? String == Self.sandboxId })
        #expect(action["state"] as? String == "error")
        #expect((action["error"] as? String)?.contains("never uploads external content") == true)
    }

    @Test("prune never deletes an external message unless it is named with --prune-id")
    func pruneKeepsExternal() async throws {
        let harness = try CommandHarness()
        // The default is a managed message; the external one is declared but unused.
        try Self.writeManifests(harness, defaultMessage: "stay-calm")
        #expect(try await Self.seed(harness, """
            {"messages": [{"identifier": "\(Self.sandboxId)"}, {"identifier": "\(Self.strangerId)"}]}
            """, in: .sandbox).status == 200)

        let pruned = try await Self.planJSON(harness, ["--env", "sandbox", "--prune", "--prune-force"])
        let deletes = Self.actions(pruned).filter { ($0["kind"] as? String)?.contains("delete") == true }.compactMap { $0["identifier"] as? String }
        #expect(deletes == [Self.strangerId], "the unmanaged message goes, the external one stays")
        let inventory = try #require(pruned["inventory"] as? [[String: Any]])
        let external = try #require(inventory.first { $0["identifier"] as? String == Self.sandboxId })
        #expect(external["label"] as? String == "external")
        #expect((external["prune"] as? String)?.contains("--prune-id") == true)
        let text = await harness.run(["plan", "--env", "sandbox", "--prune", "--prune-force"])
        #expect(text.stdout.contains("legacy-calm external (content unknown)"), "\(text.stdout)")

        let named = try await Self.planJSON(harness, ["--env", "sandbox", "--prune-id", Self.sandboxId, "--prune-force"])
        let namedDeletes = Self.actions(named).filter { ($0["kind"] as? String)?.contains("delete") == true }.compactMap { $0["identifier"] as? String }
        #expect(namedDeletes.sorted() == [Self.sandboxId, Self.strangerId].sorted())

        // A name instead of an identifier deletes nothing and says why.
        let byName = await harness.run(["apply", "--env", "sandbox", "--prune-id", "legacy-calm", "--prune-force"])
        #expect(byName.code == .usage)
        #expect(byName.stderr.contains("--prune-id: 'legacy-calm' is not an identifier; give the UUID the plan's inventory lists"), "\(byName.stderr)")
        #expect(harness.emulator.state(of: .sandbox).messages[Self.sandboxId] != nil)
    }

    @Test("a bad identifier in an ExternalMessage is rejected at file:line:column before any network call")
    func badIdentifier() async throws {
        let harness = try CommandHarness()
        try Self.writeManifests(harness, sandboxId: "0b9a3f7e-1c2d-4e5f-8a9b-0c1d2e3f4a5")
        let run = await harness.run(["validate", "--manifests", harness.file("manifests").path])
        #expect(run.code != .success)
        let output = run.stdout + run.stderr
        #expect(output.contains("legacy.yaml:5:12: error: the sandbox identifier of external message 'legacy-calm', '0b9a3f7e-1c2d-4e5f-8a9b-0c1d2e3f4a5', is not a UUID [invalid-identifier]"),
                "\(output)")
    }

    @Test("an external message and a managed message cannot share a name; a default with no identifier in an environment is left alone there, with a warning")
    func namesAndEnvironments() async throws {
        let harness = try CommandHarness()
        try Self.writeManifests(harness)
        try harness.edit("manifests/messages.yaml", replacing: "name: stay-calm", with: "name: legacy-calm")
        try harness.edit("manifests/legacy.yaml", replacing: "  production: \(Self.productionId)\n", with: "")
        let run = await harness.run(["validate", "--manifests", harness.file("manifests").path])
        let output = run.stdout + run.stderr
        #expect(output.contains("[duplicate-message]"), "\(output)")

        try harness.edit("manifests/messages.yaml", replacing: "name: legacy-calm", with: "name: stay-calm")
        let missing = await harness.run(["validate", "--manifests", harness.file("manifests").path])
        let text = missing.stdout + missing.stderr
        #expect(text.contains("defaults.yaml:6:14: warning: external message 'legacy-calm' has no production identifier: in production, retention-sync leaves the defaults it is assigned to as they are [external-not-in-environment]"),
                "\(text)")
    }

    @Test("a default switch says what customers see before and after: the vendor's message by name with its assumed header, an unknown one by identifier")
    func defaultSwitchShowsFromAndTo() async throws {
        let harness = try CommandHarness()
        try Self.writeManifests(harness, defaultMessage: "stay-calm")
        #expect(try await Self.seed(harness, """
            {"messages": [{"identifier": "\(Self.productionId)", "state": "APPROVED"}],
             "defaults": [{"productId": "com.example.stillpoint.monthly", "locale": "en-US", "messageIdentifier": "\(Self.productionId)"}]}
            """, in: .production).status == 200)
        let fromVendor = await harness.run(["plan", "--env", "production"])
        #expect(fromVendor.stdout.contains("set default com.example.stillpoint.monthly/en-US from legacy-calm (external; assumed header: \"Before you go\") → stay-calm "),
                "\(fromVendor.stdout)")

        #expect(try await Self.seed(harness, """
            {"messages": [{"identifier": "\(Self.strangerId)", "state": "APPROVED"}],
             "defaults": [{"productId": "com.example.stillpoint.monthly", "locale": "en-US", "messageIdentifier": "\(Self.strangerId)"}]}
            """, in: .production).status == 200)
        let fromUnknown = await harness.run(["plan", "--env", "production"])
        #expect(fromUnknown.stdout.contains("set default com.example.stillpoint.monthly/en-US from \(Self.strangerId) (not in the manifests) → stay-calm "),
                "\(fromUnknown.stdout)")
    }

    @Test("plan --preview draws a default switch before and after: the vendor's message from its assumed text, the new one from the manifests")
    func previewDrawsDefaultSwitch() async throws {
        let harness = try CommandHarness()
        try Self.writeManifests(harness, defaultMessage: "stay-calm")
        #expect(try await Self.seed(harness, """
            {"messages": [{"identifier": "\(Self.productionId)", "state": "APPROVED"}],
             "defaults": [{"productId": "com.example.stillpoint.monthly", "locale": "en-US", "messageIdentifier": "\(Self.productionId)"}]}
            """, in: .production).status == 200)
        let plan = await harness.run(["plan", "--env", "production", "--preview", "site"])
        #expect(plan.stderr.contains("and 1 default switch in production to site/index.html"), "\(plan.stderr)")
        let page = try String(contentsOf: harness.file("site/defaults.html"), encoding: .utf8)
        #expect(page.contains("com.example.stillpoint.monthly/en-US · legacy-calm (external; assumed text) → stay-calm"), "\(page)")
        let before = try #require(page.range(of: "Before you go"), "the vendor's side is drawn from its assumed text")
        let after = try #require(page.range(of: "Stay a little longer"), "the new side is drawn from the manifests")
        #expect(before.lowerBound < after.lowerBound)
        let index = try String(contentsOf: harness.file("site/index.html"), encoding: .utf8)
        #expect(index.contains("<a href=\"defaults.html\">Default messages switched (1)</a>"), "\(index)")
    }
}
