import CLIKit
import Foundation
import HTTPCore
import HTTPClient
import HTTPServer
import RetentionMessagingModels
@testable import RetentionSyncCommands
import Runtime
import StateLocations
import StateStore
@testable import CommandTestSupport
import Testing
import TestSupport

/// `decide --manifests` previews what `serve --manifests` answers: both find the snapshot through
/// the same resolution, from whatever store the App declares, an S3 bucket included.
@Suite("decide reads the snapshot serve would")
struct DecideFromStoreTests {
    static let runtimeFixtures = CommandHarness.repository.appendingPathComponent("fixtures/runtime")

    /// A manifest directory whose App keeps its state under `stateStore`.
    static func manifests(stateStore: String) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("decide-store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data("""
        apiVersion: retention-sync/v1
        kind: App
        bundleId: com.example.app
        appAppleId: 1234567890
        environments:
          production:
            stateStore: \(stateStore)
        products:
          - id: com.example.monthly
            locales: [en-US]
        """.utf8).write(to: directory.appendingPathComponent("app.yaml"))
        return directory
    }

    func run(_ arguments: [String], in directory: URL, environment: [String: String]) async -> (ExitCode, String, String) {
        let captured = CapturedConsole()
        let code = await CLI.run(arguments, context: CommandContext(console: captured.console, environment: environment,
                                                                    currentDirectory: directory))
        return (code, captured.stdout, captured.stderr)
    }

    @Test("decide --manifests answers from the App's S3 stateStore, with read-only credentials")
    func decideFromS3() async throws {
        let server = try await MotoServer.start()
        defer { server.stop() }
        let directory = try Self.manifests(stateStore: "s3://\(server.bucket)/apps/example")
        defer { try? FileManager.default.removeItem(at: directory) }

        let request = Self.runtimeFixtures.appendingPathComponent("request-monthly-en-US.json").path
        let before = await run(["decide", "--manifests", ".", "--env", "production", "--request", request], in: directory,
                               environment: server.environment(server.reader))
        #expect(before.0 == .failure)
        #expect(before.2.contains("s3://\(server.bucket)/apps/example/production.json: the state document publishes no snapshot yet"),
                "\(before.2)")

        let snapshot = try RuntimeSnapshot.load(from: Data(contentsOf: Self.runtimeFixtures.appendingPathComponent("snapshot.json")))
        let owner = StateOwner(bundleId: "com.example.app", appAppleId: 1_234_567_890, environment: .production)
        let store = try StateStores.open(.s3(bucket: server.bucket, key: "apps/example"), owner: owner,
                                         environment: server.environment(server.writer), transport: CurlHTTPClient())
        var document = StateDocument(owner: owner)
        document.snapshot = snapshot
        _ = try await store.write(document, condition: .createOnly)

        let after = await run(["decide", "--manifests", ".", "--env", "production", "--request", request], in: directory,
                              environment: server.environment(server.reader))
        #expect(after.0 == .success, "\(after.2)")
        #expect(after.1.contains("00000000-0000-5000-8000-000000000006"))
    }

    @Test("serve and decide resolve the same place for the same manifests, environment and store")
    func sameResolution() throws {
        let directory = try Self.manifests(stateStore: "s3://team-state/apps/example")
        defer { try? FileManager.default.removeItem(at: directory) }
        let context = CommandContext(console: CapturedConsole().console, environment: [:], currentDirectory: directory)

        var serveArguments = try Arguments(["--env", "production", "--root", "r.pem", "--manifests", "."], options: ServeCommand.options)
        let serve = try ServeCommand.parse(&serveArguments, context: context)
        var decideArguments = try Arguments(["--env", "production", "--request", "r.json", "--manifests", "."],
                                            options: DecideCommand.options)
        let decide = try DecideCommand.parse(&decideArguments, context: context)

        let served = try serve.sources.resolve(serve.environments, context: context)
        let previewed = try decide.sources.resolve(decide.environment.map { [$0] }, context: context)
        let owner = StateOwner(bundleId: "com.example.app", appAppleId: 1_234_567_890, environment: .production)
        #expect(served.map(\.place) == [.store(.s3(bucket: "team-state", key: "apps/example"), owner)])
        #expect(previewed.map(\.place) == served.map(\.place))
    }
}
