import CLIKit
import Emulator
import Foundation
import RetentionMessagingModels
@testable import CommandTestSupport
import Testing

/// Switching Apple's realtime URL from a vendor to retention-sync's serve, and back in an incident:
/// a revert of the switch must set the vendor's URL again, and a URL that disappears from the
/// manifests must not pass for "No changes".
@Suite("Realtime URL cut-over and rollback")
struct RealtimeURLCutoverTests {
    static let vendor = "https://vendor.example/apple/sandbox"
    static let serve = "https://retention.stillpoint.example/apple/sandbox"

    /// The vendor's app, imported; the App file as import left it is returned.
    static func importedVendorApp(_ harness: CommandHarness) async throws -> String {
        try ImportCommandTests.adoptingApp(harness)
        try await ImportCommandTests.seedVendorApp(harness, everyPair: true)
        let imported = await harness.run(["import", "--env", "sandbox"])
        #expect(imported.code == .success, "\(imported.stdout)\(imported.stderr)")
        return try String(contentsOf: harness.file("manifests/app.yaml"), encoding: .utf8)
    }

    static func writeApp(_ harness: CommandHarness, _ text: String) throws {
        try text.write(to: harness.file("manifests/app.yaml"), atomically: true, encoding: .utf8)
    }

    @Test("import writes the vendor's realtime URL so that reverting the switch plans setting it back")
    func revertingTheSwitchSetsTheVendorURLBack() async throws {
        let harness = try CommandHarness()
        try ImportCommandTests.adoptingApp(harness)
        let before = try String(contentsOf: harness.file("manifests/app.yaml"), encoding: .utf8)
        let app = try await Self.importedVendorApp(harness)

        // One comment line and one key more; every other line as it was.
        let lines = before.split(separator: "\n").map(String.init)
        let added = app.split(separator: "\n").map(String.init).filter { !lines.contains($0) }
        #expect(added.count == 2 && app.split(separator: "\n").count == lines.count + 1, "\(added)")
        #expect(app.contains("  # Imported by 'retention-sync import --env sandbox' on "), "\(app)")
        #expect(app.contains("  sandbox: { realtimeURL: \(Self.vendor), stateStore: .retention-sync/sandbox-state.json }\n"), "\(app)")
        #expect(app.contains("  production: { stateStore: .retention-sync/production-state.json }\n"), "production is not touched: \(app)")
        #expect(await harness.run(["validate"]).code == .success)
        let plan = await harness.run(["plan", "--env", "sandbox"])
        #expect(plan.stdout.contains("No changes"), "\(plan.stdout)")
        #expect(await harness.run(["apply", "--env", "sandbox", "--auto-approve"]).code == .success)

        // The switch to serve, applied.
        try Self.writeApp(harness, app.replacingOccurrences(of: Self.vendor, with: Self.serve))
        #expect(await harness.run(["apply", "--env", "sandbox", "--auto-approve"]).code == .success)
        #expect(harness.emulator.state(of: .sandbox).realtimeURL == Self.serve)

        // The incident: the switch is reverted.
        try Self.writeApp(harness, app)
        let reverted = await harness.run(["plan", "--env", "sandbox", "--detailed-exitcode"])
        #expect(reverted.code == .changesPending, "\(reverted.stdout)\(reverted.stderr)")
        #expect(reverted.stdout.contains("set realtime URL from \(Self.serve) → \(Self.vendor)"), "\(reverted.stdout)")
        #expect(await harness.run(["apply", "--env", "sandbox", "--auto-approve"]).code == .success)
        #expect(harness.emulator.state(of: .sandbox).realtimeURL == Self.vendor)
    }

    @Test("removing a declared realtime URL warns that Apple keeps it, until the main branch's apply records the removal")
    func removingTheURLWarns() async throws {
        let harness = try CommandHarness()
        try ImportCommandTests.adoptingApp(harness)
        let withoutURL = try String(contentsOf: harness.file("manifests/app.yaml"), encoding: .utf8)
        let app = try await Self.importedVendorApp(harness)
        try Self.writeApp(harness, app.replacingOccurrences(of: Self.vendor, with: Self.serve))
        #expect(await harness.run(["apply", "--env", "sandbox", "--auto-approve"]).code == .success)

        // The URL line is gone (a revert of a switch made before import wrote the vendor's).
        try Self.writeApp(harness, withoutURL)
        let warning = "warning: environments.sandbox.realtimeURL was removed from the manifests; Apple keeps \(Self.serve), "
            + "and nothing will change it. Declare the URL you want in the App manifest (the vendor's, to roll back)"
        let plan = await harness.run(["plan", "--env", "sandbox", "--detailed-exitcode"])
        #expect(plan.code == .success, "nothing apply could do: \(plan.stdout)\(plan.stderr)")
        #expect(plan.stdout.contains(warning), "\(plan.stdout)")
        #expect(plan.stderr.contains(warning), "\(plan.stderr)")

        let json = try PruneSafetyTests.json(await harness.run(["plan", "--env", "sandbox", "--format", "json"]))
        let warnings = try #require(json["warnings"] as? [[String: Any]], "\(json)")
        #expect(warnings.first?["kind"] as? String == "realtime_url_removed")
        #expect(warnings.first?["field"] as? String == "environments.sandbox.realtimeURL")
        #expect(warnings.first?["held"] as? String == Self.serve)
        let markdown = await harness.run(["plan", "--env", "sandbox", "--format", "markdown"])
        #expect(markdown.stdout.contains("> [!WARNING]\n> environments.sandbox.realtimeURL was removed"), "\(markdown.stdout)")
        let github = await harness.run(["plan", "--env", "sandbox", "--format", "github"])
        #expect(github.stdout.contains("::warning title=environments.sandbox.realtimeURL::"), "\(github.stdout)")

        // Applied on the main branch, the removal is recorded; Apple keeps the URL, and later plans are quiet.
        let apply = await harness.run(["apply", "--env", "sandbox", "--auto-approve"])
        #expect(apply.code == .success, "\(apply.stdout)\(apply.stderr)")
        #expect(apply.stdout.contains(warning), "\(apply.stdout)")
        #expect(harness.emulator.state(of: .sandbox).realtimeURL == Self.serve)
        let later = await harness.run(["plan", "--env", "sandbox"])
        #expect(!later.stdout.contains("warning:") && later.stdout.contains("No changes"), "\(later.stdout)")
    }

    @Test("import leaves an App that declares another realtime URL as it is, and says so")
    func importKeepsADeclaredURL() async throws {
        let harness = try CommandHarness()
        try ImportCommandTests.adoptingApp(harness)
        let file = harness.file("manifests/app.yaml")
        let declared = try String(contentsOf: file, encoding: .utf8)
            .replacingOccurrences(of: "sandbox: { stateStore:", with: "sandbox: { realtimeURL: \(Self.serve), stateStore:")
        try declared.write(to: file, atomically: true, encoding: .utf8)
        try await ImportCommandTests.seedVendorApp(harness, everyPair: true)
        let run = await harness.run(["import", "--env", "sandbox"])
        #expect(run.code == .success, "\(run.stdout)\(run.stderr)")
        #expect(run.stdout.contains("note: Apple's realtime URL is \(Self.vendor), the App declares \(Self.serve): import changed nothing"), "\(run.stdout)")
        #expect(try String(contentsOf: file, encoding: .utf8) == declared)
    }
}
