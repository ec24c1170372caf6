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
import Operations

/// `ReconcileTarget` as the command line reads it: the one place that reads these options,
/// `RETENTION_SYNC_ENDPOINT` included.
typealias EnvironmentOptions = ReconcileTarget

extension ReconcileTarget {
    static let manifests = Option.manifests()
    static let env = Option("--env", value: "ENV", of: Environment.self, help: ["The environment to work on"]).required()
    static let endpointVariable = "RETENTION_SYNC_ENDPOINT"
    static let endpoint = Option("--endpoint", value: "URL", help: [
        "Talk to this API endpoint instead of Apple (e.g. `retention-sync",
        "emulator`); also \(endpointVariable). Plain http:// only on loopback.",
    ])
    static let stateStoreOption = StateStoreOption.declaration(help: [
        "s3://bucket/prefix or a file: the environment's state document (default:",
        "the App's environments.<env>.stateStore, else its snapshotPath)",
    ])
    static let refreshDefaultsOption = Option("--refresh-defaults", value: "N", of: DefaultsRefresh.self, default: .standard, help: [
        "Re-read N of the defaults the state records as applied (rotating with",
        "each apply), or 'all'; unrecorded pairs are always read",
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
