public import Basics

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
