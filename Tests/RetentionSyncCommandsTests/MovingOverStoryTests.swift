import CLIKit
import Emulator
import Foundation
import RetentionMessagingModels
@testable import CommandTestSupport
import Testing

/// The trial of a team moving over from a vendor, replayed end to end against the emulator: both
/// environments imported from the vendor's export, the vendor still writing during the move, a
/// prune, the imported file lost, the realtime URL switched and reverted in an incident. After every
/// step, each message Apple shows as a default is still in Apple's list: nothing in use is deleted.
@Suite("Moving over from a vendor, the whole story")
struct MovingOverStoryTests {
    static let products = ["com.example.stillpoint.monthly", "com.example.stillpoint.yearly"]
    static let vendor = (production: ["en-US": "a1000000-0000-4000-8000-000000000001", "de-DE": "a1000000-0000-4000-8000-000000000002"],
                         sandbox: ["en-US": "b1000000-0000-4000-8000-000000000001", "de-DE": "b1000000-0000-4000-8000-000000000002"])
    /// A message the vendor makes and sets as a default while the move is under way.
    static let written = "a1000000-0000-4000-8000-000000000003"
    static let unused = "a1000000-0000-4000-8000-0000000000ff"

    static func seed(_ harness: CommandHarness, _ byLocale: [String: String], extra: [String], in environment: Environment) async throws {
        let defaults = products.flatMap { product in
            byLocale.sorted { $0.key < $1.key }.map { #"{"productId": "\#(product)", "locale": "\#($0.key)", "messageIdentifier": "\#($0.value)"}"# }
        }
        let messages = (byLocale.values.sorted() + extra).map { #"{"identifier": "\#($0)"}"# }
        try await ImportCommandTests.seed(harness, #"{"messages": [\#(messages.joined(separator: ","))], "defaults": [\#(defaults.joined(separator: ","))], "#
                                          + #""realtimeURL": "https://vendor.example/apple/\#(environment.rawValue)"}"#, in: environment)
    }

    /// Every message a default shows at Apple is still in Apple's list.
    static func nothingInUseDeleted(_ harness: CommandHarness, _ step: String) {
        for environment in [Environment.sandbox, .production] {
            let state = harness.emulator.state(of: environment)
            let missing = Set(state.defaults.values).filter { state.messages[$0] == nil }
            #expect(missing.isEmpty, "\(step): \(environment.rawValue) shows deleted messages as defaults: \(missing.sorted())")
        }
    }

    func run(_ harness: CommandHarness, _ arguments: [String], expect code: ExitCode = .success) async -> CommandHarness.Run {
        let run = await harness.run(arguments)
        #expect(run.code == code, "\(arguments.joined(separator: " ")): \(run.stdout)\(run.stderr)")
        return run
    }

    @Test("both environments imported from the export, the vendor writing, a prune, the file lost, the URL reverted: nothing in use is deleted")
    func theWholeMove() async throws {
        let harness = try CommandHarness()
        try ImportCommandTests.adoptingApp(harness, products: Self.products)
        try await Self.seed(harness, Self.vendor.production, extra: [Self.unused], in: .production)
        try await Self.seed(harness, Self.vendor.sandbox, extra: [], in: .sandbox)
        try "identifier,name,locale,header,body\n\(Self.vendor.production["en-US"]!),Winback,en-US,Before you go,Your streak is waiting.\n"
            .appending("\(Self.vendor.production["de-DE"]!),Winback,de-DE,Bleib noch,Dein Streak wartet.\n")
            .write(to: harness.file("export.csv"), atomically: true, encoding: .utf8)

        // 1. Production from the vendor's export, its read paid once; then sandbox pairs with it.
        _ = await run(harness, ["import", "--env", "production", "--names", "export.csv", "--seed-state"])
        _ = await run(harness, ["import", "--env", "sandbox"])
        let imported = try String(contentsOf: harness.file("manifests/imported-production.yaml"), encoding: .utf8)
        #expect(imported.contains("name: winback\nlocalizations:\n  de-DE:\n    production: \(Self.vendor.production["de-DE"]!)\n    sandbox: \(Self.vendor.sandbox["de-DE"]!)\n"),
                "\(imported)")
        for environment in ["production", "sandbox"] {
            let plan = await run(harness, ["plan", "--env", environment])
            #expect(plan.stdout.contains("No changes. \(environment) matches the manifests."), "\(plan.stdout)")
            _ = await run(harness, ["apply", "--env", environment, "--auto-approve"])
        }
        Self.nothingInUseDeleted(harness, "after the import")

        // 2. The vendor, still writing, makes a message and sets it as monthly/de-DE's default.
        try await ImportCommandTests.seed(harness, """
            {"messages": [{"identifier": "\(Self.written)"}],
             "defaults": [{"productId": "com.example.stillpoint.monthly", "locale": "de-DE", "messageIdentifier": "\(Self.written)"}]}
            """, in: .production)
        // A prune reads every default first: the vendor's new message, undeclared but in use, is kept (and the
        // imported ones, declared external, are never pruned unless named).
        let prune = await run(harness, ["plan", "--env", "production", "--prune", "--format", "json"])
        let actions = ((try JSONSerialization.jsonObject(with: Data(prune.stdout.utf8)) as? [String: Any])?["actions"] as? [[String: Any]] ?? [])
            .compactMap { $0["id"] as? String }
        #expect(!actions.contains("delete_message:\(Self.written)"), "\(actions)")
        #expect(!actions.contains { $0.hasPrefix("delete_message:") }, "\(actions)")
        // The reconcile leaves the vendor's change; a pull request proposes keeping it.
        _ = await run(harness, ["apply", "--env", "production", "--auto-approve", "--prune", "--leave-drift", "--refresh-defaults", "all"])
        #expect(harness.emulator.state(of: .production).defaults[DefaultKey(productId: "com.example.stillpoint.monthly", locale: "de-DE")] == Self.written)
        #expect(harness.emulator.state(of: .production).messages[Self.unused] != nil, "the imported, unused message is external: kept")
        Self.nothingInUseDeleted(harness, "after the prune")
        let drift = await run(harness, ["import", "--env", "production", "--accept-drift"])
        #expect(drift.stdout.contains("1 default now assigns what Apple holds"), "\(drift.stdout)")
        let accepted = await run(harness, ["plan", "--env", "production", "--refresh-defaults", "all"])
        #expect(accepted.stdout.contains("No changes. production matches the manifests."), "\(accepted.stdout)")

        // 3. The imported file is lost: the plan refuses to delete the defaults, and apply deletes nothing.
        let lost = try Data(contentsOf: harness.file("manifests/imported-production.yaml"))
        try FileManager.default.removeItem(at: harness.file("manifests/imported-production.yaml"))
        let refused = await run(harness, ["plan", "--env", "sandbox"], expect: .failure)
        #expect(refused.stdout.contains("error: delete protection"), "\(refused.stdout)")
        _ = await run(harness, ["apply", "--env", "production", "--auto-approve"], expect: .failure)
        Self.nothingInUseDeleted(harness, "with the file lost")
        try lost.write(to: harness.file("manifests/imported-production.yaml"))

        // 4. Sandbox's realtime URL moves to serve; in an incident the change is reverted, and the plan sets the vendor's back.
        let app = harness.file("manifests/app.yaml")
        let withVendorURL = try String(contentsOf: app, encoding: .utf8)
        try withVendorURL.replacingOccurrences(of: "realtimeURL: https://vendor.example/apple/sandbox", with: "realtimeURL: https://retention.example/apple/sandbox")
            .write(to: app, atomically: true, encoding: .utf8)
        _ = await run(harness, ["apply", "--env", "sandbox", "--auto-approve"])
        #expect(harness.emulator.state(of: .sandbox).realtimeURL == "https://retention.example/apple/sandbox")
        try withVendorURL.write(to: app, atomically: true, encoding: .utf8)
        let revert = await run(harness, ["plan", "--env", "sandbox"])
        #expect(revert.stdout.contains("set realtime URL from https://retention.example/apple/sandbox → https://vendor.example/apple/sandbox"),
                "\(revert.stdout)")
        _ = await run(harness, ["apply", "--env", "sandbox", "--auto-approve"])
        #expect(harness.emulator.state(of: .sandbox).realtimeURL == "https://vendor.example/apple/sandbox")
        Self.nothingInUseDeleted(harness, "after the revert")
    }
}
