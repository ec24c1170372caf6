import Basics
public import CLIKit
public import Foundation
public import HTTPClient
public import Reconciler
public import RetentionMessaging
public import RetentionMessagingModels
public import StateLocations
public import Manifests
import Views

/// What `plan`, `apply`, `status`, `outcomes` and `performance-test` work on: where the manifests
/// are, which environment, which API endpoint, and where the environment's state lives. The
/// command line reads it (`EnvironmentOptions`); the demo and the tests build it directly.
public struct ReconcileTarget: Sendable {
    public var manifestsPath: String
    public var environment: Environment
    /// The API to talk to instead of Apple's, from `--endpoint` or `RETENTION_SYNC_ENDPOINT`.
    public var endpoint: APIEndpoint?
    public var stateStore: StateLocation?
    public var refreshDefaults: DefaultsRefresh = .standard


    public init(manifestsPath: String, environment: Environment, endpoint: APIEndpoint? = nil, stateStore: StateLocation? = nil,
                refreshDefaults: DefaultsRefresh = .standard) {
        self.manifestsPath = manifestsPath
        self.environment = environment
        self.endpoint = endpoint
        self.stateStore = stateStore
        self.refreshDefaults = refreshDefaults
    }

    /// libcurl's settings for real runs: the process environment (for proxies) and an optional CA bundle.
    public static func transportConfiguration(_ context: CommandContext) throws(CommandError) -> CurlHTTPClient.Configuration {
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
    /// `warnings: .summarized` is for commands that only read the manifests to find things (`results`):
    /// the manifests' warnings belong to `validate` and `plan`, so such a command prints one line
    /// counting them instead of repeating each on every run.
    public static func workspaceStep<T>(context: CommandContext, warnings: ManifestWarnings = .shown,
                                        _ step: () throws(Workspace.Failure) -> (T, [Diagnostic])) throws(CommandError) -> T {
        do {
            let (value, diagnostics) = try step()
            switch warnings {
            case .shown:
                DiagnosticsView.print(diagnostics, to: context.console)
            case .summarized(let command):
                DiagnosticsView.print(diagnostics.filter { $0.severity == .error }, to: context.console)
                let count = diagnostics.count { $0.severity == .warning }
                if count > 0 {
                    context.console.error("note: the manifests have \(count) warning\(count == 1 ? "" : "s"), not repeated by \(command); "
                                          + "retention-sync validate shows \(count == 1 ? "it" : "them")")
                }
            }
            return value
        } catch {
            DiagnosticsView.print(error.diagnostics, to: context.console)
            throw CommandError(DiagnosticsView.describe(error))
        }
    }

    /// Opens the manifests for this environment, printing every diagnostic; fails before any
    /// request when there is an error.
    public func openWorkspace(context: CommandContext) throws(CommandError) -> Workspace {
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
public struct APIProvider: Sendable {
    public var make: @Sendable (_ environment: Environment, _ bundleId: String, _ options: ReconcileTarget,
                         _ context: CommandContext) throws(CommandError) -> RetentionMessagingClient

    public init(make: @escaping @Sendable (_ environment: Environment, _ bundleId: String, _ options: ReconcileTarget,
                                           _ context: CommandContext) throws(CommandError) -> RetentionMessagingClient) {
        self.make = make
    }

    public static let live = APIProvider { environment, bundleId, options, context throws(CommandError) in
        let credentials: Credentials
        do {
            credentials = try Credentials.fromEnvironment(context.environment, bundleId: bundleId)
        } catch {
            throw CommandError("\(error); nothing was sent")
        }
        let client = RetentionMessagingClient(environment: environment, credentials: credentials,
                                              transport: CurlHTTPClient(configuration: try ReconcileTarget.transportConfiguration(context)),
                                              endpoint: options.endpoint?.url, clock: SystemClock())
        return client
    }
}

/// `--endpoint`: an absolute URL; one without a path means the API's base path on that host.
public struct APIEndpoint: ArgumentValue, Hashable {
    public var url: URL

    public init(argument text: String) throws(ArgumentError) {
        guard var url = URL(string: text), url.scheme != nil, url.host != nil else {
            throw .reason("'\(text)' is not an absolute URL (like http://127.0.0.1:8080)")
        }
        if url.path.isEmpty || url.path == "/" { url = url.appendingPathComponent(String(RetentionMessagingPaths.base.dropFirst())) }
        self.url = url
    }

    public var argumentDescription: String { url.absoluteString }
}

/// Whether a command prints the manifests' warnings one by one, or one line counting them (naming
/// the command, for the note).
public enum ManifestWarnings: Sendable {
    case shown
    case summarized(command: String)
}
