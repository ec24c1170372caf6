// An `ExternalMessage` document exactly as written.

struct RawExternalMessage: Decodable {
    var apiVersion: String
    var kind: String
    var name: Located<String>
    /// Environment name → the message's identifier there.
    var identifiers: [String: Located<String>]
    var assumedText: [String: Located<RawAssumedText>]?
}

struct RawAssumedText: Decodable {
    var header: Located<String>
    var body: Located<String>
}
