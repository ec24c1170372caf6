import Foundation
import HTTPClient
import Manifests
import Reconciler
import RetentionMessaging
import RetentionMessagingModels
import StateLocations
import StateStore

/// The options `id`, `plan`, `apply` and `status` share: where the manifests are, which
/// environment, which API endpoint, and where the published snapshot lives.
struct EnvironmentOptions: Sendable {
    var manifestsPath: String
    var environment: Environment
    var endpoint: String?
    var stateStore: String?
    var refreshDefaults: DefaultsRefresh = .standard

    static let manifests = Option.manifests()
    static let env = Option("--env", value: "ENV", of: Environment.self, help: ["sandbox or production"])
    static let endpoint = Option("--endpoint", value: "URL", help: [
        "Talk to this API endpoint instead of Apple (e.g. `retention-sync",
        "emulator`); also RETENTION_SYNC_ENDPOINT. Plain http:// only on loopback.",
    ])
    static let stateStoreOption = Option("--state-store", aliases: ["--snapshot-store"], value: "LOCATION", completion: .file, help: [
        "s3://bucket/prefix or a file: the environment's state document (default:",
        "the App's environments.<env>.stateStore, else its snapshotPath)",
    ])
    static let refreshDefaultsOption = Option("--refresh-defaults", value: "N", help: [
        "Re-read N of the defaults the state records as applied (default 10,",
        "rotating with each apply), or 'all'; unrecorded pairs are always read",
    ])
    /// The options `plan`, `apply` and `status` begin with, in help order.
    static let options = [manifests, env, endpoint, stateStoreOption, refreshDefaultsOption]

    static let credentialsHelp = """
        Credentials come from RETENTION_SYNC_KEY_ID, RETENTION_SYNC_ISSUER_ID and RETENTION_SYNC_PRIVATE_KEY_FILE
        (or RETENTION_SYNC_PRIVATE_KEY with the PEM text); they are never printed.
        RETENTION_SYNC_CA_BUNDLE names a PEM file of trusted authorities to use instead of the
        system's (e.g. behind a TLS-inspecting proxy); TLS is always verified.
        """

    static func parse(_ arguments: inout Arguments, context: CommandContext) throws(CommandError) -> EnvironmentOptions {
        let manifestsPath = try arguments.value(orDefault: manifests) ?? Option.defaultManifests
        let environment = try arguments.required(env, as: Environment.self)
        return EnvironmentOptions(manifestsPath: manifestsPath, environment: environment,
                                  endpoint: try arguments.value(endpoint) ?? context.environment["RETENTION_SYNC_ENDPOINT"],
                                  stateStore: try arguments.value(stateStoreOption),
                                  refreshDefaults: try parseRefresh(try arguments.value(refreshDefaultsOption)))
    }

    static func parseRefresh(_ text: String?) throws(CommandError) -> DefaultsRefresh {
        guard let text else { return .standard }
        if text == "all" { return .all }
        guard let count = Int(text), count >= 0 else {
            throw CommandError("--refresh-defaults takes a number of pairs (0 or more) or 'all', not '\(text)'", exitCode: .usage)
        }
        return .window(count)
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

    static func parseEnvironment(_ name: String) throws(CommandError) -> Environment {
        guard let environment = Environment(rawValue: name.lowercased()) else {
            throw CommandError("--env must be sandbox or production, not '\(name)'", exitCode: .usage)
        }
        return environment
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
        let location: StateLocation?
        do throws(StateLocationError) {
            location = try stateStore.map { text throws(StateLocationError) in
                try StateLocation.parse(text, from: .commandLine(workingDirectory: context.currentDirectory))
            }
        } catch {
            throw CommandError("--state-store \(error.description)", exitCode: .usage)
        }
        do {
            let workspace = try Workspace.open(directory: context.url(manifestsPath), displayPath: manifestsPath,
                                               environment: environment, stateStore: location)
            DiagnosticsView.print(workspace.diagnostics, to: context.console)
            return workspace
        } catch {
            DiagnosticsView.print(error.diagnostics, to: context.console)
            throw CommandError(DiagnosticsView.describe(error))
        }
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
            if url.path.isEmpty || url.path == "/" { url = url.appendingPathComponent(String(RetentionMessagingPaths.base.dropFirst())) }
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
        return client
    }
}

/// What `plan --format` takes.
enum PlanFormat: String, CaseIterable, Sendable {
    case text, markdown, json, github
}

/// What `status --format` takes.
enum StatusReportFormat: String, CaseIterable, Sendable {
    case text, markdown, json
}

/// What `id --format` and `state show --format` take.
enum StatusFormat: String, CaseIterable, Sendable {
    case text, json
}
