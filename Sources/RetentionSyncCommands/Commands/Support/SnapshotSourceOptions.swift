import CLIKit
import Foundation
import HTTPCore
import HTTPClient
import Manifests
import Reconciler
import RetentionMessagingModels
import StateLocations
import StateStore
import Views
import Operations

/// Where `serve` and `decide` find each environment's published snapshot, and whose it is: one
/// resolution for both, so `decide` previews exactly the snapshot `serve` answers from.
///
/// In order: a snapshot file given on the command line; else `--state-store` with the identity from
/// `--manifests` or `--bundle-id`/`--app-apple-id`; else the App's `environments.<env>.stateStore`,
/// else its `snapshotPath` (`Workspace.declaredStateLocation`, as `plan` and `apply` find it).
struct SnapshotSourceOptions: Sendable {
    /// Without the old `--snapshot-store` spelling: `serve` still reads that as its snapshot file
    /// until the deprecated spelling goes.
    static let stateStore = StateStoreOption.declaration(help: [
        "Serve the snapshot published in this state store (s3://bucket/prefix or a",
        "path); default: the App's environments.<env>.stateStore",
    ], oldSpelling: false)
    static let bundleId = Option("--bundle-id", value: "ID", help: [
        "The App's bundle id, for --state-store without --manifests",
    ])
    static let appAppleId = Option("--app-apple-id", value: "N", of: Int64.self, help: [
        "The App's appAppleId, for --state-store without --manifests (production)",
    ])

    /// `--manifests` when it was given; the default directory is used only when nothing else names a source.
    var manifests: String?
    var stateStore: StateLocation?
    var bundleId: String?
    var appAppleId: Int64?
    /// `serve --snapshot FILE` or `decide --snapshot FILE`, and how that option is spelt.
    var snapshotFile: String?
    var snapshotFileOption: String

    /// Where one environment's snapshot is, and the identity its requests are checked against.
    struct Resolved: Sendable {
        enum Place: Sendable, Equatable {
            /// A runtime snapshot file or a state document in a file, read as it is.
            case file(String)
            /// The published snapshot of an environment's state document.
            case store(StateLocation, StateOwner)
        }

        var environment: Environment
        var place: Place
        var bundleId: String?
        var appAppleId: Int64?
        /// The path of the App's `realtimeURL` for the environment, if it declares one.
        var realtimePath: String?
    }

    static func parse(_ arguments: inout Arguments, manifests: Option, snapshotFile: Option,
                      context: CommandContext) throws(CommandError) -> SnapshotSourceOptions {
        let appAppleId = try arguments.value(Self.appAppleId, as: Int64.self, in: 1..., expected: "a positive whole number")
        return SnapshotSourceOptions(manifests: try arguments.value(manifests),
                                     stateStore: try StateStoreOption.read(&arguments, Self.stateStore, context: context),
                                     bundleId: try arguments.value(Self.bundleId), appAppleId: appAppleId,
                                     snapshotFile: try arguments.value(snapshotFile), snapshotFileOption: snapshotFile.name)
    }

    /// The sources of `environments`; nil: the App's only environment (`decide` without `--env`).
    func resolve(_ environments: [Environment]?, context: CommandContext) throws(CommandError) -> [Resolved] {
        if let snapshotFile {
            guard let environment = environments?.first else {
                return [Resolved(environment: .production, place: .file(snapshotFile))]
            }
            return [Resolved(environment: environment, place: .file(snapshotFile))]
        }
        if manifests == nil, let stateStore, let bundleId {
            guard let environments else {
                throw CommandError("--state-store needs --env sandbox or production", exitCode: .usage)
            }
            return try environments.map { environment throws(CommandError) in
                if environment == .production, appAppleId == nil {
                    throw CommandError("serving production needs --app-apple-id N: Apple's payloads are checked against it",
                                       exitCode: .usage)
                }
                let owner = StateOwner(bundleId: bundleId, appAppleId: appAppleId, environment: environment)
                return Resolved(environment: environment, place: .store(stateStore, owner),
                                bundleId: bundleId, appAppleId: appAppleId)
            }
        }
        let path = manifests ?? Option.defaultManifests
        let app = try loadApp(path, context: context)
        return try chosen(environments, of: app).map { settings throws(CommandError) in
            let environment = settings.environment
            let owner = StateOwner(bundleId: app.bundleId, appAppleId: app.appAppleId, environment: environment)
            let location: StateLocation
            if let stateStore {
                location = stateStore
            } else if let declared = Workspace.declaredStateLocation(of: app, environment: environment) {
                location = declared
            } else {
                throw CommandError("\(settings.location): the App declares no snapshotPath for \(environment.rawValue) "
                                   + "and no stateStore; add one, or pass --state-store LOCATION or \(snapshotFileOption) FILE")
            }
            let urlPath = settings.realtimeURL.flatMap { URL(string: $0)?.path }.flatMap { $0.isEmpty ? nil : $0 }
            return Resolved(environment: environment, place: .store(location, owner), bundleId: app.bundleId,
                            appAppleId: app.appAppleId, realtimePath: urlPath)
        }
    }

    private func chosen(_ environments: [Environment]?, of app: AppManifest) throws(CommandError) -> [EnvironmentSettings] {
        guard let environments else {
            guard app.environments.count == 1, let only = app.environments.first else {
                let names = app.environments.map(\.environment.rawValue).joined(separator: " or ")
                throw CommandError("the App uses several environments: choose one with --env \(names)", exitCode: .usage)
            }
            return [only]
        }
        return try environments.map { environment throws(CommandError) in
            guard let settings = app.settings(for: environment) else {
                throw CommandError("\(app.location): the App does not use the \(environment.rawValue) environment")
            }
            return settings
        }
    }

    private func loadApp(_ manifests: String, context: CommandContext) throws(CommandError) -> AppManifest {
        let (set, diagnostics) = ManifestLoader.load(directory: context.url(manifests), displayPath: manifests)
        guard let app = set?.app else {
            let details = DiagnosticRenderer.render(diagnostics.filter { $0.severity == .error }, format: .text, color: false)
            throw CommandError("\(manifests): no usable App manifest to find the snapshot in; pass \(snapshotFileOption) FILE"
                               + (details.isEmpty ? "" : "\n" + details.trimmingCharacters(in: .newlines)))
        }
        return app
    }

    /// The store of a resolved place, opened as `plan` and `apply` open it.
    static func open(_ location: StateLocation, owner: StateOwner, context: CommandContext) throws(CommandError) -> any CompleteStateStore {
        let configuration = try EnvironmentOptions.transportConfiguration(context)
        do {
            return try StateStores.open(location, owner: owner, environment: context.environment,
                                        transport: CurlHTTPClient(configuration: configuration))
        } catch {
            throw CommandError(error.description)
        }
    }
}
