public import Basics
public import RetentionMessagingModels

/// `kind: ExternalMessage`: a message the tool did not upload and whose content it cannot know
/// (Apple's lists return identifiers and review states only), known by its identifier in each
/// environment. It can be used by defaults and flow rules like a `Message`, is gated by its listed
/// review state, and is never uploaded, never rewritten and never pruned unless named.
public struct ExternalMessageManifest: Sendable, Hashable {
    public var name: String
    /// The message's identifier in each environment, lowercased, as written.
    public var identifiers: [Environment: String]
    /// Where each environment's identifier was written.
    public var identifierLocations: [Environment: SourceLocation] = [:]
    /// What the team believes the message says, per locale; never checked against Apple (unverified).
    public var assumedText: [AssumedText]
    public var location: SourceLocation

    public init(name: String, identifiers: [Environment: String], assumedText: [AssumedText], location: SourceLocation) {
        self.name = name
        self.identifiers = identifiers
        self.assumedText = assumedText
        self.location = location
    }

    /// The identifier in `environment`, lowercased.
    public func identifier(in environment: Environment) -> String? { identifiers[environment]?.lowercased() }
}

/// The text a team believes an external message holds in one locale: shown in plans as unverified.
public struct AssumedText: Sendable, Hashable, Codable {
    public var locale: String
    public var header: String
    public var body: String
    /// Where the locale key, the header and the body were written (not encoded).
    public var location: SourceLocation?
    public var headerLocation: SourceLocation?
    public var bodyLocation: SourceLocation?

    enum CodingKeys: String, CodingKey { case locale, header, body }

    public init(locale: String, header: String, body: String) {
        self.locale = locale
        self.header = header
        self.body = body
    }
}
