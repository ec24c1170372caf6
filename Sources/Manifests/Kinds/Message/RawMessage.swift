// A `Message` document exactly as written.

struct RawMessage: Decodable {
    var apiVersion: String
    var kind: String
    var name: Located<String>
    var product: Located<String>?
    var headerPosition: Located<String>?
    var localizations: [String: Located<RawLocalization>]
}

struct RawLocalization: Decodable {
    var header: Located<String>
    var body: Located<String>
    var image: Located<RawImageReference>?
    var bulletPoints: [Located<RawBulletPoint>]?
}

struct RawImageReference: Decodable {
    var name: Located<String>
    var altText: Located<String>
}

struct RawBulletPoint: Decodable {
    var text: Located<String>
    var image: Located<String>
    var altText: Located<String>
}
