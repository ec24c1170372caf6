import YAML

// An `App` document exactly as written. Decoding into these catches wrong types, missing keys and
// unknown keys; converting them into the model (App+Convert) resolves the rest.

struct RawApp: Decodable {
    var apiVersion: String
    var kind: String
    var bundleId: Located<String>
    var appAppleId: Located<Int64>?
    var identityNamespace: Located<String>?
    var environments: [String: Located<RawEnvironment>]
    var products: [Located<RawProduct>]
}

struct RawEnvironment: Decodable {
    var realtimeURL: Located<String>?
    var snapshotPath: Located<String>?
    var stateStore: Located<String>?
}

struct RawProduct: Decodable {
    var id: Located<String>
    var locales: [Located<String>]
    var advancedCommerce: Located<Bool>?
}

