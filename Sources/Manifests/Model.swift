public import Basics
public import Foundation
public import RetentionMessagingModels
public import StateLocations
import YAML

// The loaded, resolved form of a manifest directory. The loader fills it from YAML; the
// validator checks it; the reconciler derives identities and plans from it. Every element keeps
// where it was written so any later stage can point a person at the right line.

/// Everything one manifest directory declares.
public struct ManifestSet: Sendable {
    /// The directory the manifests were read from.
    public var directory: URL
    public var app: AppManifest
    /// Sorted by name.
    public var images: [ImageManifest]
    /// Sorted by name.
    public var messages: [MessageManifest]
    /// Every (product, locale) → message assignment, expanded from `Defaults` documents
    /// (`*` and locale lists resolved), sorted by product then locale.
    public var defaults: [DefaultAssignment]
    /// Sorted by name.
    public var flows: [FlowManifest]

    public init(directory: URL, app: AppManifest, images: [ImageManifest], messages: [MessageManifest],
                defaults: [DefaultAssignment], flows: [FlowManifest]) {
        self.directory = directory
        var app = app
        // The loader hands in resolved paths; a set built in memory may name them relative to `directory`.
        for index in app.environments.indices {
            if let path = app.environments[index].snapshotPath, !path.hasPrefix("/") {
                app.environments[index].snapshotPath = directory.appendingPathComponent(path).standardizedFileURL.path
            }
        }
        self.app = app
        self.images = images
        self.messages = messages
        self.defaults = defaults
        self.flows = flows
    }

    public func image(named name: String) -> ImageManifest? { images.first { $0.name == name } }
    public func message(named name: String) -> MessageManifest? { messages.first { $0.name == name } }
}

/// `kind: App`.
public struct AppManifest: Sendable, Hashable {
    public var bundleId: String
    public var appAppleId: Int64?
    /// Overrides the project's fixed identity namespace (lowercase UUID string) when set.
    public var identityNamespace: String?
    /// The environments this app manages, with their settings; sorted (sandbox first).
    public var environments: [EnvironmentSettings]
    /// Sorted by id.
    public var products: [ProductManifest]
    public var location: SourceLocation
    /// Where individual fields were written, so diagnostics point at the exact value; a missing
    /// entry falls back to `location`. Typed, so a misspelt field cannot point at the wrong line.
    public var fieldLocations: [Field: SourceLocation] = [:]

    public enum Field: Hashable, Sendable {
        case bundleId, appAppleId, identityNamespace, environments
    }

    public init(bundleId: String, appAppleId: Int64?, identityNamespace: String?,
                environments: [EnvironmentSettings], products: [ProductManifest], location: SourceLocation) {
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.identityNamespace = identityNamespace
        self.environments = environments
        self.products = products
        self.location = location
    }

    public func settings(for environment: Environment) -> EnvironmentSettings? {
        environments.first { $0.environment == environment }
    }

    public func product(_ id: String) -> ProductManifest? { products.first { $0.id == id } }
}

public struct EnvironmentSettings: Sendable, Hashable {
    public var environment: Environment
    /// The realtime URL to configure (`https://…`), if the app serves realtime messages there.
    public var realtimeURL: String?
    /// Where the published runtime snapshot is stored: an absolute path, resolved once (by the
    /// loader, or by `ManifestSet.init` for a set built in memory).
    public var snapshotPath: String?
    /// Where the environment's state document lives (`stateStore:`), if the App names it: parsed and,
    /// for a file, resolved inside the manifest directory by the one location parser.
    public var stateStore: StateLocation?
    public var location: SourceLocation
    /// Where individual fields were written, so diagnostics point at the exact value; a missing
    /// entry falls back to `location`. Typed, so a misspelt field cannot point at the wrong line.
    public var fieldLocations: [Field: SourceLocation] = [:]

    public enum Field: Hashable, Sendable {
        case realtimeURL, snapshotPath, stateStore
    }

    public init(environment: Environment, realtimeURL: String?, snapshotPath: String?, location: SourceLocation) {
        self.environment = environment
        self.realtimeURL = realtimeURL
        self.snapshotPath = snapshotPath
        self.location = location
    }
}

public struct ProductManifest: Sendable, Hashable {
    public var id: String
    /// App Store locale codes, sorted.
    public var locales: [String]
    public var location: SourceLocation
    /// Where individual fields were written, so diagnostics point at the exact value; a missing
    /// entry falls back to `location`. Typed, so a misspelt field cannot point at the wrong line.
    public var fieldLocations: [Field: SourceLocation] = [:]

    public enum Field: Hashable, Sendable {
        case id
        /// One entry of `locales`.
        case locale(String)
    }

    public init(id: String, locales: [String], location: SourceLocation) {
        self.id = id
        self.locales = locales
        self.location = location
    }
}

/// Types that remember where their fields were written.
public protocol FieldLocated {
    associatedtype Field: Hashable
    var location: SourceLocation { get }
    var fieldLocations: [Field: SourceLocation] { get }
}

extension FieldLocated {
    /// Where `field` was written, or where the whole element was when that is unknown.
    public func location(of field: Field) -> SourceLocation { fieldLocations[field] ?? location }
}

extension AppManifest: FieldLocated {}
extension EnvironmentSettings: FieldLocated {}
extension ProductManifest: FieldLocated {}
extension ImageManifest: FieldLocated {}
extension MessageManifest: FieldLocated {}
extension MessageLocalization: FieldLocated {}
extension ImageReference: FieldLocated {}
extension BulletPoint: FieldLocated {}
extension DefaultAssignment: FieldLocated {}
extension FlowManifest: FieldLocated {}
extension FlowRule: FieldLocated {}
