public import Manifests
import RetentionMessaging
public import RetentionMessagingModels
public import Runtime

/// One image the manifests derive for an environment. Two `Image` manifests with the same PNG and
/// size are the same content and therefore one identifier.
public struct DesiredImage: Codable, Sendable, Hashable {
    public var identifier: String
    /// The `Image` manifest names that hold this content, sorted.
    public var names: [String]
    public var size: ImageSize
    /// Lowercase hex SHA-256 of the PNG bytes.
    public var sha256: String

    public init(identifier: String, names: [String], size: ImageSize, sha256: String) {
        self.identifier = identifier
        self.names = names
        self.size = size
        self.sha256 = sha256
    }

    public var name: String { names.first ?? "" }
}

/// One message localization: what one `PUT /message/{identifier}` uploads.
public struct DesiredMessage: Codable, Sendable, Hashable {
    public var identifier: String
    /// The message's manifest name (its `purpose` in identities).
    public var name: String
    public var locale: String
    /// The product the message is limited to, or `*`.
    public var productScope: String
    /// First 16 hex digits of SHA-256 over the canonical JSON of `body`.
    public var contentVersion: String
    /// The exact upload body, image references resolved to image identifiers.
    public var body: UploadMessageRequestBody

    public init(identifier: String, name: String, locale: String, productScope: String,
                contentVersion: String, body: UploadMessageRequestBody) {
        self.identifier = identifier
        self.name = name
        self.locale = locale
        self.productScope = productScope
        self.contentVersion = contentVersion
        self.body = body
    }

    /// Every image identifier the message refers to, its own image first.
    public var imageIdentifiers: [String] { body.referencedImageIdentifiers }

    /// `name (locale)`, the way plans name a message localization.
    public var label: String { "\(name) (\(locale))" }
}

/// A message the tool did not upload (`kind: ExternalMessage`): known by its identifier in this
/// environment, its content unknown. Never uploaded, never pruned unless named.
public struct DesiredExternalMessage: Codable, Sendable, Hashable {
    public var identifier: String
    public var name: String
    /// What the team believes it says, per locale: unverified.
    public var assumedText: [AssumedText]?
    /// The locales it is the message of, when its name is a campaign of one message per locale
    /// (`localizations:`); nil when it serves every locale.
    public var locales: [String]?

    public init(identifier: String, name: String, assumedText: [AssumedText]?, locales: [String]? = nil) {
        self.identifier = identifier
        self.name = name
        self.assumedText = assumedText
        self.locales = locales
    }

    /// How plans and `status` name it.
    public var label: String {
        "\(name) (" + (locales.map { $0.joined(separator: ", ") + "; " } ?? "") + "external, content unknown)"
    }
}

/// An image the tool did not upload (`kind: ExternalImage`): known by its identifier in this
/// environment, its pixels unknown. Messages the manifests derive may show it; never uploaded,
/// never pruned unless named.
public struct DesiredExternalImage: Codable, Sendable, Hashable {
    public var identifier: String
    public var name: String

    public init(identifier: String, name: String) {
        self.identifier = identifier
        self.name = name
    }

    /// How plans and `status` name it.
    public var label: String { "\(name) (external, content unknown)" }
}

/// A (product, locale) pair and the message the manifests assign to it.
public struct DesiredDefault: Codable, Sendable, Hashable {
    public var productId: String
    public var locale: String
    public var messageName: String
    public var messageIdentifier: String

    public init(productId: String, locale: String, messageName: String, messageIdentifier: String) {
        self.productId = productId
        self.locale = locale
        self.messageName = messageName
        self.messageIdentifier = messageIdentifier
    }
}

/// A (product, locale) pair the App declares.
public struct ProductLocale: Codable, Sendable, Hashable, Comparable, CustomStringConvertible {
    public var productId: String
    public var locale: String

    public init(productId: String, locale: String) {
        self.productId = productId
        self.locale = locale
    }

    public static func < (lhs: ProductLocale, rhs: ProductLocale) -> Bool {
        (lhs.productId, lhs.locale) < (rhs.productId, rhs.locale)
    }

    public var description: String { "\(productId)/\(locale)" }
}

/// Everything the manifests ask for in one environment, with every identifier derived.
/// Sorted throughout, so its canonical JSON is a fingerprint of the manifests.
public struct DesiredState: Codable, Sendable, Hashable {
    public var environment: Environment
    public var bundleId: String
    public var appAppleId: Int64?
    public var identityNamespace: String
    /// Sorted by identifier.
    public var images: [DesiredImage]
    /// Sorted by name, then locale.
    public var messages: [DesiredMessage]
    /// Every pair the App declares plus every pair a default names, sorted: the pairs a plan reads.
    public var declaredPairs: [ProductLocale]
    /// Sorted by product, then locale.
    public var defaults: [DesiredDefault]
    /// The realtime URL to configure, if any.
    public var realtimeURL: String?
    /// Where the published snapshot lives, resolved against the manifest directory, if configured.
    public var snapshotPath: String?
    /// Every flow rule compiled as if all content were approved, in evaluation order.
    public var rules: [SnapshotRule]
    public var localeFallbacks: [String: String]
    /// Messages used by identifier (`kind: ExternalMessage`) that have one in this environment,
    /// sorted by name; nil when there are none (so older fingerprints stay the same).
    public var externalMessages: [DesiredExternalMessage]?
    /// Images used by identifier (`kind: ExternalImage`) that have one in this environment, sorted
    /// by name; nil when there are none (so older fingerprints stay the same).
    public var externalImages: [DesiredExternalImage]?

    /// PNG bytes by image identifier; not part of the fingerprint (the SHA-256 already is).
    public var pngs: [String: [UInt8]] = [:]

    // `snapshotPath` is absolute, so it stays out of the fingerprint: a plan saved in one checkout
    // must apply in another (CI jobs check out to different directories).
    enum CodingKeys: String, CodingKey {
        case environment, bundleId, appAppleId, identityNamespace, images, messages, declaredPairs
        case defaults, realtimeURL, rules, localeFallbacks, externalMessages, externalImages
    }

    /// The external messages, by identifier.
    public var externalByIdentifier: [String: DesiredExternalMessage] {
        Dictionary((externalMessages ?? []).map { ($0.identifier, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The external images, by identifier.
    public var externalImagesByIdentifier: [String: DesiredExternalImage] {
        Dictionary((externalImages ?? []).map { ($0.identifier, $0) }, uniquingKeysWith: { first, _ in first })
    }

    public init(environment: Environment, bundleId: String, appAppleId: Int64?, identityNamespace: String,
                images: [DesiredImage], messages: [DesiredMessage], declaredPairs: [ProductLocale],
                defaults: [DesiredDefault], realtimeURL: String?, snapshotPath: String?,
                rules: [SnapshotRule], localeFallbacks: [String: String],
                externalMessages: [DesiredExternalMessage]? = nil, externalImages: [DesiredExternalImage]? = nil,
                pngs: [String: [UInt8]]) {
        self.externalMessages = externalMessages
        self.externalImages = externalImages
        self.environment = environment
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.identityNamespace = identityNamespace
        self.images = images
        self.messages = messages
        self.declaredPairs = declaredPairs
        self.defaults = defaults
        self.realtimeURL = realtimeURL
        self.snapshotPath = snapshotPath
        self.rules = rules
        self.localeFallbacks = localeFallbacks
        self.pngs = pngs
    }


    /// `sha256:<hex>` over the canonical JSON of this desired state: what a saved plan was made from.
    public func fingerprint() throws -> String {
        "sha256:" + Hashing.sha256Hex(try CanonicalJSON.encode(self))
    }
}
