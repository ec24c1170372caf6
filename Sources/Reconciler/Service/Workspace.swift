public import Foundation
public import Manifests
public import RetentionMessagingModels
public import Basics

/// The manifests of one directory, validated and derived for one environment, with where that
/// environment's published snapshot lives: what `plan`, `apply` and `status` start from.
public struct Workspace: Sendable {
    public var manifests: ManifestSet
    public var desired: DesiredState
    /// Nil when the environment has no snapshot store (flows are then not published).
    public var store: SnapshotStore?
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

    /// Loads and validates the manifests, derives `environment`, and finds its snapshot store
    /// (`snapshotStore` overrides the App's `environments.<env>.snapshotPath`).
    public static func open(directory: URL, displayPath: String, environment: Environment,
                            snapshotStore: URL? = nil) throws(Failure) -> Workspace {
        let (set, diagnostics) = try load(directory: directory, displayPath: displayPath)
        let desired: DesiredState
        do {
            desired = try derive(set, environment: environment)
        } catch {
            throw Failure(reason: error.reason, diagnostics: diagnostics)
        }
        return Workspace(manifests: set, desired: desired, store: Reconciler.store(for: desired, override: snapshotStore),
                         diagnostics: diagnostics)
    }

    /// Loads and validates the manifests; refuses them when validation finds an error.
    public static func load(directory: URL, displayPath: String) throws(Failure) -> (ManifestSet, [Diagnostic]) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory) else {
            throw Failure(reason: .noDirectory(displayPath), diagnostics: [])
        }
        guard isDirectory.boolValue else { throw Failure(reason: .notADirectory(displayPath), diagnostics: []) }
        let (set, diagnostics) = ManifestLoader.loadAndValidate(directory: directory, displayPath: displayPath)
        let errors = diagnostics.filter { $0.severity == .error }.count
        guard let set, errors == 0 else {
            throw Failure(reason: .invalid(displayPath, errors: max(errors, 1)), diagnostics: diagnostics)
        }
        return (set, diagnostics)
    }

    /// Derives one environment of valid manifests.
    public static func derive(_ set: ManifestSet, environment: Environment) throws(Failure) -> DesiredState {
        if !set.app.environments.isEmpty, set.app.settings(for: environment) == nil {
            throw Failure(reason: .environmentNotManaged(set.app.location, environment), diagnostics: [])
        }
        do {
            return try Identities.derive(set, environment: environment)
        } catch {
            throw Failure(reason: .derive(error), diagnostics: [])
        }
    }

    /// The flows say what realtime requests get, but without a store they are never published.
    public var flowsUnpublished: Bool { store == nil && !desired.rules.isEmpty }
}
