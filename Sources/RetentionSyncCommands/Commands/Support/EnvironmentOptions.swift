import Foundation
import HTTP
import Manifests
import Reconciler
import RetentionMessaging
import RetentionMessagingModels

/// The options `id`, `plan`, `apply` and `status` share: where the manifests are, which
/// environment, which API endpoint, and where the published snapshot lives.
struct EnvironmentOptions: Sendable {
    var manifestsPath: String
    var environment: Environment
    var endpoint: String?
    var snapshotStore: String?

    static let manifests = Option("--manifests", value: "DIR", completion: .directory,
                                  help: ["The manifest directory (default: manifests)"])
    static let env = Option("--env", value: "ENV", of: Environment.self, help: ["sandbox or production"])
    static let endpoint = Option("--endpoint", value: "URL", help: [
        "Talk to this API endpoint instead of Apple (e.g. `retention-sync emulator`);",
        "also RETENTION_SYNC_ENDPOINT. Plain http:// only on loopback.",
    ])
    static let snapshotStoreOption = Option("--snapshot-store", value: "FILE", completion: .file, help: [
        "Where the published runtime snapshot lives (default: the App's",
        "environments.<env>.snapshotPath, relative to the manifest directory)",
    ])
    /// The options `plan`, `apply` and `status` begin with, in help order.
    static let options = [manifests, env, endpoint, snapshotStoreOption]

    static let credentialsHelp = """
        Credentials come from RETENTION_SYNC_KEY_ID, RETENTION_SYNC_ISSUER_ID and RETENTION_SYNC_PRIVATE_KEY_FILE
        (or RETENTION_SYNC_PRIVATE_KEY with the PEM text); they are never printed.
        RETENTION_SYNC_CA_BUNDLE names a PEM file of trusted authorities to use instead of the
        system's (e.g. behind a TLS-inspecting proxy); TLS is always verified.
        """

    static func parse(_ arguments: inout Arguments, context: CommandContext) throws(CommandError) -> EnvironmentOptions {
        let manifestsPath = try arguments.value(manifests) ?? "manifests"
        let environment = try arguments.required(env, as: Environment.self)
        return EnvironmentOptions(manifestsPath: manifestsPath, environment: environment,
                                  endpoint: try arguments.value(endpoint) ?? context.environment["RETENTION_SYNC_ENDPOINT"],
                                  snapshotStore: try arguments.value(snapshotStoreOption))
    }

    /// libcurl's settings for real runs: the process environment (for proxies) and an optional CA bundle.
    static func transportConfiguration(_ context: CommandContext) throws(CommandError) -> CurlHTTPClient.Configuration {
        var configuration = CurlHTTPClient.Configuration()
        configuration.environment = context.environment
        if let bundle = context.environment["RETENTION_SYNC_CA_BUNDLE"], !bundle.isEmpty {
            let path = context.url(bundle).path
            guard FileManager.default.isReadableFile(atPath: path) else {
                throw CommandError("RETENTION_SYNC_CA_BUNDLE: cannot read \(bundle); set it to a PEM file of trusted certificate authorities, or unset it")
            }
            configuration.caBundlePath = path
        }
        return configuration
    }

    /// Loads and validates the manifests; prints every diagnostic; fails before any request when
    /// there is an error.
    static func loadManifests(_ path: String, context: CommandContext) throws(CommandError) -> ManifestSet {
        let directory = context.url(path)
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory)
        if exists && !isDirectory.boolValue {
            throw CommandError("\(path) is a file, not a manifest directory; pass the directory that holds the manifests with --manifests DIR")
        }
        guard exists else {
            throw CommandError("\(path): no such manifest directory (use --manifests DIR, or run 'retention-sync init \(path)')")
        }
        let (set, diagnostics) = ManifestLoader.loadAndValidate(directory: directory, displayPath: path)
        if !diagnostics.isEmpty {
            context.console.error(DiagnosticRenderer.render(diagnostics, format: .text, color: context.console.useColor)
                .trimmingCharacters(in: .newlines))
        }
        let errors = diagnostics.filter { $0.severity == .error }.count
        guard let set, errors == 0 else {
            throw CommandError("the manifests in \(path) have \(max(errors, 1)) error\(errors == 1 ? "" : "s"); nothing was sent (run 'retention-sync validate --manifests \(path)')")
        }
        return set
    }

    func loadManifests(context: CommandContext) throws(CommandError) -> ManifestSet {
        try Self.loadManifests(manifestsPath, context: context)
    }

    static func derive(_ manifests: ManifestSet, environment: Environment) throws(CommandError) -> DesiredState {
        if !manifests.app.environments.isEmpty, manifests.app.settings(for: environment) == nil {
            throw CommandError("\(manifests.app.location): the App manifest does not manage \(environment.rawValue); add it under environments:")
        }
        do {
            return try Identities.derive(manifests, environment: environment)
        } catch {
            throw CommandError(error.description)
        }
    }

    func store(for desired: DesiredState, context: CommandContext) -> SnapshotStore? {
        Reconciler.store(for: desired, override: snapshotStore.map { context.url($0) })
    }
}

/// Makes the API client for an environment. Real runs use libcurl against Apple (or `--endpoint`);
/// the demo and the tests hand in the in-process emulator instead.
struct APIProvider: Sendable {
    var make: @Sendable (_ environment: Environment, _ bundleId: String, _ options: EnvironmentOptions,
                         _ context: CommandContext) throws(CommandError) -> any RetentionMessagingAPI

    static let live = APIProvider { environment, bundleId, options, context throws(CommandError) in
        var endpoint: URL?
        if let text = options.endpoint, !text.isEmpty {
            guard var url = URL(string: text), url.scheme != nil, url.host != nil else {
                throw CommandError("--endpoint '\(text)' is not an absolute URL (like http://127.0.0.1:8080)", exitCode: .usage)
            }
            if url.path.isEmpty || url.path == "/" { url = url.appendingPathComponent("inApps/v1/messaging") }
            endpoint = url
        }
        let credentials: Credentials
        do {
            credentials = try Credentials.fromEnvironment(context.environment, bundleId: bundleId)
        } catch {
            throw CommandError("\(error); nothing was sent")
        }
        let client = RetentionMessagingClient(environment: environment, credentials: credentials,
                                              transport: CurlHTTPClient(configuration: try EnvironmentOptions.transportConfiguration(context)),
                                              endpoint: endpoint)
        let console = context.console
        client.onWait { seconds, reason in
            if console.isTerminal && seconds >= 1 {
                console.print("  … waiting \(Int(seconds.rounded(.up))) s (\(reason))")
            }
        }
        return client
    }
}

/// What `plan --format` takes.
enum PlanFormat: String, CaseIterable, Sendable {
    case text, markdown, json
}

/// What `status --format` and `id --format` take.
enum StatusFormat: String, CaseIterable, Sendable {
    case text, json
}
