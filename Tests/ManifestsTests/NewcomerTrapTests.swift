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
}
