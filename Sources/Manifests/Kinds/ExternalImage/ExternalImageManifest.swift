public import Basics
public import RetentionMessagingModels

/// `kind: ExternalImage`: an image the tool did not upload and whose pixels it cannot know (Apple's
/// lists return identifiers, review states and sizes only), known by its identifier in each
/// environment. A `Message` localization shows it by name like an `Image`; it is gated by its
/// listed review state, and never uploaded, never rewritten and never pruned unless named.
public struct ExternalImageManifest: Sendable, Hashable {
    public var name: String
    /// The image's identifier in each environment, as written.
    public var identifiers: [Environment: String]
    /// Where each environment's identifier was written.
    public var identifierLocations: [Environment: SourceLocation] = [:]
    public var location: SourceLocation

    public init(name: String, identifiers: [Environment: String], location: SourceLocation) {
        self.name = name
        self.identifiers = identifiers
        self.location = location
    }

    /// The identifier in `environment`, lowercased.
    public func identifier(in environment: Environment) -> String? { identifiers[environment]?.lowercased() }
}
