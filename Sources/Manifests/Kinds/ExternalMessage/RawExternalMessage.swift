// An `ExternalMessage` document exactly as written.

struct RawExternalMessage: Decodable {
    var apiVersion: String
    var kind: String
    var name: Located<String>
    /// Environment name → the message's identifier there, serving every locale.
    var identifiers: [String: Located<String>]?
    /// Locale → environment name → that locale's message there (a campaign, one message per locale).
    var localizations: [String: Located<[String: Located<String>]>]?
    var assumedText: [String: Located<RawAssumedText>]?
}

struct RawAssumedText: Decodable {
    var header: Located<String>
    var body: Located<String>
}
