import CLIKit
import Emulator
import Foundation
import RetentionMessagingModels
@testable import CommandTestSupport
import Testing

/// A vendor's campaign is one message per locale at Apple; `localizations:` declares it under one
/// name, so a default or a rule names the campaign and each locale gets its own message.
@Suite("external messages with localizations")
struct LocalizedExternalMessageTests {
    static let english = "aaaaaaaa-1111-4111-8111-000000000001"
    static let german = "bbbbbbbb-2222-4222-8222-000000000002"

    static func writeManifests(_ harness: CommandHarness, campaign: String? = nil, defaultsLocales: String = "[en-US, de-DE]") async throws {
        try harness.writeManifests([
            "app.yaml": """
            apiVersion: retention-sync/v1
            kind: App
            bundleId: com.example.stillpoint
            environments:
              sandbox: { stateStore: .retention-sync/sandbox-state.json }
            products:
              - id: com.example.stillpoint.monthly
                locales: [en-US, de-DE]
            """,
            "campaign.yaml": campaign ?? """
            apiVersion: retention-sync/v1
            kind: ExternalMessage
            name: vendor-winback
            localizations:
              en-US:
                sandbox: \(english)
              de-DE:
                sandbox: \(german)
            assumedText:
              de-DE: { header: "Bleib noch", body: "Dein Streak wartet." }
            """,
            "defaults.yaml": """
            apiVersion: retention-sync/v1
            kind: Defaults
            defaults:
              - { products: [com.example.stillpoint.monthly], locales: \(defaultsLocales), message: vendor-winback }
            """,
            "flow.yaml": """
            apiVersion: retention-sync/v1
            kind: Flow
            name: cancel-flow
            rules:
              - name: winback
                response: { message: vendor-winback }
            """,
        ])
        try await ImportCommandTests.seed(harness, #"{"messages": [{"identifier": "\#(english)"}, {"identifier": "\#(german)"}]}"#)
    }

    /// The monthly product's defaults at Apple, by locale.
    static func defaults(_ harness: CommandHarness) -> [String: String] {
        var byLocale: [String: String] = [:]
        for (key, identifier) in harness.emulator.state(of: .sandbox).defaults where key.productId == "com.example.stillpoint.monthly" {
            byLocale[key.locale] = identifier
        }
        return byLocale
    }

    static func request(_ locale: String) -> String {
        #"{"originalTransactionId":"2000000000000001","appAppleId":0,"productId":"com.example.stillpoint.monthly","userLocale":"\#(locale)","#
            + #""requestIdentifier":"7c2b8e2a-0000-4000-8000-000000000001","environment":"Sandbox","signedDate":1790812800000}"#
    }

    @Test("a default and a rule that name a localized campaign set and answer each locale's own message, and the next plan says No changes")
    func eachLocaleGetsItsMessage() async throws {
        let harness = try CommandHarness()
        try await Self.writeManifests(harness)
        let validate = await harness.run(["validate"])
        #expect(validate.code == .success, "\(validate.stdout)\(validate.stderr)")

        let apply = await harness.run(["apply", "--env", "sandbox", "--auto-approve", "--first-publish"])
        #expect(apply.code == .success, "\(apply.stdout)\(apply.stderr)")
        let defaults: [String: String] = Self.defaults(harness)
        #expect(defaults["en-US"] == Self.english)
        #expect(defaults["de-DE"] == Self.german)

        for (locale, expected) in [("en-US", Self.english), ("de-DE", Self.german)] {
            try Self.request(locale).write(to: harness.file("request-\(locale).json"), atomically: true, encoding: .utf8)
            let decided = await harness.run(["decide", "--env", "sandbox", "--request", "request-\(locale).json"])
            #expect(decided.code == .success, "\(decided.stdout)\(decided.stderr)")
            #expect(decided.stdout.contains(expected), "\(locale): \(decided.stdout)")
        }
        let again = await harness.run(["plan", "--env", "sandbox"])
        #expect(again.stdout.contains("No changes. sandbox matches the manifests."), "\(again.stdout)")
    }

    @Test("a default in a locale the campaign has no localization for is an error at the default, naming what to add")
    func defaultOutsideTheCampaignsLocales() async throws {
        let harness = try CommandHarness()
        try await Self.writeManifests(harness, defaultsLocales: "[en-US, fr-FR]")
        let run = await harness.run(["validate"])
        #expect(run.code == .failure)
        #expect(run.stdout.contains("manifests/defaults.yaml:4:") && run.stdout.contains("error: external message 'vendor-winback' has no fr-FR localization, "
                                                                                      + "but is the default for product 'com.example.stillpoint.monthly' in fr-FR [missing-localization]"),
                "\(run.stdout)")
    }

    @Test("identifiers and localizations together are refused; a localization's bad identifier is found at its line")
    func identifiersAndLocalizationsAreExclusive() async throws {
        let harness = try CommandHarness()
        try await Self.writeManifests(harness, campaign: """
            apiVersion: retention-sync/v1
            kind: ExternalMessage
            name: vendor-winback
            identifiers:
              sandbox: \(Self.english)
            localizations:
              en-US:
                sandbox: \(Self.english)
              de-DE:
                sandbox: not-a-uuid
            """)
        let run = await harness.run(["validate"])
        #expect(run.code == .failure)
        #expect(run.stdout.contains("manifests/campaign.yaml:3:7: error: external message 'vendor-winback' has both 'identifiers:' and 'localizations:'"),
                "\(run.stdout)")
        #expect(run.stdout.contains("manifests/campaign.yaml:10:14: error: the sandbox identifier of external message 'vendor-winback', 'not-a-uuid', is not a UUID"),
                "\(run.stdout)")
    }
}
