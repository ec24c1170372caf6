import CLIKit
import Emulator
import Foundation
import RetentionMessagingModels
@testable import CommandTestSupport
import Testing

/// The first read is paid once: `import --seed-state` records what its complete read found, so the
/// plan after it re-reads only its window of defaults rather than every pair again.
@Suite("retention-sync import --seed-state")
struct ImportSeedsStateTests {
    static let products = (1...6).map { "com.example.stillpoint.plan\($0)" }
    static let locales = ["en-US", "de-DE", "fr-FR", "ja"]

    /// 6 products × 4 locales, every pair with the vendor's default.
    static func vendorApp(_ harness: CommandHarness) async throws {
        try ImportCommandTests.adoptingApp(harness, products: products, locales: locales)
        let defaults = products.flatMap { product in
            locales.map { #"{"productId": "\#(product)", "locale": "\#($0)", "messageIdentifier": "\#(ImportCommandTests.first)"}"# }
        }
        try await ImportCommandTests.seed(harness, """
            {"messages": [{"identifier": "\(ImportCommandTests.first)"}], "defaults": [\(defaults.joined(separator: ","))],
             "realtimeURL": "https://vendor.example/apple/sandbox"}
            """)
    }

    static func apiCalls(_ plan: CommandHarness.Run) throws -> Int {
        let planned = try #require(try JSONSerialization.jsonObject(with: Data(plan.stdout.utf8)) as? [String: Any])
        return try #require(planned["api_calls"] as? Int, "\(planned.keys.sorted())")
    }

    @Test("importing with --seed-state records the defaults it read, and the next plan reads 10 of the 24 pairs, not all, and says No changes")
    func seededImportMakesTheNextPlanReadItsWindow() async throws {
        let harness = try CommandHarness()
        try await Self.vendorApp(harness)
        let run = await harness.run(["import", "--env", "sandbox", "--seed-state"])
        #expect(run.code == .success, "\(run.stdout)\(run.stderr)")
        // 2 lists + 24 defaults + the realtime URL.
        #expect(run.stdout.contains("Read in 27 calls."), "\(run.stdout)")
        #expect(run.stdout.contains("/manifests/.retention-sync/sandbox-state.json: it vouches for 24 defaults as this read found them, so the next plan re-reads 10 a run"),
                "\(run.stdout)")
        let records = try #require(try ImportCommandTests.state(harness)["defaults"] as? [[String: Any]])
        #expect(records.count == 24)
        #expect(records.allSatisfy { $0["message_identifier"] as? String == ImportCommandTests.first }, "\(records.prefix(2))")

        let before = harness.emulator.state(of: .sandbox)
        let plan = await harness.run(["plan", "--env", "sandbox", "--format", "json"])
        #expect(plan.code == .success, "\(plan.stdout)\(plan.stderr)")
        // 2 lists + the window of 10 defaults + the realtime URL; the other 14 are vouched for by the record.
        #expect(try Self.apiCalls(plan) == 13)
        let text = await harness.run(["plan", "--env", "sandbox"])
        #expect(text.stdout.contains("No changes. sandbox matches the manifests."), "\(text.stdout)")
        #expect(harness.emulator.state(of: .sandbox).defaults == before.defaults, "seeding wrote nothing at Apple")

        let again = await harness.run(["import", "--env", "sandbox", "--seed-state"])
        #expect(again.code == .success, "\(again.stdout)\(again.stderr)")
        #expect(again.stdout.contains("already records what this read found; nothing to seed"), "\(again.stdout)")
    }

    @Test("importing without --seed-state writes no state: the next plan reads every pair again, and import said how to avoid that")
    func plainImportLeavesTheStateAlone() async throws {
        let harness = try CommandHarness()
        try await Self.vendorApp(harness)
        let run = await harness.run(["import", "--env", "sandbox"])
        #expect(run.code == .success, "\(run.stdout)\(run.stderr)")
        #expect(run.stdout.contains("import --seed-state records what this read showed"), "\(run.stdout)")
        #expect(!FileManager.default.fileExists(atPath: harness.file("manifests/.retention-sync/sandbox-state.json").path))
        let plan = await harness.run(["plan", "--env", "sandbox", "--format", "json"])
        #expect(try Self.apiCalls(plan) == 27)
    }

    @Test("--seed-state for an environment without a state store is a usage error before any read, saying what to declare")
    func seedingNeedsAStore() async throws {
        let harness = try CommandHarness()
        try await Self.vendorApp(harness)
        let app = harness.file("manifests/app.yaml")
        let text = try String(contentsOf: app, encoding: .utf8).replacingOccurrences(of: "  sandbox: { stateStore: .retention-sync/sandbox-state.json }\n", with: "  sandbox: {}\n")
        try text.write(to: app, atomically: true, encoding: .utf8)
        let run = await harness.run(["import", "--env", "sandbox", "--seed-state"])
        #expect(run.code == .usage, "\(run.stdout)\(run.stderr)")
        #expect(run.stderr.contains("import --seed-state needs a state store: declare environments.sandbox.stateStore"), "\(run.stderr)")
        #expect(try ImportCommandTests.files(harness).isEmpty, "refused before reading: nothing written")
    }
}
