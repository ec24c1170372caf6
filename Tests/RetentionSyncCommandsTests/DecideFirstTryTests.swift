import CLIKit
import Crypto
import Emulator
import Foundation
import TestSupport
import RetentionMessagingModels
@testable import RetentionSyncCommands
@testable import CommandTestSupport
import Testing

/// `decide` as a new user first tries it: on the example app's own request samples, with the texts
/// the customer reads, and with the key in the same form `apply` accepts.
@Suite("retention-sync decide, first try")
struct DecideFirstTryTests {
    /// Publishes production for the example app through the emulator (upload, App Review approves,
    /// publish), so `decide --manifests manifests --env production` has a snapshot to answer from.
    func publishedHarness(editing edit: ((CommandHarness) throws -> Void)? = nil) async throws -> CommandHarness {
        let harness = try CommandHarness()
        try edit?(harness)
        #expect(await harness.run(["apply", "--env", "production"]).code == .success)
        harness.emulator.approveAllPending(in: .production)
        #expect(await harness.run(["apply", "--env", "production"]).code == .success)
        return harness
    }

    func decide(_ harness: CommandHarness, _ arguments: [String], environment: [String: String] = [:]) async -> FirstContactTests.Run {
        let captured = CapturedConsole()
        let context = CommandContext(console: captured.console, environment: environment, currentDirectory: harness.root)
        let code = await CLI.run(["decide", "--manifests", "manifests", "--env", "production"] + arguments, context: context)
        return .init(code: code, stdout: captured.stdout, stderr: captured.stderr)
    }

    @Test("the example app's request samples each get the answer its rules promise, with the text shown")
    func exampleRequestsMatchTheExampleRules() async throws {
        let harness = try await publishedHarness()
        let expectations: [(file: String, answer: String, text: String)] = [
            ("monthly-en-US-upsell", "\"alternateProduct\"", "header: Save 40% with a yearly plan"),
            ("monthly-en-US-control", "\"message\"", "header: Before you go"),
            ("monthly-de-AT-control", "\"message\"", "(de-DE, version"),
            ("yearly-en-US-spring", "\"promotionalOffer\"", "header: Stay for half price"),
            ("yearly-ja-summer", "no answer: rule cancel-flow/everyone-else answers none", ""),
        ]
        let samples = try FileManager.default.contentsOfDirectory(atPath: harness.file("manifests/requests").path).sorted()
        #expect(samples == expectations.map { "\($0.file).json" }.sorted())
        for expected in expectations {
            let run = await decide(harness, ["--request", "manifests/requests/\(expected.file).json", "--explain"])
            #expect(run.code == .success, "\(expected.file): \(run.stderr)")
            #expect(run.stdout.contains("matched cancel-flow/"), "\(expected.file)")
            #expect(run.stdout.contains(expected.answer), "\(expected.file): \(run.stdout)")
            if !expected.text.isEmpty { #expect(run.stdout.contains(expected.text), "\(expected.file): \(run.stdout)") }
        }
    }

    @Test("--explain shows the chosen message's header, body, bullets and image text in the request's locale")
    func explainShowsWhatTheCustomerReads() async throws {
        let harness = try await publishedHarness { harness in
            try harness.edit("manifests/cancel-flow.yaml", replacing: "response: { message: before-you-go }",
                             with: "response: { message: everyday-calm }")
        }
        let run = await decide(harness, ["--request", "manifests/requests/monthly-en-US-control.json", "--explain"])
        #expect(run.code == .success)
        #expect(run.stdout.contains("The customer sees message 'everyday-calm' (en-US, version "))
        #expect(run.stdout.contains("  image:  The sun rising over quiet blue hills\n"))
        #expect(run.stdout.contains("  • Guided sessions from 3 to 20 minutes  (icon: Three rings, like a slow breath)\n"))
        #expect(run.stdout.contains("  • Your streak and progress, kept safe  (icon: Five rising bars)\n"))

        let german = await decide(harness, ["--request", "manifests/requests/monthly-de-AT-control.json", "--explain"])
        #expect(german.stdout.contains("The customer sees message 'everyday-calm' (de-DE, version "))
        #expect(german.stdout.contains("  • Geführte Sitzungen von 3 bis 20 Minuten  (icon: Drei Ringe wie ein ruhiger Atemzug)\n"))
    }

    @Test("a PEM key with literal \\n (as CI secret stores keep it) signs offers in decide, as it does in apply")
    func oneLinePEMSigns() async throws {
        let key = ES256PrivateKey.generate()
        let oneLine = key.pkcs8PEM.trimmingCharacters(in: .newlines).replacingOccurrences(of: "\n", with: "\\n")
        let fixtures = Repository.url("fixtures/runtime")
        let captured = CapturedConsole()
        let code = await CLI.run(["decide", "--snapshot", "snapshot.json", "--request", "request-monthly-de-AT.json"],
                                 context: CommandContext(console: captured.console, environment: [
                                     "RETENTION_SYNC_KEY_ID": "ABC123DEFG", "RETENTION_SYNC_ISSUER_ID": "57246542-96fe-1a63-e053-0824d011072a",
                                     "RETENTION_SYNC_PRIVATE_KEY": oneLine,
                                 ], currentDirectory: fixtures))
        #expect(code == .success, "\(captured.stderr)")
        let body = try #require(try JSONSerialization.jsonObject(with: Data(captured.stdout.utf8)) as? [String: Any])
        let offer = try #require(body["promotionalOffer"] as? [String: Any])
        let jws = try JWS.decode(try #require(offer["promotionalOfferSignatureV2"] as? String))
        #expect(jws.verify(with: key.publicKey))
        #expect(captured.stderr.isEmpty)
    }

    @Test("decide reports a malformed issuer id the way apply does")
    func sameCredentialRulesAsApply() async throws {
        let fixtures = Repository.url("fixtures/runtime")
        let captured = CapturedConsole()
        let code = await CLI.run(["decide", "--snapshot", "snapshot.json", "--request", "request-monthly-de-AT.json"],
                                 context: CommandContext(console: captured.console, environment: [
                                     "RETENTION_SYNC_KEY_ID": "ABC123DEFG", "RETENTION_SYNC_ISSUER_ID": "not a uuid!",
                                     "RETENTION_SYNC_PRIVATE_KEY": ES256PrivateKey.generate().pkcs8PEM,
                                 ], currentDirectory: fixtures))
        #expect(code == .failure)
        #expect(captured.stderr.contains("RETENTION_SYNC_ISSUER_ID is malformed"))
    }
}
