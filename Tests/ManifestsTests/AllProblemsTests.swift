import Basics
import Foundation
import Manifests
import Testing

@Suite("validate reports every problem in one run")
struct AllProblemsTests {
    @Test("an unknown key and two wrong types in one app.yaml give three diagnostics")
    func threeProblemsInOneDocument() throws {
        let base = try BaseCopy()
        defer { base.remove() }
        try base.edit("app.yaml", "appAppleId: 1234567890", "appAppleId: twelve\ncolour: blue")
        try base.edit("app.yaml", "    realtimeURL: https://retention.example.com/sandbox", "    realtimeURL: [https://retention.example.com/sandbox]")
        let diagnostics = base.validate()
        #expect(diagnostics.map(\.code) == ["type-mismatch", "unknown-key", "type-mismatch"])
        #expect(diagnostics.map { $0.location?.line } == [4, 5, 8])
    }

    @Test("two broken localizations of one message are both reported, and their siblings are not called unknown")
    func problemsInNestedValues() throws {
        let base = try BaseCopy()
        defer { base.remove() }
        try base.edit("messages.yaml", "    header: Keep your focus", "    header: [Keep your focus]")
        try base.edit("messages.yaml", "    body: Deine Serie und deine gespeicherten Sitzungen warten auf dich.", "    body: { a: b }")
        let diagnostics = base.validate()
        #expect(diagnostics.map(\.code) == ["type-mismatch", "type-mismatch"])
    }

    @Test("every diagnostic of the invalid corpus carries a hint, yaml-syntax and type-mismatch included")
    func everyDiagnosticHasAHint() throws {
        let corpus = repositoryRoot.appendingPathComponent("fixtures/manifests/invalid")
        var codes = Set<String>()
        for name in try FileManager.default.contentsOfDirectory(atPath: corpus.path) where !name.hasPrefix(".") {
            let (_, diagnostics) = ManifestLoader.loadAndValidate(directory: corpus.appendingPathComponent(name), displayPath: name)
            for diagnostic in diagnostics {
                codes.insert(diagnostic.code)
                #expect(diagnostic.hint?.isEmpty == false, "\(name): \(diagnostic.code) has no hint")
            }
        }
        #expect(codes.isSuperset(of: ["yaml-syntax", "type-mismatch", "missing-key", "unknown-key"]))
    }
}
