// An `Image` document exactly as written.

struct RawImage: Decodable {
    var apiVersion: String
    var kind: String
    var name: Located<String>
    var file: Located<String>
    var size: Located<String>
}
