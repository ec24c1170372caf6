import Basics
import Foundation
import Manifests
import StateLocations
import Testing

/// An editor with the schema and `validate` agree on every `stateStore`: the schema's pattern is
/// checked against the one location parser on a table of examples.
@Suite("The stateStore grammar, in the schema and in the parser")
struct StateStoreGrammarTests {
    static let accepted = [
        "s3://team-state", "s3://team-state/", "s3://team-state/retention-sync", "s3://team-state/retention-sync/",
        "s3://team.state-1/a/b_c/d-e.f", "s3://abc/prod/state.json", "s3://team-state/...", "s3://team-state/a..b",
        ".retention-sync/state.json", "state", "a b/state.json", "../outside.json", "s3:/not-a-url", "ünïcode/state.json",
        "s3://team-state/" + String(repeating: "k", count: 900), "s3://team-state/" + String(repeating: "k", count: 900) + "/",
        "s3://" + String(repeating: "b", count: 63),
    ]
    static let refused = [
        "", " state.json", "state.json ", "/absolute/state.json", "file:///tmp/state.json", "gs://team-state/x",
        "S3://team-state", "s3://", "s3://ab", "s3://Team_State/x", "s3://-team/x", "s3://team-/x", "s3://team..state/x",
        "s3://team-state//", "s3://team-state//x", "s3://team-state/a//b", "s3://team-state/a/../b", "s3://team-state/./b",
        "s3://team-state/..", "s3://team-state/a b", "s3://team-state/a?b", "dir/a://b", "tab\there", "bell\u{7}",
        "s3://team-state/" + String(repeating: "k", count: 901), "s3://" + String(repeating: "b", count: 64),
    ]

    static func pattern() throws -> NSRegularExpression {
        let schema = try #require(try JSONSerialization.jsonObject(with: Data(ManifestSchema.json.utf8)) as? [String: Any])
        let definitions = try #require(schema["$defs"] as? [String: Any])
        let found = SchemaTests.properties(definitions).first { $0.0.hasSuffix(".stateStore") }
        let text = try #require(found?.1["pattern"] as? String)
        return try NSRegularExpression(pattern: text)
    }

    static func schemaAccepts(_ text: String, _ regex: NSRegularExpression) -> Bool {
        regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
    }

    static func parserAccepts(_ text: String) -> Bool {
        (try? StateLocation.syntax(text, inManifest: true)) != nil
    }

    @Test("every example the parser accepts, the schema accepts, and no other")
    func schemaMatchesParser() throws {
        let regex = try Self.pattern()
        for text in Self.accepted {
            #expect(Self.parserAccepts(text), "parser refuses \(text.debugDescription)")
            #expect(Self.schemaAccepts(text, regex), "schema refuses \(text.debugDescription)")
        }
        for text in Self.refused {
            #expect(!Self.parserAccepts(text), "parser accepts \(text.debugDescription)")
            #expect(!Self.schemaAccepts(text, regex), "schema accepts \(text.debugDescription)")
        }
    }

    @Test("a stateStore validate refuses is reported at its file:line:column with the parser's reason")
    func validationUsesTheParser() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("grammar-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data("""
        apiVersion: retention-sync/v1
        kind: App
        bundleId: com.example.app
        environments:
          sandbox:
            stateStore: s3://team-state//sandbox
        products:
          - id: com.example.monthly
            locales: [en-US]
        """.utf8).write(to: directory.appendingPathComponent("app.yaml"))
        let (_, diagnostics) = ManifestLoader.loadAndValidate(directory: directory, displayPath: "m")
        let problem = try #require(diagnostics.first { $0.code == "invalid-state-store" })
        #expect(problem.location?.line == 6)
        #expect(problem.location?.column == 17)
        #expect(problem.message == "stateStore 's3://team-state//sandbox' the key prefix has an empty, '.' or '..' part")
    }
}
