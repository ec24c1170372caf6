import Crypto
import Foundation
import RetentionMessaging
import RetentionMessagingModels
import Testing

@Suite("Credentials from the environment")
struct CredentialsTests {
    let key = ES256PrivateKey.generate()
    var pemBody: String {
        key.pkcs8PEM.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
    }

    func environment(_ changes: [String: String?] = [:]) -> [String: String] {
        var environment = [
            "RETENTION_SYNC_KEY_ID": "ABC123DEFG",
            "RETENTION_SYNC_ISSUER_ID": "57246542-96fe-1a63-e053-0824d011072a",
            "RETENTION_SYNC_PRIVATE_KEY": key.pkcs8PEM,
        ]
        for (name, value) in changes { environment[name] = value }
        return environment
    }

    @Test("a key given as PEM text is read with the key and issuer ids")
    func pemText() throws {
        let credentials = try Credentials.fromEnvironment(environment(), bundleId: "com.example.app")
        #expect(credentials.keyId == "ABC123DEFG")
        #expect(credentials.issuerId == "57246542-96fe-1a63-e053-0824d011072a")
        #expect(credentials.bundleId == "com.example.app")
        #expect(credentials.privateKey.publicKey.spkiPEM == key.publicKey.spkiPEM)
    }

    @Test("a key given as a .p8 file path is read")
    func keyFile() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("AuthKey_\(UUID().uuidString).p8")
        try key.pkcs8PEM.write(to: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: path) }
        let credentials = try Credentials.fromEnvironment(
            environment(["RETENTION_SYNC_PRIVATE_KEY": nil, "RETENTION_SYNC_PRIVATE_KEY_FILE": path.path]), bundleId: "b")
        #expect(credentials.privateKey.publicKey.spkiPEM == key.publicKey.spkiPEM)
    }

    @Test("a PEM pasted on one line with literal \\n, as CI secret stores keep it, is accepted")
    func escapedNewlines() throws {
        let oneLine = key.pkcs8PEM.replacingOccurrences(of: "\n", with: "\\n")
        let credentials = try Credentials.fromEnvironment(environment(["RETENTION_SYNC_PRIVATE_KEY": oneLine]), bundleId: "b")
        #expect(credentials.privateKey.publicKey.spkiPEM == key.publicKey.spkiPEM)
    }

    @Test("each missing variable is named in the error", arguments: [
        ("RETENTION_SYNC_KEY_ID", "RETENTION_SYNC_KEY_ID is not set"),
        ("RETENTION_SYNC_ISSUER_ID", "RETENTION_SYNC_ISSUER_ID is not set"),
        ("RETENTION_SYNC_PRIVATE_KEY", "RETENTION_SYNC_PRIVATE_KEY_FILE"),
    ])
    func missing(variable: String, expected: String) {
        #expect {
            try Credentials.fromEnvironment(environment([variable: nil]), bundleId: "b")
        } throws: { error in
            guard case .credentials(let text) = error as? RetentionMessagingError else { return false }
            return text.contains(expected)
        }
    }

    @Test("setting both the key text and the key file is refused")
    func both() {
        #expect(throws: RetentionMessagingError.self) {
            try Credentials.fromEnvironment(environment(["RETENTION_SYNC_PRIVATE_KEY_FILE": "/tmp/AuthKey.p8"]), bundleId: "b")
        }
    }

    @Test("a malformed key is refused without repeating what was given")
    func malformedKey() throws {
        let broken = key.pkcs8PEM.replacingOccurrences(of: "A", with: "B")
        let error = try #require(throws: RetentionMessagingError.self) {
            try Credentials.fromEnvironment(environment(["RETENTION_SYNC_PRIVATE_KEY": broken]), bundleId: "b")
        }
        #expect(error.description.contains("RETENTION_SYNC_PRIVATE_KEY"))
        let brokenBody = broken.split(separator: "\n").filter { !$0.hasPrefix("-----") }
        for line in brokenBody { #expect(!error.description.contains(line)) }
    }

    @Test("a key id with spaces or punctuation is refused")
    func malformedKeyId() {
        #expect(throws: RetentionMessagingError.self) {
            try Credentials.fromEnvironment(environment(["RETENTION_SYNC_KEY_ID": "ABC 123/"]), bundleId: "b")
        }
    }

    @Test("printing, debug-printing and dumping credentials never shows the key")
    func redacted() throws {
        let credentials = try Credentials.fromEnvironment(environment(), bundleId: "com.example.app")
        var dumped = ""
        dump(credentials, to: &dumped)
        for text in [String(describing: credentials), String(reflecting: credentials), dumped, "\(credentials)"] {
            #expect(text.contains("ABC123DEFG"))
            #expect(!text.contains(pemBody.prefix(24)))
            #expect(!text.contains("PRIVATE KEY"))
        }
    }
}
