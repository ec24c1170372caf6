// A `Defaults` document exactly as written.

struct RawDefaults: Decodable, Sendable {
    var apiVersion: String
    var kind: String
    var defaults: [Located<RawDefaultEntry>]
}

struct RawDefaultEntry: Decodable, Sendable {
    var products: StarOrList
    var locales: StarOrList
    var message: Located<String>
}
