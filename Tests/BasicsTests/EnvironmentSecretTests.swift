import Basics
import Foundation
import Testing

/// A secret comes from its variable, or from the file `<NAME>_FILE` names (a mounted Kubernetes
/// secret, a systemd credential); errors name the variable and the path, never the value.
@Suite("Secrets from the environment or from files")
struct EnvironmentSecretTests {
    static let name = "RETENTION_SYNC_EXAMPLE_SECRET"
    static let secret = "s3cret-value-0123456789abcdef0123"

    static func file(_ contents: String) throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("secret-\(UUID().uuidString)")
        try contents.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    @Test("the variable, or the file its _FILE names (trailing line breaks dropped, CRLF included), give the same value")
    func variableOrFile() throws {
        #expect(try EnvironmentSecret.value(Self.name, in: [Self.name: Self.secret]) == Self.secret)
        for ending in ["", "\n", "\r\n", "\n\n"] {
            let path = try Self.file(Self.secret + ending)
            defer { try? FileManager.default.removeItem(atPath: path) }
            #expect(try EnvironmentSecret.value(Self.name, in: [Self.name + "_FILE": path]) == Self.secret, "ending \(Array(ending.utf8))")
        }
        #expect(try EnvironmentSecret.value(Self.name, in: [:]) == nil)
        #expect(try EnvironmentSecret.value(Self.name, in: [Self.name: ""]) == nil)
    }

    @Test("both set, a missing or empty file, or a folder are refused, naming the variable and the path and never the value")
    func refusals() throws {
        let path = try Self.file(Self.secret)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let empty = try Self.file("\n")
        defer { try? FileManager.default.removeItem(atPath: empty) }
        let cases: [([String: String], String)] = [
            ([Self.name: Self.secret, Self.name + "_FILE": path], "both \(Self.name) and \(Self.name)_FILE are set: keep only one"),
            ([Self.name + "_FILE": path + ".missing"], "\(Self.name)_FILE names \(path).missing, which is not a file this process can read"),
            ([Self.name + "_FILE": FileManager.default.temporaryDirectory.path], "which is not a file this process can read"),
            ([Self.name + "_FILE": empty], "\(Self.name)_FILE names \(empty), which is empty"),
        ]
        for (environment, message) in cases {
            #expect {
                try EnvironmentSecret.value(Self.name, in: environment)
            } throws: { error in
                let text = (error as? EnvironmentSecret.Failure)?.description ?? ""
                return text.contains(message) && !text.contains(Self.secret)
            }
        }
    }
}
