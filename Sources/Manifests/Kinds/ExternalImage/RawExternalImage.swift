// An `ExternalImage` document exactly as written.

struct RawExternalImage: Decodable {
    var apiVersion: String
    var kind: String
    var name: Located<String>
    /// Environment name → the image's identifier there.
    var identifiers: [String: Located<String>]
}
