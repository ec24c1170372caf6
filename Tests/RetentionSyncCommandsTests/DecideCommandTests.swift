import CLIKit
import Crypto
import Foundation
import TestSupport
import RetentionSyncCommands
import Testing

@Suite("retention-sync decide")
struct DecideCommandTests {
    static let fixtures = Repository.url("fixtures/runtime")

    struct Run {
        var code: ExitCode
        var stdout: String
        var stderr: String
    }

    /// Runs `retention-sync decide …` in-process from the fixtures directory.
    func decide(_ arguments: [String], environment: [String: String] = [:]) async -> Run {
        let captured = CapturedConsole()
        let context = CommandContext(console: captured.console, environment: environment, currentDirectory: Self.fixtures)
        let code = await CLI.run(["decide"] + arguments, context: context)
        return Run(code: code, stdout: captured.stdout, stderr: captured.stderr)
    }

    func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test("a monthly en-US subscriber in the first half of the price test is shown message A")
    func printsMessageResponse() async {
        let run = await decide(["--snapshot", "snapshot.json", "--request", "request-monthly-en-US.json"])
        #expect(run.code == .success)
        #expect(run.stdout == """
        {
          "message" : {
            "messageIdentifier" : "00000000-0000-5000-8000-000000000006"
          }
        }

        """)
        #expect(run.stderr.isEmpty)
    }

    @Test("a yearly subscriber is offered the monthly plan")
    func printsAlternateProduct() async {
        let run = await decide(["--snapshot", "snapshot.json", "--request", "request-yearly-en-US.json"])
        #expect(run.code == .success)
        #expect(run.stdout == """
        {
          "alternateProduct" : {
            "billingPlanType" : "MONTHLY",
            "messageIdentifier" : "00000000-0000-5000-8000-000000000001",
            "productId" : "com.example.monthly"
          }
        }

        """)
    }

    @Test("a customer in the holdout gets no answer, and is told Apple shows the default")
    func printsNoAnswer() async {
        let run = await decide(["--snapshot", "snapshot.json", "--request", "request-monthly-holdout.json"])
        #expect(run.code == .success)
        #expect(run.stdout == "no answer: rule price-test/holdout answers none (Apple shows the default message)\n")
    }

    @Test("without credentials a promotional offer is an unsigned preview, and stderr says so")
    func previewsOfferWithoutKeys() async throws {
        let run = await decide(["--snapshot", "snapshot.json", "--request", "request-monthly-de-AT.json"])
        #expect(run.code == .success)
        let offer = try #require(try json(run.stdout)["promotionalOffer"] as? [String: Any])
        #expect(offer["messageIdentifier"] as? String == "00000000-0000-5000-8000-000000000002")
        #expect(offer["promotionalOfferSignatureV2"] as? String == "<unsigned preview: set RETENTION_SYNC_* credentials to sign>")
        #expect(run.stderr.contains("unsigned preview"))
        #expect(run.stderr.contains("RETENTION_SYNC_PRIVATE_KEY_FILE"))
    }

    @Test("with credentials the offer is signed with the key, which is never printed")
    func signsOfferWithKeys() async throws {
        let key = ES256PrivateKey.generate()
        let run = await decide(["--snapshot", "snapshot.json", "--request", "request-monthly-de-AT.json"], environment: [
            "RETENTION_SYNC_KEY_ID": "ABC123DEFG", "RETENTION_SYNC_ISSUER_ID": "57246542-96fe-1a63-e053-0824d011072a",
            "RETENTION_SYNC_PRIVATE_KEY": key.pkcs8PEM,
        ])
        #expect(run.code == .success)
        let offer = try #require(try json(run.stdout)["promotionalOffer"] as? [String: Any])
        let jws = try JWS.decode(try #require(offer["promotionalOfferSignatureV2"] as? String))
        #expect(jws.verify(with: key.publicKey))
        let claims = try json(String(decoding: jws.payloadJSON, as: UTF8.self))
        #expect(claims["bid"] as? String == "com.example.app")
        #expect(claims["transactionId"] as? String == "2000000000000001")
        #expect(run.stderr.isEmpty)
        let body = key.pkcs8PEM.split(separator: "\n").dropFirst().first.map(String.init) ?? "-----"
        #expect(!run.stdout.contains(body) && !run.stderr.contains(body))
    }

    @Test("incomplete credentials are an error naming what is missing")
    func incompleteCredentials() async {
        let run = await decide(["--snapshot", "snapshot.json", "--request", "request-monthly-de-AT.json"],
                               environment: ["RETENTION_SYNC_KEY_ID": "ABC123DEFG"])
        #expect(run.code == .failure)
        #expect(run.stderr.contains("RETENTION_SYNC_ISSUER_ID"))
        #expect(run.stdout.isEmpty)
    }

    @Test("--explain lists why each earlier rule did not answer, then the answer")
    func explains() async {
        let run = await decide(["--snapshot", "snapshot.json", "--request", "request-yearly-en-US.json", "--explain"])
        #expect(run.code == .success)
        #expect(run.stdout.hasPrefix("""
        matched winback/yearly-to-monthly: product com.example.yearly, locale en-US → alternateProduct 'try-monthly'

        {
        """))
        let holdout = await decide(["--snapshot", "snapshot.json", "--request", "request-monthly-holdout.json", "--explain"])
        #expect(holdout.stdout.contains("skipped winback/yearly-to-monthly: product com.example.monthly not in [com.example.yearly]\n"))
        #expect(holdout.stdout.contains("skipped price-test/b: bucket 8558 not in [5000, 8000) of split 'price-test'\n"))
        #expect(holdout.stdout.hasSuffix("no answer: rule price-test/holdout answers none (Apple shows the default message)\n"))
    }

    @Test("a signed payload from Apple's chain is verified with --root, then decided")
    func decidesSignedPayload() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("decide-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificates = try ["leaf.pem", "intermediate.pem", "root.pem"].map {
            try #require(try X509Certificate.load(contentsOfFile: Self.fixtures.appendingPathComponent($0).path).first)
        }
        let header = JWSHeader(alg: "ES256", x5c: certificates.map { Base64.encode($0.der) })
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let payload = try Data(contentsOf: Self.fixtures.appendingPathComponent("request-yearly-en-US.json"))
        let jws = try JWS.sign(headerJSON: Array(try encoder.encode(header)), payloadJSON: Array(payload),
                               key: try ES256PrivateKey(contentsOfFile: Self.fixtures.appendingPathComponent("leaf.key").path))
        let file = directory.appendingPathComponent("body.json")
        try Data(#"{"signedPayload":"\#(jws)"}"#.utf8).write(to: file)

        let run = await decide(["--snapshot", "snapshot.json", "--signed-payload", file.path, "--root", "root.pem"])
        #expect(run.code == .success)
        #expect(run.stdout.contains(#""productId" : "com.example.monthly""#))

        let untrusted = await decide(["--snapshot", "snapshot.json", "--signed-payload", file.path, "--root", "other-root.pem"])
        #expect(untrusted.code == .failure)
        #expect(untrusted.stderr.contains("\(file.path): the signed payload's certificates do not chain to a trusted root"))
        #expect(untrusted.stdout.isEmpty)

        let noRoot = await decide(["--snapshot", "snapshot.json", "--signed-payload", file.path])
        #expect(noRoot.code == .usage)
        #expect(noRoot.stderr.contains("Apple Root CA - G3"))
    }

    @Test("a corrupt snapshot is refused with the file and the reason")
    func corruptSnapshot() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("decide-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let text = try String(contentsOf: Self.fixtures.appendingPathComponent("snapshot.json"), encoding: .utf8)
        let corrupt = directory.appendingPathComponent("snapshot.json")
        try Data(text.replacingOccurrences(of: "de-winback-50", with: "de-winback-99").utf8).write(to: corrupt)
        let run = await decide(["--snapshot", corrupt.path, "--request", "request-monthly-en-US.json"])
        #expect(run.code == .failure)
        #expect(run.stderr.hasPrefix("error: \(corrupt.path): the runtime snapshot is corrupt"))
    }

    @Test("without --snapshot, the snapshot is the one the App manifest declares for --env")
    func snapshotFromManifests() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("decide-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent(".retention-sync"),
                                                withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.copyItem(at: Self.fixtures.appendingPathComponent("snapshot.json"),
                                         to: directory.appendingPathComponent(".retention-sync/production-snapshot.json"))
        try Data("""
        apiVersion: retention-sync/v1
        kind: App
        bundleId: com.example.app
        appAppleId: 1234567890
        environments:
          sandbox: {}
          production:
            snapshotPath: .retention-sync/production-snapshot.json
        products:
          - id: com.example.monthly
            locales: [en-US]
        """.utf8).write(to: directory.appendingPathComponent("app.yaml"))
        let request = Self.fixtures.appendingPathComponent("request-monthly-en-US.json").path

        let run = await decide(["--manifests", directory.path, "--env", "production", "--request", request])
        #expect(run.code == .success, "\(run.stderr)")
        #expect(run.stdout.contains("00000000-0000-5000-8000-000000000006"))

        let sandbox = await decide(["--manifests", directory.path, "--env", "sandbox", "--request", request])
        #expect(sandbox.code == .failure)
        #expect(sandbox.stderr.contains("app.yaml:6:3: the App declares no snapshotPath for sandbox"))

        let ambiguous = await decide(["--manifests", directory.path, "--request", request])
        #expect(ambiguous.code == .usage)
        #expect(ambiguous.stderr.contains("--env sandbox or production"))
    }

    @Test("missing or conflicting inputs are usage errors", arguments: [
        ["--snapshot", "snapshot.json"],
        ["--snapshot", "snapshot.json", "--env", "production", "--request", "request-monthly-en-US.json"],
        ["--snapshot", "snapshot.json", "--request", "request-monthly-en-US.json", "--signed-payload", "x.jws"],
        ["--snapshot", "snapshot.json", "--request", "request-monthly-en-US.json", "--verbose"],
    ])
    func usageErrors(_ arguments: [String]) async {
        let run = await decide(arguments)
        #expect(run.code == .usage)
        #expect(run.stderr.hasPrefix("error: "))
    }
}
