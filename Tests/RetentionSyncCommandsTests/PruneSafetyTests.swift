import CLIKit
import Emulator
import Foundation
import RetentionMessagingModels
@testable import CommandTestSupport
import Testing

/// Moving over from a vendor who still writes: nothing Apple uses as a default is deleted on evidence
/// the run did not read, and losing the imported file does not delete every default.
@Suite("Prune and delete safety while moving over")
struct PruneSafetyTests {
    static let products = ["com.example.stillpoint.monthly", "com.example.stillpoint.yearly"]
    static let locales = ["de-DE", "en-US", "es-ES", "fr-FR", "it", "ja"]
    /// Five vendor messages, each the default of some of the 12 pairs.
    static let vendor = (1...5).map { "aaaa000\($0)-0000-4000-8000-00000000000\($0)" }
    /// A message the vendor adds after the import: unmanaged, never imported.
    static let later = "bbbb1111-2222-4333-8444-555566667777"
    /// The last pair in sorted order: outside the first refresh window of 10 of the 12 recorded pairs.
    static let outsideWindow = "com.example.stillpoint.yearly/ja"

    static var pairs: [(product: String, locale: String)] {
        products.flatMap { product in locales.map { (product, $0) } }
    }

    /// The vendor's app, imported and applied: the state records the 12 defaults and adopts the 5 messages.
    static func importedVendorApp(_ environment: Environment = .sandbox) async throws -> CommandHarness {
        let harness = try CommandHarness()
        try ImportCommandTests.adoptingApp(harness, products: products, locales: locales)
        let defaults = pairs.enumerated().map { index, pair in
            #"{"productId": "\#(pair.product)", "locale": "\#(pair.locale)", "messageIdentifier": "\#(vendor[index % vendor.count])"}"#
        }
        try await ImportCommandTests.seed(harness, """
            {"messages": [\(vendor.map { #"{"identifier": "\#($0)"}"# }.joined(separator: ", "))],
             "defaults": [\(defaults.joined(separator: ", "))]}
            """, in: environment)
        let imported = await harness.run(["import", "--env", environment.rawValue])
        #expect(imported.code == .success, "\(imported.stdout)\(imported.stderr)")
        let applied = await harness.run(["apply", "--env", environment.rawValue, "--auto-approve"])
        #expect(applied.code == .success, "\(applied.stdout)\(applied.stderr)")
        return harness
    }

    static func json(_ run: CommandHarness.Run) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run.stdout)\(run.stderr)")
    }

    static func actionIds(_ plan: [String: Any]) -> [String] {
        (plan["actions"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
    }

    static func inventoryItem(_ plan: [String: Any], _ identifier: String) -> [String: Any]? {
        (plan["inventory"] as? [[String: Any]] ?? []).first { $0["identifier"] as? String == identifier }
    }

    /// The vendor, still writing, points a pair the next plan does not re-read at a message it just made.
    static func vendorSetsDefaultOutsideWindow(_ harness: CommandHarness) async throws {
        try await ImportCommandTests.seed(harness, """
            {"messages": [{"identifier": "\(later)"}],
             "defaults": [{"productId": "com.example.stillpoint.yearly", "locale": "ja", "messageIdentifier": "\(later)"}]}
            """)
    }

    @Test("a plan that prunes reads every default and keeps a message the vendor set as a default outside the refresh window")
    func pruneKeepsDefaultOutsideWindow() async throws {
        let harness = try await Self.importedVendorApp()
        try await Self.vendorSetsDefaultOutsideWindow(harness)

        // The plain plan reads its window of 10 recorded pairs: it cannot see the change.
        let plain = await harness.run(["plan", "--env", "sandbox"])
        #expect(plain.stdout.contains("Read sandbox with 13 API calls."), "\(plain.stdout)")

        let pruned = try Self.json(await harness.run(["plan", "--env", "sandbox", "--prune", "--format", "json"]))
        #expect(!Self.actionIds(pruned).contains("delete_message:\(Self.later)"), "\(pruned)")
        let item = try #require(Self.inventoryItem(pruned, Self.later))
        #expect(item["used_by"] as? [String] == ["default \(Self.outsideWindow)"])
        #expect(item["prune"] as? String == "kept: in use")
        #expect(pruned["api_calls"] as? Int == 15, "2 lists + all 12 pairs + the realtime URL")
        let read = try #require(pruned["prune_read"] as? [String: Any])
        #expect(read["pairs"] as? Int == 12)
        #expect(read["extra_calls"] as? Int == 2)

        let text = await harness.run(["plan", "--env", "sandbox", "--prune"])
        #expect(text.stdout.contains("Pruning: read every default (12 pairs; 2 calls more than without --prune), so nothing a default shows is deleted on an older reading."),
                "\(text.stdout)")
        #expect(text.stdout.contains("message \(Self.later) APPROVED: unmanaged; in use by default \(Self.outsideWindow); kept: in use"), "\(text.stdout)")

        // The guide's step: delete one vendor message by name. The message in use stays.
        let named = try Self.json(await harness.run(["plan", "--env", "sandbox", "--prune-id", Self.vendor[0], "--format", "json"]))
        #expect(!Self.actionIds(named).contains("delete_message:\(Self.later)"), "\(named)")

        let apply = await harness.run(["apply", "--env", "sandbox", "--prune", "--auto-approve"])
        #expect(apply.code == .success, "\(apply.stdout)\(apply.stderr)")
        #expect(harness.emulator.state(of: .sandbox).messages[Self.later] != nil, "Apple still serves it as a default")
    }

    @Test("a saved plan that pruned a message does not delete it once the vendor made it a default: apply refuses the stale plan, or keeps the message and says so")
    func savedPlanKeepsMessageNowInUse() async throws {
        let harness = try await Self.importedVendorApp()
        try await ImportCommandTests.seed(harness, #"{"messages": [{"identifier": "\#(Self.later)"}]}"#)
        let saved = await harness.run(["plan", "--env", "sandbox", "--prune", "--out", "plan.json"])
        #expect(saved.stdout.contains("- delete message \(Self.later)"), "unused when the plan was made: \(saved.stdout)")

        // A pair the manifests assign: the full read sees the vendor's change, so the plan no longer holds.
        try await Self.vendorSetsDefaultOutsideWindow(harness)
        let stale = await harness.run(["apply", "--env", "sandbox", "--plan", "plan.json"])
        #expect(stale.code == .failure, "\(stale.stdout)\(stale.stderr)")
        #expect(stale.stderr.contains("the remote changed since the plan was made; it would now also need: set default \(Self.outsideWindow)"), "\(stale.stderr)")
        #expect(harness.emulator.state(of: .sandbox).messages[Self.later] != nil)

        // A pair production leaves alone (its external messages have no production identifier): nothing
        // else changes, so the saved plan holds, and apply keeps the message it would have deleted.
        let other = Self.vendor[0].replacingOccurrences(of: "aaaa", with: "cccc")
        try await ImportCommandTests.seed(harness, """
            {"messages": [{"identifier": "\(Self.later)"}, {"identifier": "\(other)"}]}
            """, in: .production)
        let production = await harness.run(["plan", "--env", "production", "--prune", "--prune-force", "--out", "production.json"])
        #expect(production.stdout.contains("- delete message \(Self.later)"), "\(production.stdout)")
        try await ImportCommandTests.seed(harness, """
            {"defaults": [{"productId": "com.example.stillpoint.monthly", "locale": "en-US", "messageIdentifier": "\(Self.later)"}]}
            """, in: .production)
        let apply = await harness.run(["apply", "--env", "production", "--plan", "production.json"])
        #expect(apply.code == .success, "\(apply.stdout)\(apply.stderr)")
        let held = harness.emulator.state(of: .production).messages
        #expect(held[Self.later] != nil, "Apple serves it as a default now")
        #expect(held[other] == nil, "the saved plan's other deletion is done")
        #expect(apply.stdout.contains("Not deleted: message \(Self.later) — the saved plan deleted it, but it is in use by default "
                                      + "com.example.stillpoint.monthly/en-US now; kept: in use"), "\(apply.stdout)")
    }

    @Test("a prune in the second environment keeps a message that is the default of a pair the manifests leave alone there")
    func pruneReadsPairsLeftAlone() async throws {
        // Imported from sandbox: the external messages have no production identifier, so production leaves their pairs alone.
        let harness = try await Self.importedVendorApp()
        let other = Self.vendor[0].replacingOccurrences(of: "aaaa", with: "cccc")
        try await ImportCommandTests.seed(harness, """
            {"messages": [{"identifier": "\(Self.later)"}, {"identifier": "\(other)"}],
             "defaults": [{"productId": "com.example.stillpoint.monthly", "locale": "en-US", "messageIdentifier": "\(Self.later)"}]}
            """, in: .production)
        let plan = try Self.json(await harness.run(["plan", "--env", "production", "--prune", "--prune-force", "--format", "json"]))
        #expect(!Self.actionIds(plan).contains("delete_message:\(Self.later)"), "\(plan)")
        #expect(Self.actionIds(plan).contains("delete_message:\(other)"), "an unused message is still pruned: \(plan)")
        #expect(Self.inventoryItem(plan, Self.later)?["used_by"] as? [String] == ["default com.example.stillpoint.monthly/en-US"])
        #expect(Self.actionIds(plan).allSatisfy { !$0.hasPrefix("delete_default") && !$0.hasPrefix("set_default") },
                "pairs left alone are only read, never changed: \(plan)")
    }

    @Test("removing the imported file refuses to delete every default without --allow-delete-defaults, and says how many were adopted by import and when")
    func lostImportedFileIsGuarded() async throws {
        let harness = try await Self.importedVendorApp()
        let adopted = try #require(try ImportCommandTests.state(harness)["adopted"] as? [[String: Any]])
        let day = try #require((adopted.first?["adopted_at"] as? String)?.prefix(10))
        let before = harness.emulator.state(of: .sandbox).defaults
        #expect(before.count == 12)

        try FileManager.default.removeItem(at: harness.file("manifests/imported-sandbox.yaml"))
        let plan = await harness.run(["plan", "--env", "sandbox", "--detailed-exitcode"])
        #expect(plan.code == .failure, "\(plan.stdout)\(plan.stderr)")
        #expect(plan.stdout.hasPrefix("Plan (sandbox): 0 to upload, 0 to set, 0 blocked, 0 to delete, 12 errors"), "\(plan.stdout)")
        #expect(plan.stdout.contains("error: delete protection: this would delete 12 of the 12 defaults Apple holds for the declared pairs (more than 25%); "
                                     + "12 of these were adopted by import on \(day); if a manifest was lost"), "\(plan.stdout)")
        #expect(plan.stderr.contains("run again with --allow-delete-defaults"), "\(plan.stderr)")
        #expect(!plan.stderr.contains("--prune-force"), "the prune's override is not the defaults' one: \(plan.stderr)")

        let refused = await harness.run(["apply", "--env", "sandbox", "--auto-approve"])
        #expect(refused.code == .failure, "\(refused.stdout)\(refused.stderr)")
        #expect(harness.emulator.state(of: .sandbox).defaults == before, "no default deleted")

        // --prune-force overrides the prune's protection only: the defaults stay protected.
        let pruneForced = try Self.json(await harness.run(["plan", "--env", "sandbox", "--prune-force", "--format", "json"]))
        #expect((pruneForced["summary"] as? [String: Any])?["errors"] as? Int == 12, "\(pruneForced)")

        let allowed = try Self.json(await harness.run(["plan", "--env", "sandbox", "--allow-delete-defaults", "--format", "json"]))
        #expect(Self.actionIds(allowed).filter { $0.hasPrefix("delete_default:") }.count == 12)
        #expect((allowed["summary"] as? [String: Any])?["errors"] as? Int == 0, "\(allowed)")
        let apply = await harness.run(["apply", "--env", "sandbox", "--allow-delete-defaults", "--auto-approve"])
        #expect(apply.code == .success, "\(apply.stdout)\(apply.stderr)")
        #expect(harness.emulator.state(of: .sandbox).defaults.isEmpty)
        #expect(Self.vendor.allSatisfy { harness.emulator.state(of: .sandbox).messages[$0] != nil },
                "letting the defaults go prunes nothing")
    }

    @Test("--allow-delete-defaults alone deletes the defaults the manifests stopped assigning and prunes nothing, also through a saved plan")
    func allowDeleteDefaultsPrunesNothing() async throws {
        let harness = try await Self.importedVendorApp()
        // Unused and unmanaged: a prune would delete it.
        try await ImportCommandTests.seed(harness, #"{"messages": [{"identifier": "\#(Self.later)"}]}"#)
        try FileManager.default.removeItem(at: harness.file("manifests/imported-sandbox.yaml"))

        let plan = try Self.json(await harness.run(["plan", "--env", "sandbox", "--allow-delete-defaults", "--format", "json"]))
        #expect(plan["prune"] as? Bool == false, "\(plan)")
        #expect(plan["prune_read"] == nil, "no prune, so no full read for one")
        #expect(Self.actionIds(plan).allSatisfy { $0.hasPrefix("delete_default:") } && Self.actionIds(plan).count == 12, "\(plan)")

        let saved = await harness.run(["plan", "--env", "sandbox", "--allow-delete-defaults", "--out", "plan.json"])
        #expect(saved.code == .success, "\(saved.stdout)\(saved.stderr)")
        let apply = await harness.run(["apply", "--env", "sandbox", "--plan", "plan.json"])
        #expect(apply.code == .success, "the saved plan carries the override: \(apply.stdout)\(apply.stderr)")
        let state = harness.emulator.state(of: .sandbox)
        #expect(state.defaults.isEmpty)
        #expect(state.messages[Self.later] != nil, "nothing pruned")
        #expect(Self.vendor.allSatisfy { state.messages[$0] != nil }, "nothing pruned")
    }

    @Test("deleting a few of many defaults needs no override")
    func fewDefaultDeletesPass() async throws {
        let harness = try await Self.importedVendorApp()
        let file = harness.file("manifests/imported-sandbox.yaml")
        let text = try String(contentsOf: file, encoding: .utf8)
        // Import groups the defaults per message: the entry that holds yearly/ja goes, with the few pairs it shares.
        let line = try #require(text.split(separator: "\n").first { $0.contains("yearly") && ($0.contains("[ja") || $0.contains(" ja")) })
        try text.replacingOccurrences(of: String(line) + "\n", with: "").write(to: file, atomically: true, encoding: .utf8)
        let plan = await harness.run(["plan", "--env", "sandbox", "--detailed-exitcode"])
        #expect(plan.code == .changesPending, "\(plan.stdout)\(plan.stderr)")
        #expect(plan.stdout.contains("- delete default \(Self.outsideWindow)"), "\(plan.stdout)")
    }
}
