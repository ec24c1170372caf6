// A `Defaults` document exactly as written.

struct RawDefaults: Decodable {
    var apiVersion: String
    var kind: String
    var defaults: [Located<RawDefaultEntry>]
}

struct RawDefaultEntry: Decodable {
    var products: StarOrList
    var locales: StarOrList
    var message: Located<String>
}
