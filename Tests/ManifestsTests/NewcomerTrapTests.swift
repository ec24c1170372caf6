import Basics
import Foundation
import Manifests
import Testing

@Suite("What a newcomer meets in the first hour")
struct NewcomerTrapTests {
    @Test("an unquoted * in the defaults is one yaml-syntax error at the star, saying to quote it")
    func unquotedWildcard() throws {
        let base = try BaseCopy()
        defer { base.remove() }
        try base.edit("defaults.yaml", "locales: [de-DE]", "locales: *")
        let diagnostics = base.validate().with(code: "yaml-syntax")
        #expect(diagnostics.count == 1)
        #expect(diagnostics.first?.hint == #"quote it: "*" (or write ["*"] in a list)"#)
        #expect(diagnostics.first?.message.contains("alias") == true)
        #expect(diagnostics.first?.location?.file == "m/defaults.yaml")
    }

    @Test("a document with a wrong type is still checked: one run reports the type error, an unknown key and a length error beside them")
    func allProblemsOfOneDocument() throws {
        let base = try BaseCopy()
        defer { base.remove() }
        try base.edit("messages.yaml", "headerPosition: ABOVE_IMAGE", "headerPosition: ABOVE_IMAGE\ncolour: blue")
        try base.edit("messages.yaml", "header: Keep your focus", "header: [not, text]")
        try base.edit("messages.yaml", "header: Bleib konzentriert", "header: " + String(repeating: "x", count: 80))
        let diagnostics = base.validate()
        #expect(diagnostics.map(\.code) == ["unknown-key", "type-mismatch", "header-too-long"], "\(diagnostics)")
        // Nothing else is said where the placeholder stood, and the message still exists for its users.
        #expect(diagnostics.with(code: "unknown-message").isEmpty)
    }

    @Test("a manifest file that cannot be read is one error, not also 'no message named …' for everything it held")
    func unreadableFile() throws {
        let base = try BaseCopy()
        defer { base.remove() }
        let messages = base.url.appendingPathComponent("messages.yaml")
        try FileManager.default.removeItem(at: messages)
        try FileManager.default.createSymbolicLink(atPath: messages.path, withDestinationPath: "nowhere/messages.yaml")
        let diagnostics = base.validate()
        #expect(diagnostics.map(\.code) == ["unreadable-file"], "\(diagnostics)")
    }

    @Test("a comma inside { } that cuts a text in two is an unknown key with a hint to quote the text")
    func commaInsideFlowMapping() throws {
        let base = try BaseCopy()
        defer { base.remove() }
        try base.edit("messages.yaml", "altText: Ein ruhiger Sonnenaufgang }", "altText: Ein ruhiger, stiller Sonnenaufgang }")
        try base.edit("messages.yaml", "- { text: Daily sessions, image: check, altText: A check mark }",
                      "- { text: Daily,sessions, image: check, altText: A check mark }")
        let unknown = base.validate().with(code: "unknown-key")
        #expect(unknown.count == 2, "\(unknown)")
        #expect(unknown.map(\.message).contains { $0.hasPrefix("unknown key 'stiller Sonnenaufgang'") }, "\(unknown)")
        #expect(unknown.map(\.message).contains { $0.hasPrefix("unknown key 'sessions'") }, "\(unknown)")
        for diagnostic in unknown {
            #expect(diagnostic.hint?.hasPrefix("a comma inside { } separates keys: quote the text") == true, "\(diagnostic)")
        }
        // A misspelt key on a line of its own keeps its own hint.
        try base.edit("messages.yaml", "headerPosition: ABOVE_IMAGE", "headerPosition: ABOVE_IMAGE\ncolour: blue")
        let colour = base.validate().with(code: "unknown-key").first { $0.message.hasPrefix("unknown key 'colour'") }
        #expect(colour?.hint?.contains("comma") == false, "\(String(describing: colour))")
    }
}
