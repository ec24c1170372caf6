import Foundation
import HTTPCore
import RetentionMessagingModels
@testable import CommandTestSupport
import Testing

/// After an import of a vendor's setup, a team has dozens of external messages: what every plan
/// prints stays readable — one warning of each kind and a count, one line for the declared external
/// content — while `validate` and `--format json` still list every one.
@Suite("Quiet after an import")
struct QuietAfterImportTests {
    static let count = 6
    static let locales = ["en-US", "de-DE", "fr-FR", "es-ES", "en-GB", "en-AU"]

    static func identifier(_ index: Int) -> String { "7d6c5b4a-3f2e-4d1c-9b0a-1e2f3a4b5c\(String(format: "%02d", index))" }

    /// Six external messages known in production only, each the default of one locale.
    static func writeManifests(_ harness: CommandHarness) throws {
        try ImportCommandTests.adoptingApp(harness, products: ["com.example.stillpoint.monthly"], locales: locales)
        var defaults = "apiVersion: retention-sync/v1\nkind: Defaults\ndefaults:\n"
        for (index, locale) in locales.enumerated() {
            try """
                apiVersion: retention-sync/v1
                kind: ExternalMessage
                name: vendor-\(index)
                identifiers:
                  production: \(identifier(index))

                """.write(to: harness.file("manifests/vendor-\(index).yaml"), atomically: true, encoding: .utf8)
            defaults += "  - { products: [com.example.stillpoint.monthly], locales: [\(locale)], message: vendor-\(index) }\n"
        }
        try defaults.write(to: harness.file("manifests/defaults.yaml"), atomically: true, encoding: .utf8)
    }

    @Test("six external messages without a sandbox identifier: plan shows two warnings and counts the rest; validate lists all six")
    func repeatedWarningsAreCounted() async throws {
        let harness = try CommandHarness()
        try Self.writeManifests(harness)
        let plan = await harness.run(["plan", "--env", "sandbox"])
        let warnings = plan.stderr.components(separatedBy: "\n").filter { $0.contains("[external-not-in-environment]") && $0.contains(": warning: ") }
        #expect(warnings.count == 2, "\(plan.stderr)")
        #expect(plan.stderr.contains("… and 4 more [external-not-in-environment] warnings like these ('retention-sync validate' lists every one)"),
                "\(plan.stderr)")
        let validate = await harness.run(["validate"])
        let listed = (validate.stdout + validate.stderr).components(separatedBy: "\n").filter { $0.contains("[external-not-in-environment]") }
        #expect(listed.count == Self.count, "\(validate.stdout)")
    }

    @Test("the vendor's six messages at Apple are one line of the terminal plan, and each is in the JSON plan")
    func externalInventoryIsOneLine() async throws {
        let harness = try CommandHarness()
        try Self.writeManifests(harness)
        let messages = (0..<Self.count).map { #"{"identifier": "\#(Self.identifier($0))", "state": "\#($0 == 0 ? "PENDING" : "APPROVED")"}"# }
        let defaults = zip(Self.locales, 0..<Self.count).map { locale, index in
            #"{"productId": "com.example.stillpoint.monthly", "locale": "\#(locale)", "messageIdentifier": "\#(Self.identifier(index))"}"#
        }
        #expect(try await ExternalContentTests.seed(harness, #"{"messages": [\#(messages.joined(separator: ", "))], "defaults": [\#(defaults.joined(separator: ", "))]}"#,
                                                    in: .production).status == 200)
        let text = await harness.run(["plan", "--env", "production"])
        #expect(text.stdout.contains("external (declared, content unknown): 6 messages (1 PENDING, 5 APPROVED); 6 in use; kept, deleted only when named with --prune-id (--format json lists each)"),
                "\(text.stdout)")
        #expect(!text.stdout.contains(Self.identifier(3)), "\(text.stdout)")
        let json = try await ExternalContentTests.planJSON(harness, ["--env", "production"])
        let inventory = try #require(json["inventory"] as? [[String: Any]], "\(json.keys)")
        #expect(Set(inventory.compactMap { $0["identifier"] as? String }) == Set((0..<Self.count).map(Self.identifier)))
    }
}
