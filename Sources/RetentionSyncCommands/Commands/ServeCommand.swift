import Crypto
import Dispatch
import Foundation
import StateStore
import HTTP
import Manifests
import RealtimeServer
import Reconciler
import RetentionMessaging
import RetentionMessagingModels
import TLS
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `retention-sync serve`: the realtime endpoint Apple calls when a customer may cancel.
struct ServeCommand: Command {
    static let name = "serve"
    static let summary = "Answer Apple's realtime requests (the realtime URL)"
    static let env = Option("--env", value: "ENV[,ENV]", help: [
        "sandbox, production, or both (each on its own path; both needs --manifests)",
    ])
    static let root = Option("--root", value: "FILE[,FILE…]", completion: .file, help: [
        "Root certificates Apple's chain must lead to (Apple Root CA - G3, PEM or DER,",
        "from https://www.apple.com/certificateauthority/)",
    ])
    static let manifests = Option("--manifests", value: "DIR", completion: .directory, help: [
        "Serve the snapshot in the App's environments.<env>.stateStore (or its older",
        "snapshotPath) under DIR (default: manifests); also fixes bundle id and appAppleId",
    ])
    static let snapshotStore = Option("--snapshot-store", value: "FILE", completion: .file,
                                      help: ["Serve the snapshot in FILE instead (one environment only)"])
    static let stateStore = Option("--state-store", value: "LOCATION", help: [
        "Serve the snapshot published in this state store (s3://bucket/prefix or a",
        "path); default: the App's environments.<env>.stateStore",
    ])
    static let bundleId = Option("--bundle-id", value: "ID", help: [
        "The App's bundle id, for --state-store without --manifests",
    ])
    static let appAppleId = Option("--app-apple-id", value: "N", help: [
        "The App's appAppleId, for --state-store without --manifests (production)",
    ])
    static let listen = Option("--listen", value: "HOST:PORT", help: [
        "Address to listen on (default 127.0.0.1:8080; 0.0.0.0:8443 for every IPv4",
        "interface, [::]:8443 for IPv6)",
    ])
    static let path = Option("--path", value: "PATH", help: [
        "The realtime path (one environment only; default: the path of the App's",
        "environments.<env>.realtimeURL, else /apple/<env>)",
    ])
    static let tlsCert = Option("--tls-cert", value: "FILE", completion: .file, help: [
        "Serve HTTPS (TLS 1.2 and 1.3) with this PEM certificate chain, leaf first",
    ])
    static let tlsKey = Option("--tls-key", value: "FILE", completion: .file, help: [
        "Its PEM private key; both files are re-read on SIGHUP. Without the two:",
        "plain HTTP, for a TLS proxy or load balancer in front",
    ])
    static let maxAge = Option("--max-age", value: "SECONDS", help: ["Refuse a signedDate further than this from now (default 300)"])
    static let pollInterval = Option("--poll-interval", value: "SECONDS", help: ["How often to look for a new snapshot (default 5)"])
    static let maxConnections = Option("--max-connections", value: "N", help: [
        "Connections held at once (default 4096, lowered to fit the open-file limit);",
        "at the cap the longest-idle connection makes room for a newcomer",
    ])
    static let headTimeout = Option("--head-timeout", value: "SECONDS", help: [
        "Close a new connection that has not sent a complete request head by then (default 5)",
    ])
    static let idleTimeout = Option("--idle-timeout", value: "SECONDS", help: [
        "Close a kept-alive connection idle this long between requests (default 60)",
    ])
    static let shedAfter = Option("--shed-after", value: "MS", help: [
        "Answer {} at once to a request that already waited this long behind other",
        "work, so Apple shows its fallback in time (default 500; 0 never sheds)",
    ])
    static let workers = Option("--workers", value: "N", help: [
        "Threads answering requests, each serving many connections",
        "(default: one per processor)",
    ])

    static let helpPage = HelpPage(
        usage: """
        Usage: retention-sync serve --env ENV[,ENV] --root FILE[,FILE…]
                                    [--manifests DIR | --state-store LOCATION --bundle-id ID | --snapshot-store FILE]
                                    [--listen HOST:PORT] [--path PATH] [--tls-cert FILE --tls-key FILE]
                                    [--max-age SECONDS] [--poll-interval SECONDS] [--max-connections N] [--workers N]
        """,
        about: """
        Answers Apple's realtime "Get Retention Message" POSTs from the published runtime snapshot:
        verifies the signedPayload as Apple's libraries do, decides, signs promotional offers, and
        answers 200 with one field, or {} when no rule answers or anything fails so that Apple shows
        the default message. A payload that fails verification gets 401. The snapshot is re-read when
        it changes; one that is corrupt or for another App or environment is refused and the previous
        one keeps serving. Until a first snapshot loads, Apple gets {} and /readyz answers 503.
        """,
        options: [env, root, manifests, stateStore, bundleId, appAppleId, snapshotStore, listen, path, tlsCert, tlsKey, maxAge, pollInterval, maxConnections, headTimeout, idleTimeout, shedAfter, workers],
        column: 27,
        footer: """
        Routes: POST <path> (Apple), GET /healthz, GET /readyz, GET /metrics (Prometheus text).
        One JSON line per request goes to standard error; it never holds the signedPayload, a key,
        or the customer's transaction id (only a hash salted per process). SIGTERM or SIGINT stops
        accepting, finishes the requests in flight and exits 0.

        Promotional offers are signed with the In-App Purchase key from RETENTION_SYNC_KEY_ID,
        RETENTION_SYNC_ISSUER_ID and RETENTION_SYNC_PRIVATE_KEY_FILE (or RETENTION_SYNC_PRIVATE_KEY);
        without them, a snapshot with offers leaves /readyz at 503 and offers are answered with {}.
        """)

    static func run(_ arguments: inout Arguments, context: CommandContext) async throws -> ExitCode {
        let environmentText = try arguments.value(Self.env)
        let rootText = try arguments.value(Self.root)
        let manifestsOption = try arguments.value(Self.manifests)
        let storeOption = try arguments.value(Self.snapshotStore)
        let stateStoreOption = try arguments.value(Self.stateStore)
        let bundleIdOption = try arguments.value(Self.bundleId)
        let appAppleIdText = try arguments.value(Self.appAppleId)
        let listenText = try arguments.value(Self.listen) ?? "127.0.0.1:8080"
        let pathOption = try arguments.value(Self.path)
        let certificatePath = try arguments.value(Self.tlsCert)
        let keyPath = try arguments.value(Self.tlsKey)
        let maxAge = try number(arguments.value(Self.maxAge), "--max-age", default: 300)
        let pollInterval = try number(arguments.value(Self.pollInterval), "--poll-interval", default: 5)
        let maxConnections = try number(arguments.value(Self.maxConnections), "--max-connections",
                                        default: Double(SocketPlatform.connectionLimit(wanted: 4096)))
        let headTimeout = try number(arguments.value(Self.headTimeout), "--head-timeout", default: 5)
        let idleTimeout = try number(arguments.value(Self.idleTimeout), "--idle-timeout", default: 60)
        let shedAfter = try number(arguments.value(Self.shedAfter), "--shed-after", default: 500)
        let workers = try number(arguments.value(Self.workers), "--workers",
                                 default: Double(ProcessInfo.processInfo.activeProcessorCount))
        try arguments.finish()

        guard let environmentText else {
            throw CommandError("serve needs --env sandbox, production, or sandbox,production", exitCode: .usage)
        }
        var environments: [RetentionMessagingModels.Environment] = []
        for name in environmentText.split(separator: ",") {
            guard let environment = RetentionMessagingModels.Environment(rawValue: name.lowercased()) else {
                throw CommandError("unknown environment '\(name)'; use sandbox or production", exitCode: .usage)
            }
            if !environments.contains(environment) { environments.append(environment) }
        }
        guard !environments.isEmpty else { throw CommandError("--env names no environment", exitCode: .usage) }
        guard let rootText else {
            throw CommandError("serve needs --root FILE: the root certificate(s) Apple's chain must lead to "
                               + "(Apple Root CA - G3)", exitCode: .usage)
        }
        if storeOption != nil, manifestsOption != nil || stateStoreOption != nil {
            throw CommandError("--snapshot-store serves a snapshot file on its own: give it without --manifests and --state-store",
                               exitCode: .usage)
        }
        if stateStoreOption != nil, manifestsOption == nil, bundleIdOption == nil {
            throw CommandError("--state-store needs the App's identity: give --manifests DIR, or --bundle-id ID "
                               + "(and --app-apple-id N for production)", exitCode: .usage)
        }
        var appAppleIdOption: Int64?
        if let appAppleIdText {
            guard let value = Int64(appAppleIdText), value > 0 else {
                throw CommandError("--app-apple-id must be a positive whole number, not '\(appAppleIdText)'", exitCode: .usage)
            }
            appAppleIdOption = value
        }
        if environments.count > 1, storeOption != nil || pathOption != nil {
            throw CommandError("--snapshot-store and --path serve one environment; for both, use --manifests", exitCode: .usage)
        }
        if (certificatePath == nil) != (keyPath == nil) {
            throw CommandError("--tls-cert and --tls-key go together", exitCode: .usage)
        }
        guard maxConnections >= 1, maxConnections == maxConnections.rounded() else {
            throw CommandError("--max-connections must be a whole number of at least 1", exitCode: .usage)
        }
        guard workers >= 1, workers <= 256, workers == workers.rounded() else {
            throw CommandError("--workers must be a whole number from 1 to 256", exitCode: .usage)
        }
        guard pollInterval > 0 else { throw CommandError("--poll-interval must be more than 0", exitCode: .usage) }
        guard headTimeout > 0, idleTimeout > 0 else {
            throw CommandError("--head-timeout and --idle-timeout must be more than 0 seconds", exitCode: .usage)
        }
        guard shedAfter >= 0 else { throw CommandError("--shed-after must be 0 (never) or more milliseconds", exitCode: .usage) }
        let (host, port) = try listenAddress(listenText)
        let roots = try loadRoots(rootText, context: context)

        var endpoints: [RealtimeEndpoint] = []
        var bundleId: String?
        if let storeOption {
            if storeOption.contains("://") {
                throw CommandError("--snapshot-store takes a snapshot file; for s3:// give --state-store", exitCode: .usage)
            }
            let environment = environments[0]
            endpoints.append(RealtimeEndpoint(path: pathOption ?? "/apple/\(environment.rawValue)", environment: environment,
                                              source: FileSnapshotSource(path: context.url(storeOption).path)))
        } else if manifestsOption == nil, let stateStoreOption, let bundleIdOption {
            bundleId = bundleIdOption
            for environment in environments {
                if environment == .production, appAppleIdOption == nil {
                    throw CommandError("serving production needs --app-apple-id N: Apple's payloads are checked against it",
                                       exitCode: .usage)
                }
                let owner = StateOwner(bundleId: bundleIdOption, appAppleId: appAppleIdOption, environment: environment)
                let source = try stateSource(stateStoreOption, relativeTo: context.currentDirectory, owner: owner, context: context)
                endpoints.append(RealtimeEndpoint(path: pathOption ?? "/apple/\(environment.rawValue)", environment: environment,
                                                  source: source, appAppleId: appAppleIdOption, bundleId: bundleIdOption))
            }
        } else {
            let manifests = manifestsOption ?? "manifests"
            let app = try loadApp(manifests, context: context)
            bundleId = app.bundleId
            let directory = context.url(manifests)
            for environment in environments {
                guard let settings = app.settings(for: environment) else {
                    throw CommandError("\(app.location): the App does not use the \(environment.rawValue) environment")
                }
                let source: any SnapshotSource
                let owner = StateOwner(bundleId: app.bundleId, appAppleId: app.appAppleId, environment: environment)
                let declared: StateLocation?
                do throws(StateLocationError) {
                    declared = try Workspace.declaredStateLocation(of: app, environment: environment, directory: directory)
                } catch {
                    throw CommandError("\(settings.location): stateStore \(error.description)")
                }
                if let stateStoreOption {
                    source = try stateSource(stateStoreOption, relativeTo: context.currentDirectory, owner: owner, context: context)
                } else if let declared {
                    source = try stateSource(declared, owner: owner, context: context)
                } else {
                    throw CommandError("\(settings.location): the App declares no stateStore for \(environment.rawValue); "
                                       + "add one or pass --state-store LOCATION")
                }
                let urlPath = settings.realtimeURL.flatMap { URL(string: $0)?.path }.flatMap { $0.isEmpty ? nil : $0 }
                endpoints.append(RealtimeEndpoint(path: pathOption ?? urlPath ?? "/apple/\(environment.rawValue)",
                                                  environment: environment, source: source,
                                                  appAppleId: app.appAppleId, bundleId: app.bundleId))
            }
        }
        if Set(endpoints.map(\.path)).count != endpoints.count {
            throw CommandError("both environments would be served on \(endpoints[0].path); give them different "
                               + "realtimeURL paths in the App manifest", exitCode: .usage)
        }
        for endpoint in endpoints where ["/healthz", "/readyz", "/metrics"].contains(endpoint.path) || !endpoint.path.hasPrefix("/") {
            throw CommandError("\(endpoint.path) cannot be the realtime path; choose another --path", exitCode: .usage)
        }

        let signingKey = try signingKey(context: context, bundleId: bundleId)
        if signingKey == nil {
            context.console.error("warning: no In-App Purchase key (RETENTION_SYNC_KEY_ID, RETENTION_SYNC_ISSUER_ID, "
                                  + "RETENTION_SYNC_PRIVATE_KEY_FILE): promotional offers will be answered with {}")
        }

        var tls: TLSContext?
        if let certificatePath, let keyPath {
            do {
                tls = try TLSContext(certificateFile: context.url(certificatePath).path, keyFile: context.url(keyPath).path)
            } catch {
                throw CommandError(error.description)
            }
        }

        let console = context.console
        let service = RealtimeService(configuration: .init(endpoints: endpoints, trustedRoots: roots, maxAge: maxAge,
                                                           signingKey: signingKey, pollInterval: pollInterval,
                                                           shedAfter: shedAfter > 0 ? shedAfter / 1000 : nil),
                                      log: RequestLog(sink: { console.error($0) }))
        let server: HTTPServer
        do {
            server = try HTTPServer(host: host, port: port, configuration: HTTPServerConfiguration(
                maxBodySize: RealtimeService.maxBodySize, maxHeaderSize: 16 * 1024, maxConnections: Int(maxConnections),
                idleTimeout: idleTimeout, requestTimeout: 10, writeTimeout: 10, allowNonLoopback: true, tls: tls,
                eventLoops: Int(workers), headTimeout: headTimeout),
                synchronousHandler: { service.handle($0) })
        } catch {
            throw CommandError("cannot listen on \(listenText): \(error.message)")
        }
        service.metrics.showConnections { server.statistics }
        service.startPolling()

        let events = AsyncStream<String>.makeStream()
        let signals = SignalWatcher([SIGINT, SIGTERM, SIGHUP]) { events.continuation.yield(SignalWatcher.name(of: $0)) }
        for endpoint in endpoints {
            context.console.print("serving \(endpoint.environment.rawValue) on \(server.baseURL.absoluteString)\(endpoint.path)")
        }
        context.console.print("operations: \(server.baseURL.absoluteString)/healthz /readyz /metrics")
        if !service.isReady {
            context.console.error("warning: not ready yet: " + service.readiness.joined(separator: "; "))
        }

        var reason = "stopped"
        for await event in events.stream {
            if event == "SIGHUP" {
                guard let certificatePath, let keyPath else { continue }
                do {
                    server.replaceTLS(try TLSContext(certificateFile: context.url(certificatePath).path,
                                                     keyFile: context.url(keyPath).path))
                    context.console.error(#"{"event":"tls_reloaded"}"#)
                } catch {
                    context.console.error(#"{"event":"tls_reload_failed","message":"# + jsonString(error.description) + "}")
                }
                continue
            }
            reason = event
            break
        }
        signals.cancel()
        service.stopPolling()
        let drained = server.drain(timeout: 25)
        context.console.print("stopped (\(reason))\(drained ? "" : ": some connections did not finish in 25 seconds")")
        return .success
    }

    private static func number(_ text: String?, _ name: String, default value: Double) throws(CommandError) -> Double {
        guard let text else { return value }
        guard let number = Double(text), number.isFinite, number >= 0 else {
            throw CommandError("\(name) must be a number, not '\(text)'", exitCode: .usage)
        }
        return number
    }

    /// `HOST:PORT`, `[IPv6]:PORT` or `:PORT` (every IPv4 interface).
    private static func listenAddress(_ text: String) throws(CommandError) -> (String, UInt16) {
        guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]) else {
            throw CommandError("--listen \(text): expected HOST:PORT, e.g. 0.0.0.0:8443 or [::]:8443", exitCode: .usage)
        }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return (host.isEmpty ? "0.0.0.0" : host, port)
    }

    private static func loadRoots(_ paths: String, context: CommandContext) throws(CommandError) -> [X509Certificate] {
        var roots: [X509Certificate] = []
        for path in paths.split(separator: ",").map(String.init) where !path.isEmpty {
            do {
                roots += try X509Certificate.load(contentsOfFile: context.url(path).path)
            } catch {
                throw CommandError("\(path): cannot read a root certificate (PEM or DER): \(error.description)")
            }
        }
        guard !roots.isEmpty else { throw CommandError("--root names no certificate file", exitCode: .usage) }
        return roots
    }

    /// The published snapshot in the state store at `text`, read as `owner`'s document.
    private static func stateSource(_ text: String, relativeTo base: URL, owner: StateOwner,
                                    context: CommandContext) throws(CommandError) -> any SnapshotSource {
        let location: StateLocation
        do {
            location = try StateLocation.parse(text, relativeTo: base)
        } catch {
            throw CommandError("--state-store \(text): \(error)")
        }
        return try stateSource(location, owner: owner, context: context)
    }

    /// The published snapshot in the state store at `location`, read as `owner`'s document.
    private static func stateSource(_ location: StateLocation, owner: StateOwner,
                                    context: CommandContext) throws(CommandError) -> any SnapshotSource {
        guard #available(macOS 15.0, *) else {
            throw CommandError("--state-store needs macOS 15 or later; use --snapshot-store FILE")
        }
        do {
            let configuration = try EnvironmentOptions.transportConfiguration(context)
            return try StateSnapshotSource(location: location, owner: owner, environment: context.environment,
                                           transport: CurlHTTPClient(configuration: configuration))
        } catch let error as CommandError {
            throw error
        } catch {
            throw CommandError("state store \(location): \(error)")
        }
    }

    private static func loadApp(_ manifests: String, context: CommandContext) throws(CommandError) -> AppManifest {
        let (set, diagnostics) = ManifestLoader.load(directory: context.url(manifests), displayPath: manifests)
        guard let app = set?.app else {
            let details = DiagnosticRenderer.render(diagnostics.filter { $0.severity == .error }, format: .text, color: false)
            throw CommandError("\(manifests): no usable App manifest to find the snapshot in; pass --snapshot-store FILE"
                               + (details.isEmpty ? "" : "\n" + details.trimmingCharacters(in: .newlines)))
        }
        return app
    }

    /// The In-App Purchase key, or nil when none of its variables is set.
    private static func signingKey(context: CommandContext, bundleId: String?) throws(CommandError) -> OfferSigningKey? {
        let names = [Credentials.keyIdVariable, Credentials.issuerIdVariable, Credentials.privateKeyVariable,
                     Credentials.privateKeyFileVariable]
        guard names.contains(where: { !(context.environment[$0] ?? "").trimmingCharacters(in: .whitespaces).isEmpty }) else {
            return nil
        }
        var environment = context.environment
        if let file = environment[Credentials.privateKeyFileVariable], !file.isEmpty {
            environment[Credentials.privateKeyFileVariable] = context.url(file).path
        }
        do {
            // The bundle id signed into each offer comes from the snapshot being served.
            let credentials = try Credentials.fromEnvironment(environment, bundleId: bundleId ?? "serve")
            return OfferSigningKey(keyId: credentials.keyId, issuerId: credentials.issuerId, privateKey: credentials.privateKey)
        } catch {
            throw CommandError("\(error)")
        }
    }

    private static func jsonString(_ text: String) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: [text], options: [])) ?? Data("[\"\"]".utf8)
        return String(String(decoding: data, as: UTF8.self).dropFirst().dropLast())
    }
}

