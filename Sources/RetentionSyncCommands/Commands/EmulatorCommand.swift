import Basics
import CLIKit
import Crypto
import Dispatch
import Emulator
import Foundation
import HTTPCore
import RetentionMessaging
import RetentionMessagingModels
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

struct EmulatorCommand: ParsedCommand {
    static let name = "emulator"
    static let summary = "Run the API emulator on loopback"
    static let defaultPort = 8089
    static let port = Option("--port", value: "N", of: Int.self, default: defaultPort, help: ["Port to listen on, 0 for a free one"])
    static let env = Option("--env", aliases: ["--environment"], value: "ENV", of: Environment.self, default: .sandbox,
                            help: ["For admin routes without /sandbox/ or /production/, and API calls",
                                   "naming none (also --environment ENV)"])
    static let review = Option("--review", value: "auto|manual", choices: ReviewMode.allCases.map(\.rawValue), default: "manual", help: [
        "Production review: manual keeps uploads PENDING until an admin call",
        "approves them; sandbox always approves at once",
    ])
    static let rateLimit = Option("--rate-limit", value: "apple|off", of: RateLimitChoice.self, default: .off,
                                  help: ["Enforce Apple's hourly budgets with 429 and Retry-After"])
    static let state = Option("--state", value: "FILE", completion: .file,
                              help: ["Keep state in FILE across restarts (written after every change)"])
    static let publicKey = Option("--public-key", value: "FILE", completion: .file, help: [
        "SPKI PEM public key to verify tokens with; without it, the key is",
        "derived from RETENTION_SYNC_PRIVATE_KEY_FILE or RETENTION_SYNC_PRIVATE_KEY;",
        "with neither, a throwaway key is generated and its export lines printed",
    ])
    static let testRequests = Option("--test-requests", value: "N", of: Int.self, default: PerformanceTestSettings.default.totalRequests,
                                     help: ["Requests per sandbox performance test"])
    static let testConcurrency = Option("--test-concurrency", value: "N", of: Int.self,
                                        default: PerformanceTestSettings.default.maxConcurrentRequests,
                                        help: ["Performance-test requests in flight at once"])
    static let testDuration = Option("--test-duration", value: "MS", of: Int64.self, default: PerformanceTestSettings.default.totalDuration,
                                     help: ["Milliseconds a performance test spreads its requests over"])
    static let defaultAppAppleId: Int64 = 0
    static let appAppleId = Option("--app-apple-id", value: "N", of: Int64.self, default: defaultAppAppleId,
                                   help: ["appAppleId in the performance test's signed requests"])
    static let caBundle = Option("--ca-bundle", value: "FILE", completion: .file, help: [
        "PEM authorities an https:// realtime URL is verified against (default:",
        "the system's); http:// is allowed on loopback only",
    ])
    static let keyId = Option("--key-id", value: "ID",
                              help: ["Accept only tokens with this kid (default: RETENTION_SYNC_KEY_ID if set)"])
    static let issuerId = Option("--issuer-id", value: "ID",
                                 help: ["Accept only tokens with this iss (default: RETENTION_SYNC_ISSUER_ID if set)"])
    static let bundleId = Option("--bundle-id", value: "ID[,ID…]", help: [
        "The apps this emulator serves (the token's bid); others get 401. Without",
        "it, every bundle id is an app of its own, kept apart as Apple does",
    ])
    static let serverErrors = Option("--server-errors", value: "FRACTION", of: Double.self,
                                     help: ["Answer this fraction of requests with 500 (fault injection)"])
    static let drops = Option("--drops", value: "FRACTION", of: Double.self,
                              help: ["Drop this fraction of connections after processing (fault injection)"])
    static let latency = Option("--latency", value: "SECONDS", of: Seconds.self, default: Seconds(0), help: ["Delay every answer"])
    static let defaultSeed: UInt64 = 1
    static let seed = Option("--seed", value: "N", of: UInt64.self, default: defaultSeed, help: ["Seed for the injected faults"])
    static let verbose = Option("--verbose",
                                help: ["Log one line per request to standard error (never headers or bodies)"])

    /// What `--rate-limit` takes.
    enum RateLimitChoice: String, CaseIterable, ArgumentValue {
        case apple, off
        var mode: RateLimitMode { self == .apple ? .apple : .off }
    }

    static let helpPage = HelpPage(
        about: """
        Serves an emulator of Apple's Retention Messaging API on 127.0.0.1 until SIGINT or SIGTERM.
        Point the client at the printed API endpoint (RETENTION_SYNC_ENDPOINT): it serves sandbox and
        production, and each command's --env picks one, so production sees a sandbox performance test's
        pass. Apps are kept apart by the token's bundle id (bid), as Apple does. Tokens must be signed
        with the key whose public half the emulator is given; with no key at all, it generates a
        throwaway one and prints the export lines that make the client use it. /sandbox/… and
        /production/… reach one environment whatever --env says.
        """,
        options: [port, env, review, rateLimit, state, publicKey, keyId, issuerId, bundleId, serverErrors, drops,
                  latency, seed, testRequests, testConcurrency, testDuration, appAppleId, caBundle, verbose],
        column: 26,
        footer: """
        Admin routes (loopback, no authentication):
          POST /emulator/messages/{id}/approve    POST /emulator/messages/{id}/reject
          POST /emulator/images/{id}/approve      POST /emulator/images/{id}/reject
          POST /emulator/approve-all              GET  /emulator/state
          POST /emulator/transactions             GET  /emulator/transactions
          PUT  /emulator/realtime-url             GET  /emulator/test-root.pem
          GET  /emulator/apps                     (?bundleId=ID on any admin route: that app, else the first)
          POST /emulator/customers (simulated customers)  POST /emulator/clock   GET /emulator/clock
          POST /inApps/v1/notifications/history (Apple's Get Notification History)
          POST /emulator/seed (messages, images, defaults the tool did not make; see docs/emulator.md)
          POST /emulator/shutdown
        """)

    struct Options: CommandOptions {
        var port: UInt16
        var environment: Environment
        var review: ReviewMode
        var rateLimit: RateLimitMode
        var statePath: String?
        var publicKeyPath: String?
        var keyId: String?
        var issuerId: String?
        var bundleIds: [String]
        var serverErrors: Double
        var drops: Double
        var latency: Double
        var seed: UInt64
        var verbose: Bool
        var testSettings: PerformanceTestSettings
        var caBundle: String?
        var appAppleId: Int64

        func validate() throws(CommandError) {
            if let caBundle, !FileManager.default.isReadableFile(atPath: caBundle) {
                throw CommandError("--ca-bundle: cannot read \(caBundle); give a PEM file of trusted certificate authorities")
            }
        }
    }

    static func parse(_ arguments: inout Arguments, context: CommandContext) throws(CommandError) -> Options {
        Options(port: UInt16(try arguments.value(Self.port, as: Int.self, in: 0...Int(UInt16.max), expected: "a number from 0 to 65535") ?? defaultPort),
                environment: try arguments.value(Self.env, as: Environment.self) ?? .sandbox,
                review: try arguments.value(Self.review, as: ReviewMode.self) ?? .manual,
                rateLimit: (try arguments.value(Self.rateLimit, as: RateLimitChoice.self) ?? .off).mode,
                statePath: try arguments.value(Self.state), publicKeyPath: try arguments.value(Self.publicKey),
                keyId: try arguments.value(Self.keyId) ?? nonEmpty(context.environment[Credentials.keyIdVariable]),
                issuerId: try arguments.value(Self.issuerId) ?? nonEmpty(context.environment[Credentials.issuerIdVariable]),
                bundleIds: (try arguments.value(Self.bundleId) ?? "").split(separator: ",")
                    .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty },
                serverErrors: try fraction(&arguments, Self.serverErrors), drops: try fraction(&arguments, Self.drops),
                latency: try arguments.value(Self.latency, as: Seconds.self, in: Seconds(0)...Seconds(maximumLatency),
                                             expected: "a number of seconds from 0 to \(Int(maximumLatency))")?.value ?? 0,
                seed: try arguments.value(Self.seed, as: UInt64.self) ?? defaultSeed,
                verbose: arguments.flag(Self.verbose), testSettings: try performanceTestSettings(&arguments),
                caBundle: try arguments.value(Self.caBundle).map { context.url($0).path },
                appAppleId: try arguments.value(Self.appAppleId, as: Int64.self, in: 0..., expected: "the App's numeric Apple ID") ?? defaultAppAppleId)
    }

    static func run(_ options: Options, context: CommandContext) async throws -> ExitCode {
        let (environment, review, rateLimit, statePath) = (options.environment, options.review, options.rateLimit, options.statePath)
        let (publicKeyPath, keyId, issuerId, bundleIds) = (options.publicKeyPath, options.keyId, options.issuerId, options.bundleIds)
        let (serverErrors, drops, verbose, testSettings, caBundle) = (options.serverErrors, options.drops, options.verbose,
                                                                      options.testSettings, options.caBundle)
        let (port, latency, seed, appAppleId) = (options.port, options.latency, options.seed, options.appAppleId)

        let stateURL = statePath.map { context.url($0) }
        if let stateURL { try checkStateDirectory(stateURL) }
        var acceptedKeyId = keyId
        var acceptedIssuerId = issuerId
        let publicKey: ES256PublicKey
        var throwaway: ThrowawayKey?
        if let loaded = try loadPublicKey(path: publicKeyPath, context: context) {
            publicKey = loaded
        } else {
            let made = try ThrowawayKey.make(context: context)
            throwaway = made
            publicKey = made.key.publicKey
            acceptedKeyId = ThrowawayKey.keyId
            acceptedIssuerId = ThrowawayKey.issuerId
        }
        var configuration = EmulatorConfiguration(
            publicKey: publicKey, keyId: acceptedKeyId, issuerId: acceptedIssuerId, bundleId: bundleIds.first, productionReview: review,
            rateLimit: rateLimit, clock: SystemClock(), faults: FaultInjection(serverErrorRate: serverErrors, dropRate: drops, latency: latency, seed: seed),
            stateFile: stateURL, performanceTest: testSettings, realtimeCABundlePath: caBundle, appAppleId: appAppleId)
        configuration.additionalBundleIds = Array(bundleIds.dropFirst())
        configuration.useTestChain(try testChain(stateURL: stateURL))
        let emulator = try loadEmulator(configuration, stateURL: stateURL)
        if verbose {
            let console = context.console
            emulator.onLog { console.error($0) }
        }

        let stop = AsyncStream<String>.makeStream()
        let server: EmulatorServer
        do {
            server = try EmulatorServer(emulator: emulator, environment: environment, port: port,
                                        onShutdown: { stop.continuation.yield("POST /emulator/shutdown") })
        } catch {
            throw CommandError("cannot listen on 127.0.0.1:\(port): \(error.message)")
        }
        let signals = SignalWatcher { stop.continuation.yield(SignalWatcher.name(of: $0)) }

        printBanner(server: server, environment: environment, throwaway: throwaway, stateURL: stateURL, emulator: emulator,
                    context: context)

        try await serveUntilStopped(stop.stream, signals: signals, server: server, emulator: emulator, stateURL: stateURL,
                                    throwaway: throwaway, context: context)
        return .success
    }
    /// Serves until a signal or the shutdown route, then saves the state file.
    private static func serveUntilStopped(_ stop: AsyncStream<String>, signals: SignalWatcher, server: EmulatorServer,
                                          emulator: Emulator, stateURL: URL?, throwaway: ThrowawayKey?,
                                          context: CommandContext) async throws(CommandError) {
        var reason = "stopped"
        for await why in stop {
            reason = why
            break
        }
        signals.cancel()
        if reason.hasPrefix("POST") {
            // Let the answer to the shutdown call leave before the connections close.
            try? await Task.sleep(nanoseconds: 100_000_000)
        }
        server.stop()
        // The throwaway key served this run only; leaving it in the temporary folder would invite reuse.
        if let throwaway { try? FileManager.default.removeItem(at: throwaway.file.deletingLastPathComponent()) }
        if let stateURL {
            do {
                try emulator.save(to: stateURL)
            } catch {
                throw CommandError("\(error)")
            }
        }
        context.console.print("stopping (\(reason))")
    }

    /// The emulator, with the state file read (when it exists) and written once, so a place that
    /// cannot be written is found at start rather than at the first upload.
    private static func loadEmulator(_ configuration: EmulatorConfiguration, stateURL: URL?) throws(CommandError) -> Emulator {
        let emulator = Emulator(configuration: configuration)
        guard let stateURL else { return emulator }
        do {
            if FileManager.default.fileExists(atPath: stateURL.path) { try emulator.load(from: stateURL) }
            try emulator.save(to: stateURL)
        } catch {
            throw CommandError("--state: \(error)")
        }
        return emulator
    }

    private static func printBanner(server: EmulatorServer, environment: Environment, throwaway: ThrowawayKey?, stateURL: URL?,
                                    emulator: Emulator, context: CommandContext) {
        context.console.print("listening on \(server.baseURL.absoluteString) (\(environment.rawValue))")
        // One base URL for both environments: the client names its --env in every request. Each printed
        // admin route names its environment, so a curl for the other one cannot use it by mistake.
        let endpoint = server.baseURL
        let admin = "\(server.baseURL.absoluteString)/\(environment.rawValue)/emulator"
        context.console.print("API endpoint: \(endpoint.absoluteString) (sandbox and production: each command's --env picks; "
                              + "apps are kept apart by the token's bundle id)")
        if let throwaway { context.console.print(throwaway.instructions(endpoint: endpoint)) }
        if let stateURL {
            let state = emulator.state(of: environment)
            context.console.print("state file: \(stateURL.path) (\(state.messages.count) messages, \(state.images.count) images in \(environment.rawValue))")
        }
        context.console.print("""
        admin routes of \(environment.rawValue) (loopback, no authentication; every answer names its environment
        in X-Emulator-Environment; write /sandbox/ or /production/ after the port for the other one):
          POST \(admin)/messages/{id}/approve|reject
          POST \(admin)/images/{id}/approve|reject
          POST \(admin)/approve-all
          GET  \(admin)/state
          POST \(server.baseURL.absoluteString)/sandbox/emulator/transactions   {"originalTransactionId","productId","locale"}
          PUT  \(admin)/realtime-url   {"realtimeURL"} (http:// on loopback too)
          GET  \(admin)/test-root.pem  (the root performance tests sign under: serve --root)
          GET  \(server.baseURL.absoluteString)/emulator/apps   (the apps, by bundle id; add ?bundleId=ID to any admin route
               for an app other than the first)
          POST \(server.baseURL.absoluteString)/emulator/shutdown
        one environment each, whatever --env says: \(server.apiEndpoint(for: .sandbox).absoluteString)
                                                   \(server.apiEndpoint(for: .production).absoluteString)
        """)
    }


    /// The performance-test settings the options give, checked against the emulator's bounds.
    private static func performanceTestSettings(_ arguments: inout Arguments) throws(CommandError) -> PerformanceTestSettings {
        var settings = PerformanceTestSettings.default
        if let value = try arguments.value(Self.testRequests, as: Int.self) { settings.totalRequests = value }
        if let value = try arguments.value(Self.testConcurrency, as: Int.self) { settings.maxConcurrentRequests = value }
        if let value = try arguments.value(Self.testDuration, as: Int64.self) { settings.totalDuration = value }
        if let problem = settings.problem { throw CommandError("performance-test settings: \(problem)", exitCode: .usage) }
        return settings
    }

    /// The chain performance tests sign with: kept next to `--state` (0600) so a restarted emulator
    /// keeps the root that `serve --root` already trusts; fresh for each run without `--state`.
    private static func testChain(stateURL: URL?) throws(CommandError) -> AppleStyleSigningChain {
        // Valid from well before any signedDate a test or a simulated customer signs with.
        let chainStart = (SystemClock().time() - 400 * UTCTime.day).date
        guard let stateURL else {
            do { return try AppleStyleSigningChain(name: "retention-sync emulator", notBefore: chainStart) } catch { throw CommandError("cannot make the test signing chain: \(error)") }
        }
        let file = URL(fileURLWithPath: stateURL.path + ".test-chain.pem")
        if let data = FileManager.default.contents(atPath: file.path) {
            do { return try AppleStyleSigningChain(pem: String(decoding: data, as: UTF8.self)) } catch {
                throw CommandError("\(file.path): \(error); delete it to make a new test chain (then give serve the new root)")
            }
        }
        do {
            let chain = try AppleStyleSigningChain(name: "retention-sync emulator", notBefore: chainStart)
            guard FileManager.default.createFile(atPath: file.path, contents: Data(chain.pem.utf8), attributes: [.posixPermissions: 0o600]) else {
                throw CommandError("cannot write the test signing chain to \(file.path)")
            }
            return chain
        } catch let error as CommandError {
            throw error
        } catch {
            throw CommandError("cannot make the test signing chain: \(error)")
        }
    }

    /// Seconds; more would only hang the client, and a huge value overflows the sleep.
    static let maximumLatency = 600.0

    /// `--state` in a directory that does not exist fails at start, not as a warning on every write.
    private static func checkStateDirectory(_ url: URL) throws(CommandError) {
        let directory = url.deletingLastPathComponent()
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw CommandError("--state \(url.path): the directory \(directory.path) does not exist; create it (mkdir -p \(directory.path)) or choose another path")
        }
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw CommandError("--state \(url.path) is a directory; give a file path such as \(url.appendingPathComponent("emulator.json").path)")
        }
    }

    private static func nonEmpty(_ text: String?) -> String? {
        guard let text, !text.trimmingCharacters(in: .whitespaces).isEmpty else { return nil }
        return text.trimmingCharacters(in: .whitespaces)
    }

    private static func fraction(_ arguments: inout Arguments, _ option: Option) throws(CommandError) -> Double {
        try arguments.value(option, as: Double.self, in: 0...1, expected: "a fraction between 0 and 1") ?? 0
    }

    /// The key to verify tokens with, or nil when none is given (the caller then makes a throwaway one).
    private static func loadPublicKey(path: String?, context: CommandContext) throws(CommandError) -> ES256PublicKey? {
        if let path {
            let url = context.url(path)
            guard let data = FileManager.default.contents(atPath: url.path) else {
                throw CommandError("cannot read --public-key \(url.path)")
            }
            do {
                return try ES256PublicKey(pem: String(decoding: data, as: UTF8.self))
            } catch {
                throw CommandError("--public-key \(url.path): \(error)")
            }
        }
        let hasKey = nonEmpty(context.environment[Credentials.privateKeyVariable]) != nil
            || nonEmpty(context.environment[Credentials.privateKeyFileVariable]) != nil
        guard hasKey else { return nil }
        var environment = context.environment
        // Only the key is needed here; placeholders stand in for ids the user has not set.
        environment[Credentials.keyIdVariable] = nonEmpty(environment[Credentials.keyIdVariable]) ?? ThrowawayKey.keyId
        environment[Credentials.issuerIdVariable] = nonEmpty(environment[Credentials.issuerIdVariable])
            .flatMap { Credentials.isUUID($0) ? $0 : nil } ?? ThrowawayKey.issuerId
        do {
            return try Credentials.fromEnvironment(environment, bundleId: "emulator").privateKey.publicKey
        } catch {
            throw CommandError("\(error)")
        }
    }
}

/// A key made when the emulator is started without one, written to a private file so a client
/// can sign with it, like a development server that prints its token.
private struct ThrowawayKey {
    static let keyId = "EMULATOR01"
    static let issuerId = "00000000-0000-4000-8000-00000000e001"
    var key: ES256PrivateKey
    var file: URL

    /// A fresh key in `$TMPDIR/retention-sync-emulator-XXXXXXXX/AuthKey_EMULATOR01.p8` (directory 0700, file 0600).
    static func make(context: CommandContext) throws(CommandError) -> ThrowawayKey {
        let base = nonEmptyPath(context.environment["TMPDIR"]) ?? FileManager.default.temporaryDirectory.path
        let directory = URL(fileURLWithPath: base)
            .appendingPathComponent("retention-sync-emulator-" + UUID().uuidString.prefix(8).lowercased())
        let file = directory.appendingPathComponent("AuthKey_\(keyId).p8")
        let key = ES256PrivateKey.generate()
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false,
                                                    attributes: [.posixPermissions: 0o700])
            guard FileManager.default.createFile(atPath: file.path, contents: Data(key.pkcs8PEM.utf8),
                                                 attributes: [.posixPermissions: 0o600]) else {
                throw CommandError("cannot write \(file.path)")
            }
        } catch {
            throw CommandError("""
            no key given (--public-key, \(Credentials.privateKeyFileVariable) or \(Credentials.privateKeyVariable)), and a throwaway \
            key could not be written under \(base): \(error.localizedDescription); set TMPDIR to a writable directory or give a key
            """)
        }
        return ThrowawayKey(key: key, file: file)
    }

    private static func nonEmptyPath(_ text: String?) -> String? {
        guard let text, !text.isEmpty else { return nil }
        return text
    }

    /// What to paste into the client's shell.
    func instructions(endpoint: URL) -> String {
        """
        no key given: generated a throwaway key for this emulator only (never use it with Apple).
        To use it, run in the client's shell:
          export \(Credentials.privateKeyFileVariable)=\(file.path)
          export \(Credentials.keyIdVariable)=\(Self.keyId)
          export \(Credentials.issuerIdVariable)=\(Self.issuerId)
          export RETENTION_SYNC_ENDPOINT=\(endpoint.absoluteString)
          unset \(Credentials.privateKeyVariable)
        """
    }
}

