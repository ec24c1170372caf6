import Basics
import CLIKit
import Crypto
import Foundation
import HTTPClient
import HTTPCore
import HTTPServer
import RetentionMessaging
import RetentionMessagingModels
import RetentionSyncCommands
import Runtime
@testable import CommandTestSupport
import Testing

/// A copy of the repository's manifests and the emulator command (small performance tests), as a
/// user going live would have them.
private struct GoLive {
    let directory: URL
    let app = CommandTestApp()
    let emulator: RunningEmulatorCommand
    static let transaction = "2000000000000042"
    static let appAppleId: Int64 = 6_450_012_345

    init() async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("golive-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: CommandHarness.repository.appendingPathComponent("manifests"),
                                         to: directory.appendingPathComponent("manifests"))
        try? FileManager.default.removeItem(at: directory.appendingPathComponent("manifests/.retention-sync"))
        emulator = try await RunningEmulatorCommand.start(
            ["--test-requests", "30", "--test-concurrency", "4", "--test-duration", "300", "--app-apple-id", String(Self.appAppleId)],
            environment: app.environment, directory: directory)
        let registered = try await admin("POST", "/emulator/transactions",
                                         #"{"originalTransactionId":"\#(Self.transaction)","productId":"com.example.stillpoint.monthly","locale":"en-US"}"#)
        #expect(registered.status == 200 || registered.status == 201, "\(String(decoding: registered.body, as: UTF8.self))")
    }

    func admin(_ method: String, _ path: String, _ body: String? = nil) async throws -> HTTPResponse {
        try await emulator.curl.send(HTTPRequest(method: method, url: URL(string: "http://127.0.0.1:\(emulator.port)\(path)")!,
                                                 headers: [(name: "Content-Type", value: "application/json")],
                                                 body: body.map { Data($0.utf8) } ?? Data()))
    }

    func pointSandbox(at url: String) async throws {
        let answer = try await admin("PUT", "/emulator/realtime-url", #"{"realtimeURL":"\#(url)"}"#)
        #expect(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self))")
    }

    /// Runs in `checkout` (default: this copy's directory), e.g. another CI runner's working copy.
    func run(_ arguments: [String], in checkout: URL? = nil) async -> (code: ExitCode, stdout: String, stderr: String) {
        let captured = CapturedConsole()
        var environment = app.environment
        // One emulator serves both environments, each under its own prefix (so production sees sandbox's pass).
        let production = arguments.contains("production")
        environment["RETENTION_SYNC_ENDPOINT"] = "http://127.0.0.1:\(emulator.port)/\(production ? "production" : "sandbox")/inApps/v1/messaging"
        let code = await CLI.run(arguments, context: CommandContext(console: captured.console, environment: environment,
                                                                    currentDirectory: checkout ?? directory))
        return (code, captured.stdout, captured.stderr)
    }

    func performanceTest() async -> (code: ExitCode, stdout: String, stderr: String) {
        await run(["performance-test", "--env", "sandbox", "--original-transaction-id", Self.transaction, "--poll-interval", "2"])
    }
}

@Suite("retention-sync performance-test", .serialized)
struct PerformanceTestCommandTests {
    @Test("a realtime server run by serve with the emulator's test root passes the performance test")
    func servePasses() async throws {
        let golive = try await GoLive()
        // The root the emulator signs under, handed out for serve --root.
        let root = try await golive.admin("GET", "/emulator/test-root.pem")
        #expect(root.status == 200)
        try root.body.write(to: golive.directory.appendingPathComponent("root.pem"))
        #expect(try X509Certificate.loadPEM(String(decoding: root.body, as: UTF8.self)).count == 1)
        let snapshot = try RuntimeSnapshot(bundleId: "com.example.stillpoint", appAppleId: GoLive.appAppleId, environment: .sandbox,
                                           localeFallbacks: [:], rules: []).sealed()
        try snapshot.encoded().write(to: golive.directory.appendingPathComponent("snapshot.json"))
        let serve = try ChildProcess(["serve", "--env", "sandbox", "--snapshot", "snapshot.json", "--root", "root.pem",
                                      "--listen", "127.0.0.1:0"],
                                     in: golive.directory, environment: ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? ""], name: "serve")
        let prefix = "serving sandbox on "
        let line = try #require(await serve.line(startingWith: prefix, within: 20), "serve did not start: \(serve.errors)")
        try await golive.pointSandbox(at: String(line.dropFirst(prefix.count)))

        let run = await golive.performanceTest()
        kill(serve.process.processIdentifier, SIGTERM)
        _ = await serve.finish(within: 10)
        #expect(run.code == .success, "\(run.stdout)\(run.stderr)")
        #expect(run.stdout.contains("config: 30 requests, at most 4 at once, over 0.3 s, each within 700 ms, 95% must succeed"))
        #expect(run.stdout.contains("PASS performance test"))
        #expect(run.stdout.contains("% (needs 95%)"))
        #expect(run.stdout.contains("p99"))
        #expect(run.stdout.contains("API calls (start and paced polls)"))
        #expect(!run.stdout.contains(GoLive.transaction), "the transaction id is never printed")
        // serve really answered every request Apple's test sent.
        #expect(serve.errors.components(separatedBy: "\n").filter { $0.contains("\"status\":200") }.count >= 30, "\(serve.errors.prefix(400))")
        _ = try await golive.emulator.stop()
    }

    @Test("a realtime server that answers 500 fails the performance test, with the reason and what it means")
    func serverErrorFails() async throws {
        let golive = try await GoLive()
        let failing = try HTTPServer { _ in HTTPResponse(status: 500, headers: [], body: Data("oops".utf8)) }
        defer { failing.stop() }
        try await golive.pointSandbox(at: failing.baseURL.absoluteString + "/apple/sandbox")

        let run = await golive.run(["performance-test", "--env", "sandbox", "--original-transaction-id", GoLive.transaction,
                                    "--poll-interval", "2", "--format", "json"])
        #expect(run.code == .failure)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run.stdout)")
        #expect(document["passed"] as? Bool == false)
        let requestId = try #require(document["requestId"] as? String)
        let text = await golive.run(["performance-test", "--env", "sandbox", "--request-id", requestId, "--poll-interval", "2"])
        #expect(text.code == .failure)
        #expect(text.stdout.contains("FAIL performance test"))
        #expect(text.stdout.contains("success rate 0% (needs 95%)"))
        #expect(text.stdout.contains("UNSUCCESSFUL_HTTP_RESPONSE_CODE × 30: not 200: answer 200 even when you have nothing to say"))
        #expect(text.stdout.contains("Fix what the failures name"))
        _ = try await golive.emulator.stop()
    }

    @Test("performance-test refuses production, where Apple does not run it")
    func productionRefused() async throws {
        let golive = try await GoLive()
        let run = await golive.run(["performance-test", "--env", "production", "--original-transaction-id", GoLive.transaction])
        #expect(run.code == .usage)
        #expect(run.stderr.contains("performance-test runs in sandbox only"))
        _ = try await golive.emulator.stop()
    }

    @Test("a refused production realtime URL is recorded in the state, so a fresh checkout sharing only the store plans it as waiting until a test passes")
    func refusalLivesInTheState() async throws {
        let golive = try await GoLive()
        let apply = await golive.run(["apply", "--env", "production", "--auto-approve"])
        #expect(apply.code == .needsAttention, "\(apply.stdout)\(apply.stderr)")
        #expect(apply.stderr.contains("attention: "), "\(apply.stderr)")
        let store = golive.directory.appendingPathComponent("manifests/.retention-sync/production-snapshot.json")
        let recorded = try String(contentsOf: store, encoding: .utf8)
        #expect(recorded.contains(#""realtime_url_awaiting_performance_test" : {"#), "\(recorded)")
        #expect(recorded.contains(#""url" : "https://retention.stillpoint.example/apple/production""#))
        #expect(!FileManager.default.fileExists(atPath: golive.directory.appendingPathComponent("manifests/.retention-sync/production-realtime-url.json").path))
        let shown = await golive.run(["state", "show", "--env", "production"])
        #expect(shown.stdout.contains("realtime URL https://retention.stillpoint.example/apple/production waits for a sandbox performance test to pass"), "\(shown.stdout)\(shown.stderr)")

        // Another runner: its own copy of the manifests, nothing of the first copy's but the state store.
        let fresh = golive.directory.appendingPathComponent("fresh-runner")
        try FileManager.default.createDirectory(at: fresh, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: CommandHarness.repository.appendingPathComponent("manifests"),
                                         to: fresh.appendingPathComponent("manifests"))
        try? FileManager.default.removeItem(at: fresh.appendingPathComponent("manifests/.retention-sync"))
        let shared = ["--state-store", store.path]
        let waiting = await golive.run(["plan", "--env", "production", "--detailed-exitcode"] + shared, in: fresh)
        #expect(waiting.code == .needsAttention, "a performance test needs a person: \(waiting.stdout)\(waiting.stderr)")
        #expect(waiting.stdout.contains("waiting for a sandbox performance test to pass"), "\(waiting.stdout)")
        let status = await golive.run(["status", "--env", "production", "--format", "json"] + shared, in: fresh)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any], "\(status.stdout)")
        #expect(report["realtime_url_awaiting_performance_test"] as? String == "https://retention.stillpoint.example/apple/production")

        let answering = try HTTPServer { _ in
            HTTPResponse(status: 200, headers: [(name: "Content-Type", value: "application/json")], body: Data("{}".utf8))
        }
        defer { answering.stop() }
        #expect(await golive.run(["apply", "--env", "sandbox", "--auto-approve"]).code == .success)
        try await golive.pointSandbox(at: answering.baseURL.absoluteString + "/apple/sandbox")
        let test = await golive.performanceTest()
        #expect(test.code == .success, "\(test.stdout)\(test.stderr)")
        #expect(test.stdout.contains("no longer waits for a performance test"), "\(test.stdout)")
        #expect(!(try String(contentsOf: store, encoding: .utf8)).contains("realtime_url_awaiting_performance_test"))

        let ready = await golive.run(["plan", "--env", "production", "--detailed-exitcode"] + shared, in: fresh)
        #expect(ready.code == .changesPending, "the realtime URL is ready again: \(ready.stdout)\(ready.stderr)")
        #expect(!ready.stdout.contains("waiting for a sandbox performance test to pass"))
        _ = try await golive.emulator.stop()
    }

    @Test("production's realtime URL waits for a passed performance test (plan and apply exit 3, attention), then apply sets it")
    func productionURLWaitsForPass() async throws {
        let golive = try await GoLive()
        let apply = await golive.run(["apply", "--env", "production", "--auto-approve"])
        #expect(apply.code == .needsAttention, "\(apply.stdout)\(apply.stderr)")
        #expect(apply.stdout.contains("retention-sync performance-test --env sandbox --original-transaction-id ID"), "\(apply.stdout)")

        let plan = await golive.run(["plan", "--env", "production", "--detailed-exitcode"])
        #expect(plan.code == .needsAttention, "a performance test needs a person: \(plan.stdout)")
        #expect(plan.stderr.contains("attention: "), "\(plan.stderr)")
        #expect(plan.stdout.contains("waiting for a sandbox performance test to pass"))
        // Every rendering gives the whole reason, and none files it under App Review.
        let markdown = await golive.run(["plan", "--env", "production", "--format", "markdown"])
        let section = try #require(markdown.stdout.components(separatedBy: "**Waiting for a sandbox performance test to pass:**").dropFirst().first,
                                   "\(markdown.stdout)")
        let line = try #require(section.split(separator: "\n").first { $0.hasPrefix("- ") })
        #expect(line.contains("Apple refused this production realtime URL until one has (403 4030026)"), "\(line)")
        let underReview = markdown.stdout.components(separatedBy: "**Blocked until App Review approves").dropFirst().first ?? ""
        #expect(!(underReview.components(separatedBy: "\n\n").first ?? "").contains("realtime URL"), "\(markdown.stdout)")
        #expect(!markdown.stdout.contains("— waiting for \n"))
        let github = await golive.run(["plan", "--env", "production", "--format", "github"])
        let annotation = try #require(github.stdout.split(separator: "\n").first { $0.hasPrefix("::warning") && $0.contains("realtime URL") },
                                      "\(github.stdout)")
        #expect(annotation.contains("performance test"), "\(annotation)")
        let status = await golive.run(["status", "--env", "production"])
        #expect(status.stdout.contains("waits for a sandbox performance test to pass"))

        let answering = try HTTPServer { _ in
            HTTPResponse(status: 200, headers: [(name: "Content-Type", value: "application/json")], body: Data("{}".utf8))
        }
        defer { answering.stop() }
        let sandbox = await golive.run(["apply", "--env", "sandbox", "--auto-approve"])
        #expect(sandbox.code == .success, "\(sandbox.stdout)\(sandbox.stderr)")
        try await golive.pointSandbox(at: answering.baseURL.absoluteString + "/apple/sandbox")
        let test = await golive.performanceTest()
        #expect(test.code == .success, "\(test.stdout)\(test.stderr)")
        // The pass is kept in the sandbox state document, next to what apply wrote.
        #expect(test.stdout.contains("recorded in the state store"), "\(test.stdout)")
        let document = try String(contentsOf: golive.directory.appendingPathComponent("manifests/.retention-sync/sandbox-snapshot.json"), encoding: .utf8)
        #expect(document.contains("\"performance_test\"") && document.contains("\"PASS\""))

        let ready = await golive.run(["plan", "--env", "production", "--detailed-exitcode"])
        #expect(ready.code == .changesPending, "the realtime URL is ready again: \(ready.stdout)")
        let after = await golive.run(["apply", "--env", "production", "--auto-approve"])
        #expect(after.code == .success, "\(after.stdout)\(after.stderr)")
        // The App's own bundle id: the emulator keeps apps apart by it.
        var credentials = golive.app.credentials
        credentials.bundleId = "com.example.stillpoint"
        let client = RetentionMessagingClient(environment: .production, credentials: credentials, transport: golive.emulator.curl,
                                              endpoint: URL(string: "http://127.0.0.1:\(golive.emulator.port)/production/inApps/v1/messaging")!,
                                              pacing: .unlimited, clock: SystemClock())
        let set = try await client.getRealtimeURL()
        #expect(set == "https://retention.stillpoint.example/apple/production")
        _ = try await golive.emulator.stop()
    }
}
