public import Basics
public import RetentionMessagingModels

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
