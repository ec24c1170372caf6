import Foundation
import Manifests
import RetentionMessagingModels
import Testing

/// The JSON Schema editors use: what it says on hover and the constraints it shares with validate.
@Suite("The manifest JSON Schema")
struct SchemaTests {
    static func schema() throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(ManifestSchema.json.utf8)) as? [String: Any])
    }

    static func definitions() throws -> [String: Any] { try #require(try schema()["$defs"] as? [String: Any]) }

    /// Every (path, schema) under a `properties` keyword.
    static func properties(_ node: Any, _ path: String = "") -> [(String, [String: Any])] {
        var found: [(String, [String: Any])] = []
        if let object = node as? [String: Any] {
            if let properties = object["properties"] as? [String: Any] {
                for (key, value) in properties {
                    if let value = value as? [String: Any] { found.append((path + "." + key, value)) }
                    found += Self.properties(value, path + "." + key)
                }
            }
            for (key, value) in object where key != "properties" { found += Self.properties(value, path + "/" + key) }
        } else if let array = node as? [Any] {
            for (index, value) in array.enumerated() { found += Self.properties(value, path + "[\(index)]") }
        }
        return found
    }

    @Test("hovering any field in an editor shows a description")
    func everyFieldHasADescription() throws {
        let fields = Self.properties(try Self.schema())
        #expect(fields.count > 60)
        let missing = fields.filter { ($0.1["description"] as? String)?.isEmpty != false }.map(\.0)
        #expect(missing == [])
    }

    @Test("the editor flags a percent with three decimals, as validate does")
    func percentHasTwoDecimals() throws {
        let flow = try #require(try Self.definitions()["Flow"] as? [String: Any])
        let percent = try #require(Self.properties(flow).first { $0.0.hasSuffix("split.percent") }?.1)
        #expect(percent["multipleOf"] as? Double == 0.01)
        #expect(percent["exclusiveMinimum"] as? Double == 0)
        #expect(percent["maximum"] as? Double == 100)
    }

    @Test("the schema's locales, product-id limit and name patterns are the ones validate uses")
    func sharedConstraints() throws {
        let definitions = try Self.definitions()
        let locale = try #require(definitions["locale"] as? [String: Any])
        #expect(locale["enum"] as? [String] == AppStoreLocaleCodes.all)
        let productId = try #require(definitions["productId"] as? [String: Any])
        #expect(productId["maxLength"] as? Int == RetentionLimits.productIdLength)
        let pattern = try #require(productId["pattern"] as? String)
        let regex = try NSRegularExpression(pattern: pattern)
        func matches(_ text: String) -> Bool { regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil }
        #expect(matches("com.example.app_monthly-1"))
        #expect(!matches("..") && !matches(".") && !matches("a b") && !matches("a/b"))
        let name = try #require(definitions["name"] as? [String: Any])
        #expect(name["pattern"] as? String == "^[a-z0-9][a-z0-9-]*$")
        let flow = try #require(definitions["Flow"] as? [String: Any])
        let names = Self.properties(flow).filter { $0.0 == ".name" || $0.0.hasSuffix("rules/items.name") }
        #expect(names.count == 2 && names.allSatisfy { $0.1["$ref"] as? String == "#/$defs/name" })
    }

    @Test("every kind the loader reads has its rules in the schema and its section in the manual")
    func everyKindIsDescribed() throws {
        let schema = try Self.schema()
        let kindProperty = try #require((schema["properties"] as? [String: Any])?["kind"] as? [String: Any])
        #expect(kindProperty["enum"] as? [String] == ManifestLoader.kinds)
        let branches = try #require(schema["allOf"] as? [[String: Any]])
        let selected = branches.compactMap { branch -> String? in
            ((branch["if"] as? [String: Any])?["properties"] as? [String: Any]).flatMap { ($0["kind"] as? [String: Any])?["const"] as? String }
        }
        #expect(selected == ManifestLoader.kinds)
        let definitions = try Self.definitions()
        for kind in ManifestLoader.kinds {
            #expect(definitions[kind] != nil, "the schema has no $defs/\(kind)")
        }
        let manual = try String(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../docs/manifests.md"), encoding: .utf8)
        for kind in ManifestLoader.kinds {
            #expect(manual.contains("\nkind: \(kind)\n"), "docs/manifests.md shows no document of kind \(kind)")
        }
    }
}
