import CLIKit
import Emulator
import Foundation
@testable import Operations
import RetentionMessagingModels
@testable import CommandTestSupport
import Testing
import YAML

/// A team moving from a vendor gives import the vendor's export, so the external messages it writes
/// carry the campaign's names and the text the vendor says they show, not `imported-<env>-<hex>`.
@Suite("retention-sync import --names")
struct ImportNamesTests {
    static let unknown = "e0e0e0e0-0000-4000-8000-00000000000e"

    /// The vendor's export: two locales of one campaign, with text that means something to CSV and YAML,
    /// and a row for a message Apple does not hold.
    static let export = "\u{FEFF}Identifier,Name,Locale,Header,Body,Created\r\n"
        + "\(ImportCommandTests.first.uppercased()),Win-back 50% (EN),en-US,\"Wait: 50% off, \"\"today\"\" only\",Line one # not a comment: {x} & *y*,2026-05-01\r\n"
        + "\(ImportCommandTests.second),Win-back 50% (EN),de-DE,Bleib noch – 50 % günstiger,\"Jetzt sparen,\nsofort\",2026-05-01\r\n"
        + "\(unknown),Old campaign,,,,2025-01-01\r\n"

    @Test("importing with the vendor's export writes each campaign as one localized external message, keeps its text exactly, and the next plan says No changes")
    func namesAndAssumedTextFromTheExport() async throws {
        let harness = try CommandHarness()
        try ImportCommandTests.adoptingApp(harness)
        try await ImportCommandTests.seedVendorApp(harness)
        try Self.export.write(to: harness.file("vendor-export.csv"), atomically: true, encoding: .utf8)

        let run = await harness.run(["import", "--env", "sandbox", "--names", "vendor-export.csv"])
        #expect(run.code == .success, "\(run.stdout)\(run.stderr)")
        #expect(run.stdout.contains("Wrote manifests/imported-sandbox.yaml: 2 external messages (1 named by --names), 1 external image, 3 defaults."),
                "\(run.stdout)")
        #expect(run.stdout.contains("note: 1 row of vendor-export.csv names no message this import writes (declared in the manifests already, or not in Apple's list): line 5"),
                "\(run.stdout)")
        let written = try String(contentsOf: harness.file("manifests/imported-sandbox.yaml"), encoding: .utf8)
        #expect(written.contains("name: win-back-50-en\nlocalizations:\n  de-DE:\n    sandbox: \(ImportCommandTests.second)\n"
                                 + "  en-US:\n    sandbox: \(ImportCommandTests.first)\n"), "\(written)")
        #expect(written.contains("name: imported-sandbox-c3c3c3c3\n"), "the row-less message keeps its generated name")
        #expect(written.contains("one message per locale at Apple (de-DE APPROVED, en-US APPROVED); named by lines 2, 3 of the vendor's export (--names)"),
                "\(written)")

        // The text reads back exactly as the export had it, through the manifests' own parser.
        let documents = try YAMLParser.parse(written, file: "imported-sandbox.yaml")
        let english = try #require(documents.first { $0.root["name"]?.scalar?.text == "win-back-50-en" })
        #expect(english.root["assumedText"]?["en-US"]?["header"]?.scalar?.text == "Wait: 50% off, \"today\" only")
        #expect(english.root["assumedText"]?["en-US"]?["body"]?.scalar?.text == "Line one # not a comment: {x} & *y*")
        // A line break is no text a message can show: the name is kept, the text left out, and import says so.
        #expect(english.root["assumedText"]?["de-DE"] == nil)
        #expect(run.stdout.contains("note: vendor-export.csv:3: its body holds a line break or another control character, which a message cannot show: "
                                    + "'win-back-50-en' was written without that assumed text"), "\(run.stdout)")
        #expect(written.contains("locales: [de-DE, en-US], message: win-back-50-en }"), "the defaults name the campaign in both locales: \(written)")

        let validate = await harness.run(["validate"])
        #expect(validate.code == .success, "\(validate.stdout)\(validate.stderr)")
        let plan = await harness.run(["plan", "--env", "sandbox"])
        #expect(plan.stdout.contains("No changes. sandbox matches the manifests."), "\(plan.stdout)")
    }

    @Test("the second environment's import pairs a campaign locale by locale, and both environments then plan No changes")
    func secondEnvironmentPairsACampaignByLocale() async throws {
        let harness = try CommandHarness()
        try ImportCommandTests.adoptingApp(harness)
        let ids = (production: ["en-US": "a0000000-0000-4000-8000-0000000000e1", "de-DE": "a0000000-0000-4000-8000-0000000000d1"],
                   sandbox: ["en-US": "b0000000-0000-4000-8000-0000000000e2", "de-DE": "b0000000-0000-4000-8000-0000000000d2"])
        func seed(_ byLocale: [String: String], in environment: Environment) async throws {
            let defaults = ["com.example.stillpoint.monthly", "com.example.stillpoint.yearly"].flatMap { product in
                byLocale.sorted { $0.key < $1.key }.map { #"{"productId": "\#(product)", "locale": "\#($0.key)", "messageIdentifier": "\#($0.value)"}"# }
            }
            let messages = byLocale.values.sorted().map { #"{"identifier": "\#($0)"}"# }
            try await ImportCommandTests.seed(harness, #"{"messages": [\#(messages.joined(separator: ","))], "defaults": [\#(defaults.joined(separator: ","))]}"#,
                                              in: environment)
        }
        try await seed(ids.production, in: .production)
        try "identifier,name,locale\n\(ids.production["en-US"]!),Winback,en-US\n\(ids.production["de-DE"]!),Winback,de-DE\n"
            .write(to: harness.file("names.csv"), atomically: true, encoding: .utf8)
        let production = await harness.run(["import", "--env", "production", "--names", "names.csv"])
        #expect(production.code == .success, "\(production.stdout)\(production.stderr)")

        try await seed(ids.sandbox, in: .sandbox)
        let sandbox = await harness.run(["import", "--env", "sandbox"])
        #expect(sandbox.code == .success, "\(sandbox.stdout)\(sandbox.stderr)")
        #expect(sandbox.stdout.contains("Paired 2 external messages in manifests/imported-production.yaml with sandbox's identifiers"), "\(sandbox.stdout)")
        #expect(sandbox.stdout.contains("(winback (de-DE), winback (en-US))"), "\(sandbox.stdout)")
        let written = try String(contentsOf: harness.file("manifests/imported-production.yaml"), encoding: .utf8)
        #expect(written.contains("  de-DE:\n    production: \(ids.production["de-DE"]!)\n    sandbox: \(ids.sandbox["de-DE"]!)\n"), "\(written)")
        #expect(written.contains("  en-US:\n    production: \(ids.production["en-US"]!)\n    sandbox: \(ids.sandbox["en-US"]!)\n"), "\(written)")
        for environment in ["production", "sandbox"] {
            let plan = await harness.run(["plan", "--env", environment])
            #expect(plan.stdout.contains("No changes. \(environment) matches the manifests."), "\(environment): \(plan.stdout)\(plan.stderr)")
        }
    }

    @Test("a broken export is refused with its file and line before anything is read from Apple, and nothing is written")
    func brokenExportIsRefusedWithItsLine() async throws {
        let harness = try CommandHarness()
        try ImportCommandTests.adoptingApp(harness)
        try await ImportCommandTests.seedVendorApp(harness)
        let cases: [(String, String)] = [
            ("identifier,name\n\(ImportCommandTests.first),\"unclosed\n", "names.csv:2: a quoted field is not closed before the end of the file"),
            ("identifier,name\n\(ImportCommandTests.first),a,b\n", "names.csv:2: 3 fields where the first row names 2 columns"),
            ("identifier,name\nnot-a-uuid,a\n", "names.csv:2: the identifier is not a UUID"),
            ("id,name\n", "names.csv:1: the first row names no 'identifier' column"),
            ("identifier,name,locale,header,body\n\(ImportCommandTests.first),a,,Header,\n", "names.csv:2: a header or body needs all three of locale, header and body"),
            ("identifier,name\n\(ImportCommandTests.first),a\n\"x\"y,b\n", "names.csv:3: text after a quoted field's closing quote"),
            ("identifier,name\n\(ImportCommandTests.first),a\n\(ImportCommandTests.first),b\n", "names.csv:3: identifier \(ImportCommandTests.first) is also on line 2"),
        ]
        for (text, error) in cases {
            try text.write(to: harness.file("names.csv"), atomically: true, encoding: .utf8)
            let run = await harness.run(["import", "--env", "sandbox", "--names", "names.csv"])
            #expect(run.code == .failure, "\(text)")
            #expect(run.stderr.contains(error), "\(run.stderr)")
            #expect(!run.stdout.contains("Importing"), "refused before reading Apple")
            #expect(try ImportCommandTests.files(harness).isEmpty)
        }
    }

    @Test("rows are found by their starting line across quoted line breaks, CRLF and blank lines")
    func lineNumbersFollowTheFile() throws {
        let text = "identifier,name,locale,header,body\r\n\r\n"
            + "\(ImportCommandTests.first),a,en-US,h,\"two\r\nlines\"\r\n"
            + "\(ImportCommandTests.second),\"B c\",,,\n"
        let names = try VendorNames.parse(Array(text.utf8), file: "n.csv")
        #expect(names.entries.map(\.line) == [3, 5])
        #expect(names.entries.map(\.name) == ["a", "b-c"])
        #expect(names.entries.first?.body == "two\r\nlines")
        #expect(VendorNames.manifestName("  Win-back 50% (EN)!! ") == "win-back-50-en")
    }
}
