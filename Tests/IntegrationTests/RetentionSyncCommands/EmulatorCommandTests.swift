import Basics
import CLIKit
import Crypto
import Emulator
import Foundation
import TestSupport
import HTTPClient
import HTTPCore
import RetentionMessaging
import RetentionMessagingModels
import RetentionSyncCommands
@testable import CommandTestSupport
import Testing

@Suite("retention-sync emulator")
struct EmulatorCommandTests {
    let message = "00000000-0000-4000-8000-000000000001"
    let plain = UploadMessageRequestBody(header: "Stay", body: "It gets better.")

    func temporaryDirectory() throws -> URL { try temporaryFolder("emulator-command") }

    @Test("a client for production refuses the sandbox endpoint of an emulator, and every admin answer names its environment")
    func environmentsCannotMix() async throws {
        let app = CommandTestApp()
        let running = try await RunningEmulatorCommand.start([], environment: app.environment)
        let base = URL(string: "http://127.0.0.1:\(running.port)/sandbox/inApps/v1/messaging")!
        let production = RetentionMessagingClient(environment: .production, credentials: app.credentials, transport: running.curl,
                                                  endpoint: base, pacing: .unlimited, clock: SystemClock(), retry: .none)
        do {
            try await production.uploadMessage(identifier: message, body: plain)
            Issue.record("a production client wrote through a sandbox endpoint")
        } catch {
            #expect("\(error)".contains("is an emulator serving its sandbox environment, but this run is for production"))
        }
        #expect(try await running.admin("GET", "/emulator/state").header("X-Emulator-Environment") == "sandbox")
        #expect(try await running.admin("GET", "/production/emulator/state").header("X-Emulator-Environment") == "production")
        #expect(try await running.admin("POST", "/production/emulator/approve-all").header("X-Emulator-Environment") == "production")
        #expect(try await running.stop() == .success)
    }

    @Test("it prints where it listens and its admin routes, serves the API, and stops cleanly")
    func listens() async throws {
        let app = CommandTestApp()
        let running = try await RunningEmulatorCommand.start([], environment: app.environment)
        #expect(running.captured.stdout.contains("listening on http://127.0.0.1:\(running.port) (sandbox)"))
        #expect(running.captured.stdout.contains("API endpoint: http://127.0.0.1:\(running.port) (sandbox and production: each command's --env picks"))
        #expect(running.captured.stdout.contains("/emulator/messages/{id}/approve|reject"))
        #expect(running.captured.stdout.contains("GET  http://127.0.0.1:\(running.port)/sandbox/emulator/state"))

        let client = running.client(.sandbox, credentials: app.credentials)
        try await client.uploadMessage(identifier: message, body: plain)
        #expect(try await client.getMessageList().messageIdentifiers.map(\.messageState) == [.approved])

        #expect(try await running.stop() == .success)
        #expect(running.captured.stdout.contains("stopping (POST /emulator/shutdown)"))
        #expect(running.captured.stderr.isEmpty)
    }

    @Test("in production with manual review, an upload stays PENDING until the admin route approves it")
    func productionReview() async throws {
        let app = CommandTestApp()
        let running = try await RunningEmulatorCommand.start(["--environment", "production", "--review", "manual"], environment: app.environment)
        #expect(running.captured.stdout.contains("(production)"))
        let client = running.client(.production, credentials: app.credentials)
        try await client.uploadMessage(identifier: message, body: plain)
        #expect(try await client.getMessageList().messageIdentifiers.map(\.messageState) == [.pending])
        #expect(try await running.admin("POST", "/emulator/messages/\(message)/approve").status == 200)
        #expect(try await client.getMessageList().messageIdentifiers.map(\.messageState) == [.approved])
        _ = try await running.stop()
    }

    @Test("with --state, content survives a restart, and the file is written after every change")
    func stateAcrossRestarts() async throws {
        let app = CommandTestApp()
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try await RunningEmulatorCommand.start(["--state", "emulator.json"], environment: app.environment, directory: directory)
        try await first.client(.sandbox, credentials: app.credentials).uploadMessage(identifier: message, body: plain)
        let written = try EmulatorStateFile.read(from: directory.appendingPathComponent("emulator.json"))
        #expect(written.sandbox.messages[message]?.body == plain)
        #expect(try await first.stop() == .success)
        // The state, and the test chain whose root serve trusts (kept so a restart keeps it).
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == ["emulator.json", "emulator.json.test-chain.pem"])

        let second = try await RunningEmulatorCommand.start(["--state", "emulator.json"], environment: app.environment, directory: directory)
        #expect(second.captured.stdout.contains("(1 messages, 0 images in sandbox)"))
        let again = await apiError { try await second.client(.sandbox, credentials: app.credentials).uploadMessage(identifier: message, body: plain) }
        #expect(again?.errorCode == 4090001)
        _ = try await second.stop()
    }

    @Test("a public key file verifies tokens without the private key in the environment")
    func publicKeyFile() async throws {
        let app = CommandTestApp()
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try app.key.publicKey.spkiPEM.write(to: directory.appendingPathComponent("key.pub"), atomically: true, encoding: .utf8)
        let running = try await RunningEmulatorCommand.start(["--public-key", "key.pub", "--bundle-id", "com.example.retention"],
                                                             environment: [:], directory: directory)
        #expect(try await running.client(.sandbox, credentials: app.credentials).getImageList().imageIdentifiers.isEmpty)
        let stranger = CommandTestApp()
        let refused = await apiError { _ = try await running.client(.sandbox, credentials: stranger.credentials).getImageList() }
        #expect(refused?.status == 401)
        _ = try await running.stop()
    }

    @Test("with no key at all, it starts with a throwaway key and prints the export lines that make a client use it")
    func noKey() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let running = try await RunningEmulatorCommand.start([], environment: ["TMPDIR": directory.path])
        // The export lines follow the listening line; give the command a moment to print them.
        for _ in 0..<200 where !running.captured.stdout.contains("unset ") {
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        let lines = running.captured.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        var exported: [String: String] = [:]
        for line in lines where line.hasPrefix("export ") {
            let assignment = line.dropFirst("export ".count).split(separator: "=", maxSplits: 1)
            exported[String(assignment[0])] = String(assignment[1])
        }
        #expect(Set(exported.keys) == ["RETENTION_SYNC_PRIVATE_KEY_FILE", "RETENTION_SYNC_KEY_ID", "RETENTION_SYNC_ISSUER_ID",
                                       "RETENTION_SYNC_ENDPOINT"])
        // One base URL: the client's --env picks the environment.
        #expect(exported["RETENTION_SYNC_ENDPOINT"] == "http://127.0.0.1:\(running.port)")
        let keyFile = try #require(exported["RETENTION_SYNC_PRIVATE_KEY_FILE"])
        #expect(keyFile.hasPrefix(directory.path))
        let permissions = try FileManager.default.attributesOfItem(atPath: keyFile)[.posixPermissions] as? Int
        #expect(permissions == 0o600)
        #expect(!running.captured.stdout.contains("BEGIN PRIVATE KEY"))

        // A client configured exactly by those lines is accepted.
        let credentials = try Credentials.fromEnvironment(exported, bundleId: "com.example.retention")
        #expect(try await running.client(.sandbox, credentials: credentials).getMessageList().messageIdentifiers.isEmpty)
        let stranger = await apiError { _ = try await running.client(.sandbox, credentials: CommandTestApp().credentials).getMessageList() }
        #expect(stranger?.status == 401)
        _ = try await running.stop()
        #expect(!FileManager.default.fileExists(atPath: keyFile), "the throwaway key outlives the emulator")
        #expect(!FileManager.default.fileExists(atPath: URL(fileURLWithPath: keyFile).deletingLastPathComponent().path))
    }

    @Test("--state in a directory that does not exist fails at start and names the directory")
    func stateInMissingDirectory() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let running = try await RunningEmulatorCommand.start(["--state", "missing/emulator.json"], environment: CommandTestApp().environment,
                                                             directory: directory)
        #expect(await running.finished() != .success)
        #expect(running.captured.stderr.contains(directory.appendingPathComponent("missing").path))
        #expect(running.captured.stderr.contains("mkdir -p"))
        #expect(running.captured.stderr.hasSuffix("\n"))
    }

    @Test("bad option values are usage errors", arguments: [
        ["--environment", "staging"], ["--review", "sometimes"], ["--rate-limit", "fast"], ["--drops", "2"], ["--port", "http"],
        ["--latency", "inf"], ["--latency", "-1"], ["--latency", "1e308"],
    ])
    func badOptions(arguments: [String]) async throws {
        let running = try await RunningEmulatorCommand.start(arguments, environment: CommandTestApp().environment)
        #expect(await running.finished() == .usage)
        #expect(running.captured.stderr.hasPrefix("error: "))
    }

    @Test("--help lists every option and the admin routes")
    func help() async {
        let captured = CapturedConsole()
        let context = CommandContext(console: captured.console, environment: [:], currentDirectory: FileManager.default.temporaryDirectory)
        #expect(await CLI.run(["emulator", "--help"], context: context) == .success)
        for option in ["--port", "--environment", "--review", "--rate-limit", "--state", "--public-key", "--verbose", "/emulator/approve-all"] {
            #expect(captured.stdout.contains(option))
        }
    }
}
