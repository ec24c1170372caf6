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
import Testing

/// `retention-sync emulator` running in-process on a free port, until `stop()`.
final class RunningEmulatorCommand: Sendable {
    let captured: CapturedConsole
    private let task: Task<ExitCode, Never>
    let curl = CurlHTTPClient(configuration: .init(connectTimeout: 5, timeout: 20, environment: [:]))
    /// Where it listens; 0 when it ended before saying so.
    let port: Int

    private init(captured: CapturedConsole, task: Task<ExitCode, Never>, port: Int) {
        self.captured = captured
        self.task = task
        self.port = port
    }

    /// Starts the command and waits until it prints where it listens (or ends early).
    static func start(_ arguments: [String], environment: [String: String],
                      directory: URL = FileManager.default.temporaryDirectory) async throws -> RunningEmulatorCommand {
        let captured = CapturedConsole()
        let context = CommandContext(console: captured.console, environment: environment, currentDirectory: directory)
        let exit = Locked<ExitCode?>(nil)
        let task = Task { () -> ExitCode in
            let code = await CLI.run(["emulator", "--port", "0"] + arguments, context: context)
            exit.set(code)
            return code
        }
        for _ in 0..<400 {
            if let line = captured.stdout.split(separator: "\n").first(where: { $0.hasPrefix("listening on http://127.0.0.1:") }),
               let port = Int(line.dropFirst("listening on http://127.0.0.1:".count).prefix { $0.isNumber }) {
                return RunningEmulatorCommand(captured: captured, task: task, port: port)
            }
            if exit.value != nil { return RunningEmulatorCommand(captured: captured, task: task, port: 0) }
            try await Task.sleep(nanoseconds: 25_000_000)
        }
        Issue.record("the emulator did not start: \(captured.stdout) \(captured.stderr)")
        return RunningEmulatorCommand(captured: captured, task: task, port: 0)
    }

    var endpoint: URL { URL(string: "http://127.0.0.1:\(port)/inApps/v1/messaging")! }

    func client(_ environment: Environment, credentials: Credentials, retry: RetryPolicy = .none) -> RetentionMessagingClient {
        RetentionMessagingClient(environment: environment, credentials: credentials, transport: curl, endpoint: endpoint,
                                 pacing: .unlimited, clock: SystemClock(), retry: retry)
    }

    func admin(_ method: String, _ path: String) async throws -> HTTPResponse {
        try await curl.send(HTTPRequest(method: method, url: URL(string: "http://127.0.0.1:\(port)\(path)")!))
    }

    /// Asks the command to stop (as SIGINT would) and returns its exit code.
    func stop() async throws -> ExitCode {
        // The answer may be lost when the server closes first; the exit code is what counts.
        if port != 0 { _ = try? await admin("POST", "/emulator/shutdown") }
        return await task.value
    }

    /// The exit code of a command that ended by itself.
    func finished() async -> ExitCode { await task.value }
}

/// An app's key, and the environment variables a user would set for it.
struct CommandTestApp {
    let key = ES256PrivateKey.generate()
    var environment: [String: String] {
        ["RETENTION_SYNC_KEY_ID": "ABC123DEFG", "RETENTION_SYNC_ISSUER_ID": "57246542-96fe-1a63-e053-0824d011072a",
         "RETENTION_SYNC_PRIVATE_KEY": key.pkcs8PEM]
    }
    var credentials: Credentials {
        Credentials(keyId: "ABC123DEFG", issuerId: "57246542-96fe-1a63-e053-0824d011072a", bundleId: "com.example.retention", privateKey: key)
    }
}
