import Basics
import CLIKit
import Crypto
import Emulator
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import HTTPCore
import RetentionMessaging
import RetentionMessagingModels
import Operations
@testable import RetentionSyncCommands
import Runtime
import Testing
import TestSupport
@testable import Views

/// A copy of the example manifests in a temp directory, and the in-process emulator standing in
/// for Apple, reached through the same commands a user runs.
final class CommandHarness: Sendable {
    static let repository = Repository.root
    static let key = ES256PrivateKey.generate()

    struct Run {
        var code: ExitCode
        var stdout: String
        var stderr: String
    }

    let root: URL
    let emulator: Emulator
    let provider: APIProvider
    let clock: VirtualClock

    /// `pacing` is the client's; the emulator enforces Apple's limits either way. `transport` stands
    /// between the clients and the emulator when given (it gets the emulator's transport and the clock).
    init(pacing: Pacing = .apple, apiAccess: Bool = true,
         transport: (@Sendable (any HTTPTransport, VirtualClock) -> any HTTPTransport)? = nil) throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("commands-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: Self.repository.appendingPathComponent("manifests"),
                                         to: root.appendingPathComponent("manifests"))
        try? FileManager.default.removeItem(at: root.appendingPathComponent("manifests/.retention-sync"))
        let clock = VirtualClock()
        self.clock = clock
        let credentials = Credentials(keyId: "TESTKEY123", issuerId: "57246542-96fe-1a63-e053-0824d011072a",
                                      bundleId: "com.example.stillpoint", privateKey: Self.key)
        let emulator = Emulator(configuration: EmulatorConfiguration(publicKey: Self.key.publicKey, productionReview: .manual,
                                                                     rateLimit: .apple, clock: clock, apiAccess: apiAccess))
        var sandbox = emulator.state(of: .sandbox)
        sandbox.performanceTests["passed"] = .pass
        emulator.restore(sandbox, in: .sandbox)
        self.emulator = emulator
        let clients = Dictionary(uniqueKeysWithValues: Environment.allCases.map { environment in
            let direct = emulator.transport(defaultEnvironment: environment)
            return (environment, RetentionMessagingClient(environment: environment, credentials: credentials,
                                                          transport: transport?(direct, clock) ?? direct, pacing: pacing,
                                                          clock: clock, retry: .none))
        })
        provider = APIProvider { environment, _, _, _ in clients[environment]! }
    }

    /// A second checkout of the repository that talks to the same (emulated) Apple.
    init(sharing other: CommandHarness) throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("commands-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: Self.repository.appendingPathComponent("manifests"),
                                         to: root.appendingPathComponent("manifests"))
        try? FileManager.default.removeItem(at: root.appendingPathComponent("manifests/.retention-sync"))
        emulator = other.emulator
        provider = other.provider
        clock = other.clock
    }

    deinit { try? FileManager.default.removeItem(at: root) }

    /// Runs `retention-sync <command> …` in-process against the emulator.
    func run(_ argv: [String], environment: [String: String] = [:]) async -> Run {
        let captured = CapturedConsole()
        let context = CommandContext(console: captured.console, environment: environment, currentDirectory: root)
        var arguments = Arguments(Array(argv.dropFirst()))
        let code: ExitCode
        do throws(CommandError) {
            switch argv[0] {
            case "plan": code = try await PlanCommand.execute(&arguments, context: context, provider: provider)
            case "apply": code = try await ApplyCommand.execute(&arguments, context: context, provider: provider)
            case "status": code = try await StatusCommand.execute(&arguments, context: context, provider: provider)
            case "import": code = try await ImportCommand.execute(&arguments, context: context, provider: provider)
            case "outcomes":
                let outcome: Result<ExitCode, CommandError>
                do {
                    outcome = .success(try await OutcomesCommand.run(&arguments, context: context, provider: provider))
                } catch let error as CommandError {
                    outcome = .failure(error)
                } catch {
                    outcome = .failure(CommandError("\(error)"))
                }
                code = try outcome.get()
            default: code = await CLI.run(argv, context: context)
            }
        } catch {
            context.console.error("error: \(error.message)")
            code = error.exitCode
        }
        return Run(code: code, stdout: captured.stdout, stderr: captured.stderr)
    }

    func file(_ path: String) -> URL { root.appendingPathComponent(path) }

    /// Removes every manifest file of the example app, so a test declares its own; returns the folder.
    @discardableResult
    func clearManifests() throws -> URL {
        let directory = file("manifests")
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) where name.hasSuffix(".yaml") {
            try FileManager.default.removeItem(at: directory.appendingPathComponent(name))
        }
        return directory
    }

    /// Replaces the manifests with `files` (name → text).
    func writeManifests(_ files: [String: String]) throws {
        let directory = try clearManifests()
        for (name, text) in files {
            try (text + "\n").write(to: directory.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
    }

    /// Rewrites a text in a manifest file, as an edit in a pull request would.
    func edit(_ path: String, replacing old: String, with new: String) throws {
        let url = file(path)
        let text = try String(contentsOf: url, encoding: .utf8)
        #expect(text.contains(old))
        try text.replacingOccurrences(of: old, with: new).write(to: url, atomically: true, encoding: .utf8)
    }
}

/// A `retention-sync` process started from the binary `swift test` builds, with its output in
/// files (no pipe to fill up) and every wait bounded; it is killed if still running when released.
final class ChildProcess: Sendable {
    let process = Process()
    let stdout: URL
    let stderr: URL

    /// The executable beside the test bundle (`.build/<triple>/<configuration>/retention-sync`): on
    /// Linux the bundle URL is that directory, on macOS the `.xctest` bundle inside it.
    static func binary() throws -> URL {
        let candidates = [Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent()]
        let found = candidates.map { $0.appendingPathComponent("retention-sync") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
        return try #require(found, "the retention-sync executable next to the test bundle (\(Bundle.main.bundleURL.path))")
    }

    init(_ arguments: [String], in directory: URL, environment: [String: String], name: String) throws {
        stdout = directory.appendingPathComponent("\(name).stdout")
        stderr = directory.appendingPathComponent("\(name).stderr")
        _ = FileManager.default.createFile(atPath: stdout.path, contents: nil)
        _ = FileManager.default.createFile(atPath: stderr.path, contents: nil)
        process.executableURL = try Self.binary()
        process.arguments = arguments
        process.currentDirectoryURL = directory
        process.environment = environment
        process.standardOutput = try FileHandle(forWritingTo: stdout)
        process.standardError = try FileHandle(forWritingTo: stderr)
        try process.run()
    }

    deinit { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }

    var output: Data { (try? Data(contentsOf: stdout)) ?? Data() }
    var errors: String { (try? String(contentsOf: stderr, encoding: .utf8)) ?? "" }

    /// The exit status, or nil when the process was still running after `seconds` (it is then killed).
    func finish(within seconds: Double) async -> Int32? {
        for _ in 0..<Int(seconds * 50) where process.isRunning { try? await Task.sleep(nanoseconds: 20_000_000) }
        guard !process.isRunning else {
            kill(process.processIdentifier, SIGKILL)
            return nil
        }
        return process.terminationStatus
    }

    /// Polls standard output for the first line starting with `prefix`, for at most `seconds`.
    /// It polls on a thread of its own: a test that acts on the line (a signal mid-apply) must see it
    /// when it appears, not when a busy concurrency pool next runs this task.
    func line(startingWith prefix: String, within seconds: Double) async -> String? {
        (try? await onOwnThread { [self] () -> String? in
            for _ in 0..<Int(seconds * 200) {
                let text = String(decoding: output, as: UTF8.self)
                if let line = text.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }) { return String(line) }
                if !process.isRunning { return nil }
                usleep(5_000)
            }
            return nil
        }) ?? nil
    }
}

/// `retention-sync emulator --port 0 --state FILE` in its own process.
struct EmulatorProcess {
    let child: ChildProcess
    let endpoint: String

    static func start(in directory: URL, environment: [String: String], name: String,
                      arguments: [String] = []) async throws -> EmulatorProcess {
        let child = try ChildProcess(["emulator", "--port", "0", "--state", "emulator-state.json"] + arguments,
                                     in: directory, environment: environment, name: name)
        let prefix = "listening on http://127.0.0.1:"
        let line = try #require(await child.line(startingWith: prefix, within: 20), "the emulator did not start: \(child.errors)")
        let port = try #require(Int(line.dropFirst(prefix.count).prefix { $0.isNumber }))
        return EmulatorProcess(child: child, endpoint: "http://127.0.0.1:\(port)")
    }

    /// Stops it as Ctrl-C would, so it writes its state file; kills it if that takes too long.
    func stop() async -> Int32? {
        child.process.interrupt()
        return await child.finish(within: 20)
    }
}
