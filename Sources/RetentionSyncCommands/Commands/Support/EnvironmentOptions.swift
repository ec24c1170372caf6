import Basics
import CLIKit
import Foundation
import HTTPClient
import Manifests
import Reconciler
import RetentionMessaging
import RetentionMessagingModels
import StateLocations
import StateStore
import Views

/// The options `plan`, `apply`, `status`, `outcomes` and `performance-test` share: where the
/// manifests are, which environment, which API endpoint, and where the environment's state lives.
/// The one place that reads them, `RETENTION_SYNC_ENDPOINT` included.
struct EnvironmentOptions: Sendable {
    var manifestsPath: String
    var environment: Environment
    /// The API to talk to instead of Apple's, from `--endpoint` or `RETENTION_SYNC_ENDPOINT`.
    var endpoint: APIEndpoint?
    var stateStore: StateLocation?
    var refreshDefaults: DefaultsRefresh = .standard

    static let manifests = Option.manifests()
    static let env = Option("--env", value: "ENV", of: Environment.self, help: ["The environment to work on"])
    static let endpointVariable = "RETENTION_SYNC_ENDPOINT"
    static let endpoint = Option("--endpoint", value: "URL", help: [
        "Talk to this API endpoint instead of Apple (e.g. `retention-sync",
        "emulator`); also \(endpointVariable). Plain http:// only on loopback.",
    ])
    static let stateStoreOption = StateStoreOption.declaration(help: [
        "s3://bucket/prefix or a file: the environment's state document (default:",
        "the App's environments.<env>.stateStore, else its snapshotPath)",
    ])
    static let refreshDefaultsOption = Option("--refresh-defaults", value: "N", help: [
        "Re-read N of the defaults the state records as applied (default 10,",
        "rotating with each apply), or 'all'; unrecorded pairs are always read",
    ])
    /// What `outcomes` and `performance-test` take: the environment without the defaults refresh.
    static let connection = [manifests, env, endpoint, stateStoreOption]
    /// The options `plan`, `apply` and `status` begin with, in help order.
    static let options = connection + [refreshDefaultsOption]

    static let credentialsHelp = """
        Credentials come from RETENTION_SYNC_KEY_ID, RETENTION_SYNC_ISSUER_ID and RETENTION_SYNC_PRIVATE_KEY_FILE
        (or RETENTION_SYNC_PRIVATE_KEY with the PEM text); they are never printed.
        RETENTION_SYNC_CA_BUNDLE names a PEM file of trusted authorities to use instead of the
        system's (e.g. behind a TLS-inspecting proxy); TLS is always verified.
        """

    static func parse(_ arguments: inout Arguments, context: CommandContext) throws(CommandError) -> EnvironmentOptions {
        let manifestsPath = try arguments.value(manifests, as: String.self) ?? Option.defaultManifests
        let environment = try arguments.required(env, as: Environment.self)
        // An empty endpoint, on the command line or in the variable, means Apple's.
        let endpointText = try arguments.value(endpoint) ?? context.environment[endpointVariable]
        let endpoint = try endpointText.flatMap { text throws(CommandError) in
            text.isEmpty ? nil : try Arguments.read(text, as: APIEndpoint.self, for: Self.endpoint, relativeTo: nil)
        }
        return EnvironmentOptions(manifestsPath: manifestsPath, environment: environment, endpoint: endpoint,
                                  stateStore: try StateStoreOption.read(&arguments, stateStoreOption, context: context),
                                  refreshDefaults: try arguments.value(refreshDefaultsOption, as: DefaultsRefresh.self) ?? .standard)
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

    /// Runs one workspace step, printing its diagnostics and wording its failure.
    static func workspaceStep<T>(context: CommandContext, _ step: () throws(Workspace.Failure) -> (T, [Diagnostic])) throws(CommandError) -> T {
        do {
            let (value, diagnostics) = try step()
            DiagnosticsView.print(diagnostics, to: context.console)
            return value
        } catch {
            DiagnosticsView.print(error.diagnostics, to: context.console)
            throw CommandError(DiagnosticsView.describe(error))
        }
    }

    /// Opens the manifests for this environment, printing every diagnostic; fails before any
    /// request when there is an error.
    func openWorkspace(context: CommandContext) throws(CommandError) -> Workspace {
        do {
            let workspace = try Workspace.open(directory: context.url(manifestsPath), displayPath: manifestsPath,
                                               environment: environment, stateStore: stateStore)
            DiagnosticsView.print(workspace.diagnostics, to: context.console)
            return workspace
        } catch {
            DiagnosticsView.print(error.diagnostics, to: context.console)
            throw CommandError(DiagnosticsView.describe(error))
        }
    }
}

/// Makes the API client for an environment. Real runs use libcurl against Apple (or `--endpoint`);
/// the demo and the tests hand in the in-process emulator instead, through the same client type, so
/// what a command needs of it beyond the reconciler's role (its clock, its waits, Notification
/// History, the performance test) is there without a cast.
struct APIProvider: Sendable {
    var make: @Sendable (_ environment: Environment, _ bundleId: String, _ options: EnvironmentOptions,
                         _ context: CommandContext) throws(CommandError) -> RetentionMessagingClient

    static let live = APIProvider { environment, bundleId, options, context throws(CommandError) in
        let credentials: Credentials
        do {
            credentials = try Credentials.fromEnvironment(context.environment, bundleId: bundleId)
        } catch {
            throw CommandError("\(error); nothing was sent")
        }
        let client = RetentionMessagingClient(environment: environment, credentials: credentials,
                                              transport: CurlHTTPClient(configuration: try EnvironmentOptions.transportConfiguration(context)),
                                              endpoint: options.endpoint?.url, clock: SystemClock())
        return client
    }
}

/// `--endpoint`: an absolute URL; one without a path means the API's base path on that host.
struct APIEndpoint: ArgumentValue, Hashable {
    var url: URL

    init(argument text: String) throws(ArgumentError) {
        guard var url = URL(string: text), url.scheme != nil, url.host != nil else {
            throw .reason("'\(text)' is not an absolute URL (like http://127.0.0.1:8080)")
        }
        if url.path.isEmpty || url.path == "/" { url = url.appendingPathComponent(String(RetentionMessagingPaths.base.dropFirst())) }
        self.url = url
    }

    var argumentDescription: String { url.absoluteString }
}

/// `--state-store LOCATION`: one declaration (spelling, value, completion, the old `--snapshot-store`
/// spelling) for every command that reads an environment's state; each command words its help.
enum StateStoreOption {
    static let name = "--state-store"
    /// The spelling before `--state-store`; `serve` keeps it for its snapshot file until that goes.
    static let oldSpelling = "--snapshot-store"

    static func declaration(help: [String], oldSpelling: Bool = true) -> Option {
        Option(name, aliases: oldSpelling ? [Self.oldSpelling] : [], value: "LOCATION", of: StateLocation.self,
               completion: .file, help: help)
    }

    /// The location, a relative path resolved against the working directory.
    static func read(_ arguments: inout Arguments, _ option: Option, context: CommandContext) throws(CommandError) -> StateLocation? {
        try arguments.value(option, as: StateLocation.self, relativeTo: context.currentDirectory)
    }
}

/// What `status --format` takes.
enum StatusReportFormat: String, CaseIterable, Sendable, ArgumentValue {
    case text, markdown, json
}

/// What `id --format` and `state show --format` take.
enum StatusFormat: String, CaseIterable, Sendable, ArgumentValue {
    case text, json
}
