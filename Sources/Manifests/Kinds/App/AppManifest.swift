public import Basics
public import RetentionMessagingModels
public import StateLocations

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
    /// An Advanced Commerce API product (a generic product identifier), which a rule may answer with
    /// `advancedCommerce`; Apple ignores that answer for any other subscription.
    public var advancedCommerce: Bool = false
    public var location: SourceLocation
    /// Where individual fields were written, so diagnostics point at the exact value; a missing
    /// entry falls back to `location`. Typed, so a misspelt field cannot point at the wrong line.
    public var fieldLocations: [Field: SourceLocation] = [:]

    public enum Field: Hashable, Sendable {
        case id
        /// One entry of `locales`.
        case locale(String)
        case advancedCommerce
    }

    public init(id: String, locales: [String], location: SourceLocation) {
        self.id = id
        self.locales = locales
        self.location = location
    }
}
