import Basics
import CLIKit
import Crypto
import Dispatch
import EventStore
import Foundation
import StateStore
import HTTPClient
import HTTPCore
import HTTPServer
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
struct ServeCommand: ParsedCommand {
    static let name = "serve"
    static let summary = "Answer Apple's realtime requests (the realtime URL)"
    static let env = Option("--env", value: "ENV[,ENV]", of: ArgumentList<RetentionMessagingModels.Environment>.self, help: [
        "sandbox, production, or both (each on its own path; both needs --manifests)",
    ])
    static let root = TrustRootsOption.declaration(help: [
        "Root certificates Apple's chain must lead to (Apple Root CA - G3, PEM or DER,",
        "from https://www.apple.com/certificateauthority/)",
    ])
    static let manifests = Option.manifests(help: [
        "Serve the snapshot in the App's environments.<env>.stateStore (or its older",
        "snapshotPath) under DIR; also fixes bundle id and appAppleId",
    ])
    /// Spelt as `decide` spells the same file. Its old spelling, `--snapshot-store`, means the state
    /// store everywhere else, so here it is only accepted with a notice until it goes.
    static let snapshot = Option("--snapshot", value: "FILE", completion: .file,
                                 help: ["Serve the snapshot in FILE instead (one environment only)"])
        .deprecated([StateStoreOption.oldSpelling], note: "elsewhere \(StateStoreOption.oldSpelling) means --state-store")
    static let listen = Option("--listen", value: "HOST:PORT", of: ListenAddress.self, default: ServeDefaults.listen, help: [
        "Address to listen on: 0.0.0.0:8443 for every IPv4 interface,",
        "[::]:8443 for IPv6",
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
    static let maxAge = Option("--max-age", value: "SECONDS", of: Seconds.self, default: Seconds(RealtimeService.Configuration.defaultMaxAge),
                               help: ["Refuse a signedDate further than this from now"])
    static let pollInterval = Option("--poll-interval", value: "SECONDS", of: Seconds.self,
                                     default: Seconds(RealtimeService.Configuration.defaultPollInterval),
                                     help: ["How often to look for a new snapshot"])
    static let maxConnections = Option("--max-connections", value: "N", of: Int.self, default: RealtimeHTTPProfile.maxConnections, help: [
        "Connections held at once, lowered to fit the open-file limit; at the cap",
        "the longest-idle connection makes room for a newcomer",
    ])
    static let headTimeout = Option("--head-timeout", value: "SECONDS", of: Seconds.self, default: Seconds(RealtimeHTTPProfile.headTimeout), help: [
        "Close a new connection that has not sent a complete request head by then",
    ])
    static let idleTimeout = Option("--idle-timeout", value: "SECONDS", of: Seconds.self, default: Seconds(RealtimeHTTPProfile.idleTimeout), help: [
        "Close a kept-alive connection idle this long between requests",
    ])
    static let shedAfter = Option("--shed-after", value: "MS", of: Milliseconds.self,
                                  default: Milliseconds(RealtimeService.Configuration.defaultShedAfter * 1000), help: [
        "Answer {} at once to a request that already waited this long behind other",
        "work, so Apple shows its fallback in time (0 never sheds)",
    ])
    /// Its default depends on the machine, so help words it rather than printing a number.
    static let workers = Option("--workers", value: "N", of: Int.self, help: [
        "Threads answering requests, each serving many connections",
        "(default: one per processor)",
    ])

    static let notificationsPath = Option("--notifications-path", value: "PATH",
                                          default: RealtimeService.Configuration.defaultNotificationsPath, help: [
        "Where App Store Server Notifications V2 are accepted (sent by Apple or",
        "forwarded by the team's own endpoint); needs the pseudonym secret",
    ])
    static let forwardNotifications = Option("--forward-notifications", value: "URL", of: HTTPURLArgument.self, help: [
        "Also POST every notification that verified, as received, to this URL",
        "(the team's existing notification endpoint)",
    ])

    static let lookup = Option("--lookup", help: [
        "Look up a customer without facts through the App Store Server API (Get All",
        "Subscription Statuses), within --lookup-deadline; needs the pseudonym",
        "secret and the In-App Purchase key",
    ])
    static let lookupDeadline = Option("--lookup-deadline", value: "MS", of: Milliseconds.self,
                                       default: Milliseconds(LiveLookupSettings.defaultDeadline * 1000), help: [
        "From the request's arrival: past it the customer is answered as unknown",
        "(10 to 600; Apple waits 700 ms in all)",
    ])
    static let lookupRate = Option("--lookup-rate", value: "N", of: Double.self, help: [
        "Lookups per second this replica sends at most (default: Apple's limit, 50",
        "in production and 5 in sandbox; Apple counts all replicas together)",
    ])
    static let lookupEndpoint = Option("--lookup-endpoint", value: "URL", of: HTTPURLArgument.self, help: [
        "The App Store Server API's base URL (default Apple's; the emulator's for tests)",
    ])

    static let helpPage = HelpPage(
        usage: """
        Usage: retention-sync serve --env ENV[,ENV] --root FILE[,FILE…]
                                    [--manifests DIR | --state-store LOCATION --bundle-id ID | --snapshot FILE]
                                    [--listen HOST:PORT] [--path PATH] [--tls-cert FILE --tls-key FILE]
                                    [--max-age SECONDS] [--poll-interval SECONDS] [--max-connections N] [--workers N]
                                    [--head-timeout SECONDS] [--idle-timeout SECONDS] [--shed-after MS]
                                    [--events LOCATION] [--event-spool DIR] [--flush-interval SECONDS] [--spool-limit MB]
                                    [--notifications-path PATH] [--forward-notifications URL]
                                    [--lookup [--lookup-deadline MS] [--lookup-rate N] [--lookup-endpoint URL]]
        """,
        about: """
        Answers Apple's realtime "Get Retention Message" POSTs from the published runtime snapshot:
        verifies the signedPayload as Apple's libraries do, decides, signs promotional offers, and
        answers 200 with one field, or {} when no rule answers or anything fails so that Apple shows
        the default message. A payload that fails verification gets 401. The snapshot is re-read when
        it changes; one that is corrupt or for another App or environment is refused and the previous
        one keeps serving. Until a first snapshot loads, Apple gets {} and /readyz answers 503.
        """,
        options: [env, root, manifests, SnapshotSourceOptions.stateStore, SnapshotSourceOptions.bundleId,
                  SnapshotSourceOptions.appAppleId, snapshot, listen, path, tlsCert, tlsKey, maxAge, pollInterval, maxConnections,
                  headTimeout, idleTimeout, shedAfter, workers] + EventStoreOptions.all + [notificationsPath, forwardNotifications,
                  lookup, lookupDeadline, lookupRate, lookupEndpoint],
        column: 27,
        footer: """
        Routes: POST <path> (Apple), POST /notifications (App Store Server Notifications V2, while
        recording), GET /healthz, GET /readyz, GET /metrics (Prometheus text).
        One JSON line per request goes to standard error; it never holds the signedPayload, a key,
        or the customer's transaction id (only a hash salted per process). SIGTERM or SIGINT stops
        accepting, finishes the requests in flight and exits 0.

        With RETENTION_SYNC_PSEUDONYM_SECRET set (the same value on every replica and in the outcomes
        job), every decision is recorded as an event beside the state, with the customer as a keyed
        pseudonym, and notifications are accepted on --notifications-path; without it nothing is
        recorded (serve says so) and answering is unchanged. Answering never waits for the store.

        Promotional offers are signed with the In-App Purchase key from RETENTION_SYNC_KEY_ID,
        RETENTION_SYNC_ISSUER_ID and RETENTION_SYNC_PRIVATE_KEY_FILE (or RETENTION_SYNC_PRIVATE_KEY);
        without them, a snapshot with offers leaves /readyz at 503 and offers are answered with {}.
        """)

    struct Options: CommandOptions {
        var environments: [RetentionMessagingModels.Environment]
        var roots: [String]?
        var sources: SnapshotSourceOptions
        var listen: ListenAddress
        var path: String?
        var tlsCertificate: String?
        var tlsKey: String?
        var maxAge: Double
        var pollInterval: Double
        var maxConnections: Int
        var headTimeout: Double
        var idleTimeout: Double
        /// 0 never sheds.
        var shedAfter: Milliseconds
        var workers: Int
        var events: EventStoreOptions
        var notificationsPath: String
        var forwardNotifications: URL?
        var lookup: Lookup?

        struct Lookup {
            var deadline: Milliseconds
            var perSecond: Double?
            var endpoint: URL?
        }

        func validate() throws(CommandError) {
            let snapshot = ServeCommand.snapshot.name
            guard environments.count > 0 else {
                throw CommandError("serve needs --env sandbox, production, or sandbox,production", exitCode: .usage)
            }
            guard roots != nil else {
                throw CommandError("serve needs --root FILE: the root certificate(s) Apple's chain must lead to "
                                   + "(Apple Root CA - G3)", exitCode: .usage)
            }
            if let file = sources.snapshotFile {
                if sources.manifests != nil || sources.stateStore != nil {
                    throw CommandError("\(snapshot) serves a snapshot file on its own: give it without --manifests and --state-store",
                                       exitCode: .usage)
                }
                if file.contains("://") {
                    throw CommandError("\(snapshot) takes a snapshot file; for s3:// give --state-store", exitCode: .usage)
                }
            }
            if sources.stateStore != nil, sources.manifests == nil, sources.bundleId == nil {
                throw CommandError("--state-store needs the App's identity: give --manifests DIR, or --bundle-id ID "
                                   + "(and --app-apple-id N for production)", exitCode: .usage)
            }
            if environments.count > 1, sources.snapshotFile != nil || path != nil {
                throw CommandError("\(snapshot) and --path serve one environment; for both, use --manifests", exitCode: .usage)
            }
            if (tlsCertificate == nil) != (tlsKey == nil) {
                throw CommandError("--tls-cert and --tls-key go together", exitCode: .usage)
            }
            guard notificationsPath.hasPrefix("/"), !ServeDefaults.operationsPaths.contains(notificationsPath) else {
                throw CommandError("--notifications-path \(notificationsPath): give a path such as /notifications", exitCode: .usage)
            }
        }
    }

    static func parse(_ arguments: inout Arguments, context: CommandContext) throws(CommandError) -> Options {
        let environments = try arguments.value(Self.env, as: ArgumentList<RetentionMessagingModels.Environment>.self)?.elements ?? []
        let roots = try TrustRootsOption.read(&arguments, Self.root)
        let sources = try SnapshotSourceOptions.parse(&arguments, manifests: Self.manifests, snapshotFile: Self.snapshot, context: context)
        let positive = Seconds(.leastNonzeroMagnitude)...
        let listen = try arguments.value(Self.listen, as: ListenAddress.self) ?? ServeDefaults.listen
        let path = try arguments.value(Self.path)
        let certificate = try arguments.value(Self.tlsCert)
        let key = try arguments.value(Self.tlsKey)
        let maxAge = try arguments.value(Self.maxAge, as: Seconds.self) ?? Seconds(RealtimeService.Configuration.defaultMaxAge)
        let pollInterval = try arguments.value(Self.pollInterval, as: Seconds.self, in: positive, expected: "more than 0")
            ?? Seconds(RealtimeService.Configuration.defaultPollInterval)
        // Absent, the cap is lowered to fit the open-file limit; given, it is taken as it is.
        let maxConnections = try arguments.given(Self.maxConnections, as: Int.self, in: 1..., expected: "a whole number of at least 1")
            ?? SocketPlatform.connectionLimit(wanted: RealtimeHTTPProfile.maxConnections)
        let headTimeout = try arguments.value(Self.headTimeout, as: Seconds.self, in: positive, expected: "more than 0 seconds")
            ?? Seconds(RealtimeHTTPProfile.headTimeout)
        let idleTimeout = try arguments.value(Self.idleTimeout, as: Seconds.self, in: positive, expected: "more than 0 seconds")
            ?? Seconds(RealtimeHTTPProfile.idleTimeout)
        let shedAfter = try arguments.value(Self.shedAfter, as: Milliseconds.self)
            ?? Milliseconds(RealtimeService.Configuration.defaultShedAfter * 1000)
        let workers = try arguments.value(Self.workers, as: Int.self, in: 1...256, expected: "a whole number from 1 to 256")
            ?? ProcessInfo.processInfo.activeProcessorCount
        let events = try EventStoreOptions.parse(&arguments, context: context)
        let notificationsPath = try arguments.value(Self.notificationsPath, as: String.self) ?? RealtimeService.Configuration.defaultNotificationsPath
        let forwardNotifications = try arguments.value(Self.forwardNotifications, as: HTTPURLArgument.self)?.url
        let lookup = try parseLookup(&arguments)
        return Options(environments: environments, roots: roots, sources: sources, listen: listen, path: path,
                       tlsCertificate: certificate, tlsKey: key, maxAge: maxAge.value, pollInterval: pollInterval.value,
                       maxConnections: maxConnections, headTimeout: headTimeout.value, idleTimeout: idleTimeout.value, shedAfter: shedAfter,
                       workers: workers, events: events, notificationsPath: notificationsPath, forwardNotifications: forwardNotifications,
                       lookup: lookup)
    }

    private static func parseLookup(_ arguments: inout Arguments) throws(CommandError) -> Options.Lookup? {
        let on = arguments.flag(Self.lookup)
        let range = LiveLookupSettings.deadlineRange
        // `given`, not `value`: a declared default must not count as the option being set.
        let deadline = try arguments.given(Self.lookupDeadline, as: Milliseconds.self,
                                           in: Milliseconds(range.lowerBound * 1000)...Milliseconds(range.upperBound * 1000),
                                           expected: "from \(Int(range.lowerBound * 1000)) to \(Int(range.upperBound * 1000)) milliseconds")
        let rate = try arguments.given(Self.lookupRate, as: Double.self, in: 0.001...1000, expected: "a number of lookups per second above 0")
        let endpoint = try arguments.value(Self.lookupEndpoint, as: HTTPURLArgument.self)?.url
        guard on else {
            if deadline != nil || rate != nil || endpoint != nil {
                throw CommandError("--lookup-deadline, --lookup-rate and --lookup-endpoint set up --lookup: give --lookup too", exitCode: .usage)
            }
            return nil
        }
        if let endpoint, let problem = SubscriptionStatusClient.problem(with: endpoint) {
            throw CommandError("--lookup-endpoint: \(problem)", exitCode: .usage)
        }
        return Options.Lookup(deadline: deadline ?? Milliseconds(LiveLookupSettings.defaultDeadline * 1000), perSecond: rate, endpoint: endpoint)
    }

    static func run(_ options: Options, context: CommandContext) async throws -> ExitCode {
        let roots = try TrustRootsOption.load(options.roots ?? [], context: context)
        let resolved = try options.sources.resolve(options.environments, context: context)
        let endpoints = try resolved.map { source throws(CommandError) in try endpoint(source, path: options.path, context: context) }
        if Set(endpoints.map(\.path)).count != endpoints.count {
            throw CommandError("both environments would be served on \(endpoints[0].path); give them different "
                               + "realtimeURL paths in the App manifest", exitCode: .usage)
        }
        for endpoint in endpoints where ServeDefaults.operationsPaths.contains(endpoint.path) || !endpoint.path.hasPrefix("/") {
            throw CommandError("\(endpoint.path) cannot be the realtime path; choose another --path", exitCode: .usage)
        }
        // The bundle id signed into each offer comes from the snapshot being served.
        let signingKey = try SigningKeyOption.credentials(bundleId: resolved.first?.bundleId ?? ServeDefaults.placeholderBundleId,
                                                          context: context, unsetHint: "")
            .map { OfferSigningKey(keyId: $0.keyId, issuerId: $0.issuerId, privateKey: $0.privateKey) }
        if signingKey == nil {
            context.console.error("warning: no In-App Purchase key (RETENTION_SYNC_KEY_ID, RETENTION_SYNC_ISSUER_ID, "
                                  + "RETENTION_SYNC_PRIVATE_KEY_FILE): promotional offers will be answered with {}")
        }
        let tls = try tlsContext(options, context: context)

        let console = context.console
        if endpoints.contains(where: { $0.path == options.notificationsPath }) {
            throw CommandError("the realtime path and --notifications-path are both \(options.notificationsPath); choose another", exitCode: .usage)
        }
        let recording = try ServeRecording.start(options, sources: resolved, context: context)
        var configuration = RealtimeService.Configuration(endpoints: endpoints, trustedRoots: roots, maxAge: options.maxAge,
                                                          signingKey: signingKey, pollInterval: options.pollInterval, clock: SystemClock(),
                                                          shedAfter: options.shedAfter.value > 0 ? options.shedAfter.seconds : nil)
        configuration.recording = recording
        configuration.notificationsPath = options.notificationsPath
        configuration.onNotification = try ServeRecording.forwarder(options.forwardNotifications, context: context)
        configuration.lookup = try lookupSettings(options, recording: recording, signingKey: signingKey)
        let service = RealtimeService(configuration: configuration, log: RequestLog(sink: { console.error($0) }))
        let server: HTTPServer
        do {
            server = try HTTPServer(host: options.listen.host, port: options.listen.port,
                                    configuration: ServeDefaults.http(options, tls: tls),
                                    deferringHandler: { service.handle($0, later: $1) })
        } catch {
            throw CommandError("cannot listen on \(options.listen.argumentDescription): \(error.message)")
        }
        service.metrics.showConnections { server.statistics }
        service.startPolling()
        // Signals are watched before the first line that says serve is up: a SIGTERM right after it
        // drains and exits 0 like any other.
        let signalEvents = AsyncStream<String>.makeStream()
        let signals = SignalWatcher([SIGINT, SIGTERM, SIGHUP]) { signalEvents.continuation.yield(SignalWatcher.name(of: $0)) }
        defer { signals.cancel() }
        for endpoint in endpoints {
            context.console.print("serving \(endpoint.environment.rawValue) on \(server.baseURL.absoluteString)\(endpoint.path)")
        }
        context.console.print("operations: \(server.baseURL.absoluteString)/healthz /readyz /metrics")
        if recording != nil {
            context.console.print("notifications: \(server.baseURL.absoluteString)\(options.notificationsPath)")
        }
        for (environment, pace) in service.lookupPace.sorted(by: { $0.key < $1.key }) {
            context.console.print("lookups: \(environment.rawValue) within \(options.lookup?.deadline.argumentDescription ?? "") ms, "
                                  + "at most \(pace.argumentDescription) per second")
        }
        if !service.isReady {
            context.console.error("warning: not ready yet: " + service.readiness.joined(separator: "; "))
        }
        let reason = await untilStopped(signalEvents.stream, server: server, options: options, context: context)
        service.stopPolling()
        let drained = server.drain(timeout: RealtimeHTTPProfile.drainTimeout)
        if let recording {
            let counters = await recording.recorder.close()
            context.console.print("events: \(counters.summary)")
        }
        context.console.print("stopped (\(reason))\(drained ? "" : ": some connections did not finish in \(RealtimeHTTPProfile.drainTimeout.argumentDescription) seconds")")
        return .success
    }

    /// The live lookup's settings, when `--lookup` is given and serve has what it needs for it.
    private static func lookupSettings(_ options: Options, recording: RealtimeService.Recording?,
                                       signingKey: OfferSigningKey?) throws(CommandError) -> LiveLookupSettings? {
        guard let lookup = options.lookup else { return nil }
        guard recording != nil else {
            throw CommandError("--lookup keeps what it finds by the customer's pseudonym: set RETENTION_SYNC_PSEUDONYM_SECRET "
                               + "(the same value as the outcomes job)", exitCode: .usage)
        }
        guard signingKey != nil else {
            throw CommandError("--lookup calls the App Store Server API with the In-App Purchase key: set RETENTION_SYNC_KEY_ID, "
                               + "RETENTION_SYNC_ISSUER_ID and RETENTION_SYNC_PRIVATE_KEY_FILE", exitCode: .usage)
        }
        let transfers = 32
        let transport = CurlHTTPClient(configuration: .init(connectTimeout: lookup.deadline.seconds, timeout: lookup.deadline.seconds,
                                                            maxConcurrentTransfers: transfers, userAgent: "retention-sync-serve"))
        return LiveLookupSettings(deadline: lookup.deadline.seconds, perSecond: lookup.perSecond, base: lookup.endpoint,
                                  transport: transport, maxInFlight: transfers)
    }

    /// The endpoint of one resolved source: its path and where its snapshot is polled from.
    private static func endpoint(_ source: SnapshotSourceOptions.Resolved, path: String?,
                                 context: CommandContext) throws(CommandError) -> RealtimeEndpoint {
        let snapshots: any SnapshotSource
        switch source.place {
        case .file(let file):
            snapshots = FileSnapshotSource(path: context.url(file).path)
        case .store(let location, let owner):
            guard #available(macOS 15.0, *) else {
                throw CommandError("--state-store needs macOS 15 or later; use \(snapshot.name) FILE")
            }
            snapshots = StateSnapshotSource(store: try SnapshotSourceOptions.open(location, owner: owner, context: context))
        }
        return RealtimeEndpoint(path: path ?? source.realtimePath ?? ServeDefaults.realtimePath(for: source.environment),
                                environment: source.environment, source: snapshots,
                                appAppleId: source.appAppleId, bundleId: source.bundleId)
    }

    private static func tlsContext(_ options: Options, context: CommandContext) throws(CommandError) -> TLSContext? {
        guard let certificate = options.tlsCertificate, let key = options.tlsKey else { return nil }
        do {
            return try TLSContext(certificateFile: context.url(certificate).path, keyFile: context.url(key).path)
        } catch {
            throw CommandError(error.description)
        }
    }

    /// Waits for SIGINT or SIGTERM, reloading the TLS files on each SIGHUP; returns the signal's name.
    private static func untilStopped(_ events: AsyncStream<String>, server: HTTPServer, options: Options,
                                     context: CommandContext) async -> String {
        for await event in events {
            guard event == "SIGHUP" else { return event }
            guard options.tlsCertificate != nil else { continue }
            do {
                if let reloaded = try tlsContext(options, context: context) { server.replaceTLS(reloaded) }
                context.console.error(#"{"event":"tls_reloaded"}"#)
            } catch {
                context.console.error(#"{"event":"tls_reload_failed","message":"# + JSONLogText.string(error.description) + "}")
            }
        }
        return "stopped"
    }
}

/// What `serve` runs with when nothing says otherwise, in one place: help prints these, the command
/// reads them, and the demo serves on the same default path.
enum ServeDefaults {
    static let listen = ListenAddress(host: "127.0.0.1", port: 8080)
    /// The operations routes; neither the realtime path nor the notifications path may take one.
    static let operationsPaths = RealtimeService.operationsPaths
    /// The bundle id the signing key is read for when no source names one (a snapshot file not read yet);
    /// each offer is signed for the bundle id of the snapshot being served.
    static let placeholderBundleId = "serve"

    /// The realtime path of an environment whose App names no `realtimeURL`.
    static func realtimePath(for environment: RetentionMessagingModels.Environment) -> String {
        RealtimeService.defaultRealtimePath(for: environment)
    }

    /// The HTTP server's settings for `options` (the realtime profile's limits, the operator's choices).
    static func http(_ options: ServeCommand.Options, tls: TLSContext?) -> HTTPServerConfiguration {
        RealtimeHTTPProfile.configuration(maxConnections: options.maxConnections, idleTimeout: options.idleTimeout,
                                          headTimeout: options.headTimeout, eventLoops: options.workers, tls: tls)
    }
}
