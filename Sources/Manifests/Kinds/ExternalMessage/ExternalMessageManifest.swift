public import Basics
public import RetentionMessagingModels

/// `kind: ExternalMessage`: a message the tool did not upload and whose content it cannot know
/// (Apple's lists return identifiers and review states only), known by its identifier in each
/// environment. It can be used by defaults and flow rules like a `Message`, is gated by its listed
/// review state, and is never uploaded, never rewritten and never pruned unless named.
public struct ExternalMessageManifest: Sendable, Hashable {
    public var name: String
    /// The message's identifier in each environment, as written: one message serving every locale.
    /// Empty when it is localized.
    public var identifiers: [Environment: String]
    /// Where each environment's identifier was written.
    public var identifierLocations: [Environment: SourceLocation] = [:]
    /// Per locale, its message's identifier in each environment (`localizations:`): a campaign that is
    /// one message per locale at Apple, under one name. Empty when `identifiers` serves every locale.
    public var localizations: [String: [Environment: String]] = [:]
    /// Where each locale's key, and each of its identifiers, was written.
    public var localizationLocations: [String: SourceLocation] = [:]
    public var localizedIdentifierLocations: [String: [Environment: SourceLocation]] = [:]
    /// What the team believes the message says, per locale; never checked against Apple (unverified).
    public var assumedText: [AssumedText]
    public var location: SourceLocation

    public init(name: String, identifiers: [Environment: String], assumedText: [AssumedText], location: SourceLocation) {
        self.name = name
        self.identifiers = identifiers
        self.assumedText = assumedText
        self.location = location
    }

    /// Whether it is one message per locale (`localizations:`).
    public var isLocalized: Bool { !localizations.isEmpty }

    /// What a customer of `locale` is shown in `environment`, lowercased: the one identifier that serves
    /// every locale, else that locale's; nil when it has none there.
    public func identifier(in environment: Environment, locale: String) -> String? {
        if let identifier = identifiers[environment] { return identifier.lowercased() }
        return localizations[locale]?[environment]?.lowercased()
    }

    /// Every identifier it has in `environment`, lowercased and sorted, each with the locales it
    /// serves (nil: every locale).
    public func identifiers(in environment: Environment) -> [(identifier: String, locales: [String]?)] {
        if let identifier = identifiers[environment] { return [(identifier.lowercased(), nil)] }
        var locales: [String: [String]] = [:]
        for (locale, byEnvironment) in localizations {
            if let identifier = byEnvironment[environment] { locales[identifier.lowercased(), default: []].append(locale) }
        }
        return locales.sorted { $0.key < $1.key }.map { ($0.key, $0.value.sorted()) }
    }

    /// Whether it has any identifier in `environment`.
    public func hasIdentifier(in environment: Environment) -> Bool { !identifiers(in: environment).isEmpty }
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
