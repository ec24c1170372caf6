public import Foundation
public import Manifests
public import RetentionMessagingModels
public import Basics
public import StateLocations
public import HTTPCore
public import RetentionMessaging
public import StateStore

/// The manifests of one directory, validated and derived for one environment, with where that
/// environment's published snapshot lives: what `plan`, `apply` and `status` start from.
public struct Workspace: Sendable {
    /// The manifests with the references validation resolved.
    public var validated: ValidatedManifests
    public var manifests: ManifestSet { validated.set }
    public var desired: DesiredState
    /// Where the environment's state document lives; nil when it has none (flows are then not published).
    public var stateLocation: StateLocation?
    /// The App's `snapshotPath`: a runtime snapshot file there is migrated into an empty store.
    public var legacySnapshotPath: String? { desired.snapshotPath }
    /// Every diagnostic `validate` would print (warnings only, when loading succeeded).
    public var diagnostics: [Diagnostic]

    /// Why a workspace could not be opened; `diagnostics` holds what validation found.
    public struct Failure: Error, Sendable {
        public enum Reason: Sendable, Equatable {
            /// The manifest directory does not exist.
            case noDirectory(String)
            /// The manifest directory is a file.
            case notADirectory(String)
            /// Validation found errors; nothing may be sent.
            case invalid(String, errors: Int)
            /// The App manifest lists environments and this is not one of them.
            case environmentNotManaged(SourceLocation, Environment)
            case derive(ReconcilerError)
        }

        public var reason: Reason
        public var diagnostics: [Diagnostic]
    }

    /// Loads and validates the manifests, derives `environment`, and finds its state store:
    /// `stateStore` (given on the command line), else the App's `environments.<env>.stateStore`, else its
    /// `snapshotPath` (the file then holds the state document).
    public static func open(directory: URL, displayPath: String, environment: Environment,
                            stateStore: StateLocation? = nil) throws(Failure) -> Workspace {
        let (validated, diagnostics) = try load(directory: directory, displayPath: displayPath)
        return try open(validated, environment: environment, stateStore: stateStore, diagnostics: diagnostics)
    }

    /// Another environment of manifests already loaded and validated (`performance-test` reaches
    /// production's state this way); the store is the App's unless `stateStore` is given.
    public static func open(_ validated: ValidatedManifests, environment: Environment, stateStore: StateLocation? = nil,
                            diagnostics: [Diagnostic] = []) throws(Failure) -> Workspace {
        let set = validated.set
        let desired: DesiredState
        do {
            desired = try derive(validated, environment: environment)
        } catch {
            throw Failure(reason: error.reason, diagnostics: diagnostics)
        }
        let location = stateStore ?? declaredStateLocation(of: set.app, environment: environment)
        return Workspace(validated: validated, desired: desired, stateLocation: location, diagnostics: diagnostics)
    }

    /// Where an environment's state lives when no `--state-store` is given: the App's
    /// `environments.<env>.stateStore`, else its `snapshotPath` (the file then holds the state
    /// document); nil when it names neither. Every command that finds a state store asks here.
    public static func declaredStateLocation(of app: AppManifest, environment: Environment) -> StateLocation? {
        guard let settings = app.settings(for: environment) else { return nil }
        // The loader parsed `stateStore` with the one location parser (a file is already resolved and confined).
        return settings.stateStore ?? settings.snapshotPath.map { .file(path: $0) }
    }

    /// Loads and validates the manifests; refuses them when validation finds an error.
    public static func load(directory: URL, displayPath: String) throws(Failure) -> (ValidatedManifests, [Diagnostic]) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory) else {
            throw Failure(reason: .noDirectory(displayPath), diagnostics: [])
        }
        guard isDirectory.boolValue else { throw Failure(reason: .notADirectory(displayPath), diagnostics: []) }
        let (_, diagnostics, validated) = ManifestLoader.loadAndCheck(directory: directory, displayPath: displayPath)
        let errors = diagnostics.filter { $0.severity == .error }.count
        // Every reference that names nothing is an error, so valid manifests always come resolved.
        guard let validated, errors == 0 else {
            throw Failure(reason: .invalid(displayPath, errors: max(errors, 1)), diagnostics: diagnostics)
        }
        return (validated, diagnostics)
    }

    /// Derives one environment of valid manifests.
    public static func derive(_ manifests: ValidatedManifests, environment: Environment) throws(Failure) -> DesiredState {
        let app = manifests.app
        if !app.environments.isEmpty, app.settings(for: environment) == nil {
            throw Failure(reason: .environmentNotManaged(app.location, environment), diagnostics: [])
        }
        do {
            return try Identities.derive(manifests, environment: environment)
        } catch {
            throw Failure(reason: .derive(error), diagnostics: [])
        }
    }

    /// The flows say what realtime requests get, but without a store they are never published.
    public var flowsUnpublished: Bool { stateLocation == nil && !desired.rules.isEmpty }

    /// Every pair the manifests name in any environment: the App's products and locales and every
    /// `Defaults` entry, those this environment leaves alone (an external message without an
    /// identifier here) included. A prune reads all of them: what a default shows is in use.
    public var pairsNamedByManifests: Set<ProductLocale> {
        let set = manifests
        return Set(set.app.products.flatMap { product in product.locales.map { ProductLocale(productId: product.id, locale: $0) } })
            .union(set.defaults.map { ProductLocale(productId: $0.productId, locale: $0.locale) })
    }
}

extension Reconciler {
    /// The reconciler for `workspace`'s environment: `api`, and the state store the workspace's
    /// location names (opened, nothing read yet; none when it names none), with the legacy snapshot
    /// file to migrate and the run recorded as the writer of each version.
    public static func open(_ workspace: Workspace, api: any RetentionMessagingAPI, refresh: DefaultsRefresh,
                            environment: [String: String], clock: any RetentionClock,
                            transport: @autoclosure () -> any HTTPTransport) throws(StateStoreError) -> Reconciler {
        var binding: StateBinding?
        if let location = workspace.stateLocation {
            let store = try StateStores.open(location, owner: workspace.desired.owner, environment: environment, transport: transport())
            binding = StateBinding(store: store, legacySnapshotPath: workspace.legacySnapshotPath,
                                   writer: StateWriter.current(environment: environment))
        }
        var reconciler = Reconciler(api: api, state: binding, refresh: refresh, clock: clock)
        reconciler.pairsNamedByManifests = workspace.pairsNamedByManifests
        return reconciler
    }
}
