import CLIKit
@testable import CommandTestSupport
import Emulator
import Foundation
import RetentionMessagingModels
import Testing

/// A team imports production first, then sandbox: the same product and locale name the same campaign
/// in both, so the sandbox import adds sandbox's identifier to each external message production's
/// import declared, instead of skipping those pairs, and says where it could not.
@Suite("Importing the second environment")
struct SecondEnvironmentImportTests {
    static let production = ["a1a1a1a1-0000-4000-8000-000000000001", "a2a2a2a2-0000-4000-8000-000000000002"]
    static let sandbox = ["5a5a5a5a-0000-4000-8000-000000000001", "5b5b5b5b-0000-4000-8000-000000000002", "5c5c5c5c-0000-4000-8000-000000000003"]
    static let monthly = "com.example.stillpoint.monthly", yearly = "com.example.stillpoint.yearly"

    static func defaults(_ pairs: [(String, String, String)]) -> String {
        pairs.map { #"{"productId": "\#($0.0)", "locale": "\#($0.1)", "messageIdentifier": "\#($0.2)"}"# }.joined(separator: ", ")
    }

    @Test("sandbox's import pairs each external message with the one message its pairs show there, lists a conflict, and the next plan has nothing to do")
    func pairsByTheDefaults() async throws {
        let harness = try CommandHarness()
        try ImportCommandTests.adoptingApp(harness)
        let (p1, p2) = (Self.production[0], Self.production[1])
        try await ImportCommandTests.seed(harness, """
            {"messages": [{"identifier": "\(p1)"}, {"identifier": "\(p2)"}],
             "defaults": [\(Self.defaults([(Self.monthly, "en-US", p1), (Self.yearly, "en-US", p1), (Self.monthly, "de-DE", p2), (Self.yearly, "de-DE", p2)]))]}
            """, in: .production)
        let first = await harness.run(["import", "--env", "production"])
        #expect(first.code == .success, "\(first.stdout)\(first.stderr)")

        // Sandbox: the English campaign is one message; the German pairs show two different ones.
        let (s1, s2, s3) = (Self.sandbox[0], Self.sandbox[1], Self.sandbox[2])
        try await ImportCommandTests.seed(harness, """
            {"messages": [{"identifier": "\(s1)"}, {"identifier": "\(s2)"}, {"identifier": "\(s3)"}],
             "defaults": [\(Self.defaults([(Self.monthly, "en-US", s1), (Self.yearly, "en-US", s1), (Self.monthly, "de-DE", s2), (Self.yearly, "de-DE", s3)]))]}
            """, in: .sandbox)
        let second = await harness.run(["import", "--env", "sandbox"])
        #expect(second.code == .success, "\(second.stdout)\(second.stderr)")
        let englishName = "imported-production-\(p1.prefix(8))", germanName = "imported-production-\(p2.prefix(8))"
        #expect(second.stdout.contains("Paired 1 external message in manifests/imported-production.yaml with sandbox's identifier"), "\(second.stdout)")
        #expect(second.stdout.contains("note: external message '\(germanName)' is the default of 2 pairs, which show 2 different messages in sandbox (\(s2), \(s3))"),
                "\(second.stdout)")
        let production = try String(contentsOf: harness.file("manifests/imported-production.yaml"), encoding: .utf8)
        #expect(production.contains("name: \(englishName)\nidentifiers:\n  production: \(p1)\n  sandbox: \(s1)\n"), "\(production)")
        #expect(!production.contains("sandbox: \(s2)") && !production.contains("sandbox: \(s3)"))
        // The unpaired German messages are declared on their own; no pair is assigned twice.
        let sandboxFile = try String(contentsOf: harness.file("manifests/imported-sandbox.yaml"), encoding: .utf8)
        #expect(sandboxFile.contains("sandbox: \(s2)") && sandboxFile.contains("sandbox: \(s3)") && !sandboxFile.contains(s1), "\(sandboxFile)")
        #expect(!sandboxFile.contains("kind: Defaults"), "\(sandboxFile)")

        #expect(await harness.run(["validate"]).code == .success)
        let plan = await harness.run(["plan", "--env", "sandbox", "--detailed-exitcode"])
        #expect(plan.code == .success, "\(plan.stdout)\(plan.stderr)")
        #expect(plan.stdout.contains("No changes."), "\(plan.stdout)")
    }
}
