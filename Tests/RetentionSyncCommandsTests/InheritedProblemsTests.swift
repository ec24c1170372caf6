import CLIKit
@testable import CommandTestSupport
import Emulator
import Foundation
import RetentionMessagingModels
import Testing

/// What a vendor leaves behind that customers feel — a default on a message App Review REJECTED,
/// declared pairs with no default at all — is said by import, plan and status as needing attention,
/// not found after the move.
@Suite("Problems the environment held before the move")
struct InheritedProblemsTests {
    static let approved = "a1a1a1a1-0000-4000-8000-000000000001"
    static let rejected = "b2b2b2b2-0000-4000-8000-000000000002"

    @Test("a default on REJECTED content and a pair without a default: import says so, plan and status exit 3 naming both, the JSON lists them")
    func vendorLeftovers() async throws {
        let harness = try CommandHarness()
        try ImportCommandTests.adoptingApp(harness)
        try await ImportCommandTests.seed(harness, """
            {"messages": [{"identifier": "\(Self.approved)"}, {"identifier": "\(Self.rejected)", "state": "REJECTED"}],
             "defaults": [{"productId": "com.example.stillpoint.monthly", "locale": "en-US", "messageIdentifier": "\(Self.approved)"},
                          {"productId": "com.example.stillpoint.monthly", "locale": "de-DE", "messageIdentifier": "\(Self.rejected)"},
                          {"productId": "com.example.stillpoint.yearly", "locale": "en-US", "messageIdentifier": "\(Self.approved)"}]}
            """)
        let rejectedLine = "the default of com.example.stillpoint.monthly/de-DE is message \(Self.rejected), which App Review REJECTED"
        let missingLine = "1 declared pair has no default message at Apple and none in the manifests (com.example.stillpoint.yearly/de-DE)"
        let imported = await harness.run(["import", "--env", "sandbox"])
        #expect(imported.code == .success, "\(imported.stdout)\(imported.stderr)")
        #expect(imported.stdout.contains("attention: " + rejectedLine) && imported.stdout.contains("attention: " + missingLine), "\(imported.stdout)\(imported.stderr)")

        let plan = await harness.run(["plan", "--env", "sandbox", "--detailed-exitcode"])
        #expect(plan.code == .needsAttention, "\(plan.stdout)\(plan.stderr)")
        #expect(plan.stdout.contains(rejectedLine) && plan.stdout.contains(missingLine), "\(plan.stdout)")
        let markdown = await harness.run(["plan", "--env", "sandbox", "--format", "markdown"])
        #expect(markdown.stdout.contains("**Needs attention** (the environment was like this before these manifests"), "\(markdown.stdout)")
        let json = try await ExternalContentTests.planJSON(harness, ["--env", "sandbox"])
        let inherited = try #require(json["inherited"] as? [[String: Any]], "\(json.keys)")
        #expect(inherited.compactMap { $0["kind"] as? String }.sorted() == ["default_shows_rejected", "no_default"])
        #expect(inherited.first { $0["kind"] as? String == "no_default" }?["pairs"] as? [String] == ["com.example.stillpoint.yearly/de-DE"])
        #expect((json["summary"] as? [String: Any])?["attention"] as? Int == 2)

        let status = await harness.run(["status", "--env", "sandbox", "--detailed-exitcode"])
        #expect(status.code == .needsAttention, "\(status.stdout)\(status.stderr)")
        #expect(status.stdout.contains("Needs attention (held before these manifests): " + rejectedLine), "\(status.stdout)")

        // Assigning an approved message to both pairs ends it.
        try """
            apiVersion: retention-sync/v1
            kind: Defaults
            defaults:
              - { products: [com.example.stillpoint.monthly, com.example.stillpoint.yearly], locales: [de-DE], message: imported-sandbox-a1a1a1a1 }
            """.write(to: harness.file("manifests/fixed.yaml"), atomically: true, encoding: .utf8)
        let imported2 = try String(contentsOf: harness.file("manifests/imported-sandbox.yaml"), encoding: .utf8)
        try imported2.replacingOccurrences(of: "  - { products: [com.example.stillpoint.monthly], locales: [de-DE], message: imported-sandbox-b2b2b2b2 }\n", with: "")
            .write(to: harness.file("manifests/imported-sandbox.yaml"), atomically: true, encoding: .utf8)
        #expect(await harness.run(["apply", "--env", "sandbox", "--auto-approve"]).code == .success)
        let after = await harness.run(["plan", "--env", "sandbox", "--detailed-exitcode"])
        #expect(after.code == .success, "\(after.stdout)\(after.stderr)")
    }
}
