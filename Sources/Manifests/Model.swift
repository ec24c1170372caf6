public import Basics
import Crypto
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

/// `kind: Image`.
public struct ImageManifest: Sendable, Hashable {
    public var name: String
    /// The path as written, relative to the manifest file's directory.
    public var file: String
    public var size: ImageSize
    /// The PNG file's bytes (empty if the file could not be read; the loader reports that).
    public let png: [UInt8]
    /// Lowercase hex SHA-256 of `png`, computed once when the manifest is made; empty when `png` is.
    public let sha256: String
    public var location: SourceLocation
    /// Where individual fields were written, so diagnostics point at the exact value; a missing
    /// entry falls back to `location`. Typed, so a misspelt field cannot point at the wrong line.
    public var fieldLocations: [Field: SourceLocation] = [:]

    public enum Field: Hashable, Sendable {
        case name, file, size
    }

    public init(name: String, file: String, size: ImageSize, png: [UInt8], location: SourceLocation) {
        self.init(name: name, file: file, size: size, png: png, sha256: "", location: location)
    }

    /// For callers that already hold the PNG's digest; an empty `sha256` is computed here.
    public init(name: String, file: String, size: ImageSize, png: [UInt8], sha256: String, location: SourceLocation) {
        self.name = name
        self.file = file
        self.size = size
        self.png = png
        self.sha256 = sha256.isEmpty && !png.isEmpty ? Digest.sha256Hex(png) : sha256
        self.location = location
    }
}

/// `kind: Message`. `name` is the message's purpose in identities.
public struct MessageManifest: Sendable, Hashable {
    public var name: String
    /// The one product this message is limited to; nil means every product (`*` in identities).
    public var product: String?
    public var headerPosition: HeaderPosition?
    /// Sorted by locale.
    public var localizations: [MessageLocalization]
    public var location: SourceLocation
    /// Where individual fields were written, so diagnostics point at the exact value; a missing
    /// entry falls back to `location`. Typed, so a misspelt field cannot point at the wrong line.
    public var fieldLocations: [Field: SourceLocation] = [:]

    public enum Field: Hashable, Sendable {
        case name, product, headerPosition
    }

    public init(name: String, product: String?, headerPosition: HeaderPosition?,
                localizations: [MessageLocalization], location: SourceLocation) {
        self.name = name
        self.product = product
        self.headerPosition = headerPosition
        self.localizations = localizations
        self.location = location
    }

    /// `productScope` in identities: the product, or `*`.
    public var productScope: String { product ?? "*" }

    public func localization(_ locale: String) -> MessageLocalization? {
        localizations.first { $0.locale == locale }
    }
}

public struct MessageLocalization: Sendable, Hashable {
    public var locale: String
    public var header: String
    public var body: String
    public var image: ImageReference?
    public var bulletPoints: [BulletPoint]
    public var location: SourceLocation
    /// Where individual fields were written, so diagnostics point at the exact value; a missing
    /// entry falls back to `location`. Typed, so a misspelt field cannot point at the wrong line.
    public var fieldLocations: [Field: SourceLocation] = [:]

    public enum Field: Hashable, Sendable {
        case header, body, bulletPoints
    }

    public init(locale: String, header: String, body: String, image: ImageReference?,
                bulletPoints: [BulletPoint], location: SourceLocation) {
        self.locale = locale
        self.header = header
        self.body = body
        self.image = image
        self.bulletPoints = bulletPoints
        self.location = location
    }
}

/// A reference from a message to an `Image` by name.
public struct ImageReference: Sendable, Hashable {
    public var name: String
    public var altText: String
    public var location: SourceLocation
    /// Where individual fields were written, so diagnostics point at the exact value; a missing
    /// entry falls back to `location`. Typed, so a misspelt field cannot point at the wrong line.
    public var fieldLocations: [Field: SourceLocation] = [:]

    public enum Field: Hashable, Sendable {
        case name, altText
    }

    public init(name: String, altText: String, location: SourceLocation) {
        self.name = name
        self.altText = altText
        self.location = location
    }
}

public struct BulletPoint: Sendable, Hashable {
    public var text: String
    /// The name of a `BULLET_POINT` image.
    public var image: String
    public var altText: String
    public var location: SourceLocation
    /// Where individual fields were written, so diagnostics point at the exact value; a missing
    /// entry falls back to `location`. Typed, so a misspelt field cannot point at the wrong line.
    public var fieldLocations: [Field: SourceLocation] = [:]

    public enum Field: Hashable, Sendable {
        case text, image, altText
    }

    public init(text: String, image: String, altText: String, location: SourceLocation) {
        self.text = text
        self.image = image
        self.altText = altText
        self.location = location
    }
}

/// One (product, locale) → message assignment from a `Defaults` document.
public struct DefaultAssignment: Sendable, Hashable {
    public var productId: String
    public var locale: String
    /// The message's name.
    public var message: String
    public var location: SourceLocation
    /// Where individual fields were written, so diagnostics point at the exact value; a missing
    /// entry falls back to `location`. Typed, so a misspelt field cannot point at the wrong line.
    public var fieldLocations: [Field: SourceLocation] = [:]

    public enum Field: Hashable, Sendable {
        case product, message
    }

    public init(productId: String, locale: String, message: String, location: SourceLocation) {
        self.productId = productId
        self.locale = locale
        self.message = message
        self.location = location
    }
}

/// `kind: Flow`: ordered realtime rules; the first that matches answers.
public struct FlowManifest: Sendable, Hashable {
    public var name: String
    /// Optional language fallbacks, e.g. `de-AT` → `de-DE`, used when no rule matches the exact locale.
    public var localeFallbacks: [String: String]
    /// In the order written.
    public var rules: [FlowRule]
    public var location: SourceLocation
    /// Where individual fields were written, so diagnostics point at the exact value; a missing
    /// entry falls back to `location`. Typed, so a misspelt field cannot point at the wrong line.
    public var fieldLocations: [Field: SourceLocation] = [:]

    public enum Field: Hashable, Sendable {
        case name
        /// A `localeFallbacks` key, and the locale it falls back to.
        case fallbackKey(String), fallbackTarget(String)
    }

    public init(name: String, localeFallbacks: [String: String], rules: [FlowRule], location: SourceLocation) {
        self.name = name
        self.localeFallbacks = localeFallbacks
        self.rules = rules
        self.location = location
    }
}

public struct FlowRule: Sendable, Hashable {
    /// Unique within the flow.
    public var name: String
    public var match: RuleMatch
    public var response: RuleResponse
    public var location: SourceLocation
    /// Where individual fields were written, so diagnostics point at the exact value; a missing
    /// entry falls back to `location`. Typed, so a misspelt field cannot point at the wrong line.
    public var fieldLocations: [Field: SourceLocation] = [:]

    public enum Field: Hashable, Sendable {
        case name, match, response
        case matchProduct(String), matchLocale(String), matchEnvironment(Environment)
        case window, windowFrom, windowUntil, split, splitGroup, splitPercent
        /// The message of whichever response kind the rule has.
        case responseMessage
        case responseProductId, responseBillingPlanType, responseOfferIdentifier
    }

    public init(name: String, match: RuleMatch, response: RuleResponse, location: SourceLocation) {
        self.name = name
        self.match = match
        self.response = response
        self.location = location
    }
}

/// Every condition must hold; a nil condition always holds.
public struct RuleMatch: Sendable, Hashable {
    public var products: [String]?
    public var locales: [String]?
    public var environments: [Environment]?
    /// Inclusive start, UNIX milliseconds (written as an RFC 3339 timestamp).
    public var notBefore: Int64?
    /// Exclusive end, UNIX milliseconds (written as an RFC 3339 timestamp).
    public var notAfter: Int64?
    public var split: TrafficSplit?

    public init(products: [String]? = nil, locales: [String]? = nil, environments: [Environment]? = nil,
                notBefore: Int64? = nil, notAfter: Int64? = nil, split: TrafficSplit? = nil) {
        self.products = products
        self.locales = locales
        self.environments = environments
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.split = split
    }
}

/// A stable share of customers: customers are hashed by `originalTransactionId` with the group's
/// name as salt into 10,000 buckets; rules of the same group take consecutive bucket ranges in the
/// order written, so `percent: 50` twice in one group is an even A/B split, and changing one group
/// never reshuffles the customers of another.
public struct TrafficSplit: Sendable, Hashable {
    public var group: String
    /// 0 < percent ≤ 100, at most two decimals.
    public var percent: Double

    public init(group: String, percent: Double) {
        self.group = group
        self.percent = percent
    }
}

public enum RuleResponse: Sendable, Hashable {
    /// Show this text message.
    case message(name: String)
    /// Offer another product of the same subscription group; the message must have no image or bullets.
    case alternateProduct(message: String, productId: String, billingPlanType: BillingPlanType?)
    /// Offer a promotional offer; the message must have no image or bullets.
    case promotionalOffer(message: String, offerIdentifier: String)
    /// Answer nothing, so Apple shows the default message.
    case none

    /// The message this response uses, if any.
    public var messageName: String? {
        switch self {
        case .message(let name): name
        case .alternateProduct(let message, _, _): message
        case .promotionalOffer(let message, _): message
        case .none: nil
        }
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
