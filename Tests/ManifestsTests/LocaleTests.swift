import Foundation
import Manifests
import RetentionMessagingModels
import Testing

@Suite("Locale codes as App Store Connect spells them")
struct LocaleTests {
    @Test("a product declaring en-us gets an error that names en-US")
    func lowercaseRegionIsAnError() throws {
        let base = try BaseCopy()
        defer { base.remove() }
        try base.edit("app.yaml", "  - id: com.example.focus.yearly\n    locales: [en-US, de-DE]", "  - id: com.example.focus.yearly\n    locales: [en-us, de-DE]")
        let problems = base.validate().with(code: "invalid-locale")
        #expect(problems.count == 1)
        #expect(problems.first?.severity == .error)
        #expect(problems.first?.hint == "use en-US")
    }

    @Test("a message localized as EN-US is an error too: codes are case-sensitive")
    func uppercaseLanguageIsAnError() throws {
        let base = try BaseCopy()
        defer { base.remove() }
        try base.edit("messages.yaml", "name: everyday\nheaderPosition: ABOVE_IMAGE\nlocalizations:\n  en-US:",
                      "name: everyday\nheaderPosition: ABOVE_IMAGE\nlocalizations:\n  EN-US:")
        #expect(base.validate().with(code: "invalid-locale").first?.hint == "use en-US")
    }

    @Test("declaring a locale added on 2026-03-31 validates with a warning that Apple's support is unconfirmed",
          arguments: AppStoreLocaleCodes.addedOn20260331)
    func newLocalesWarn(_ locale: String) throws {
        let base = try BaseCopy()
        defer { base.remove() }
        try base.edit("app.yaml", "  - id: com.example.focus.yearly\n    locales: [en-US, de-DE]",
                      "  - id: com.example.focus.yearly\n    locales: [en-US, de-DE]\n  - id: com.example.focus.weekly\n    locales: [\(locale)]")
        let diagnostics = base.validate()
        // The new product lacks defaults and localizations (other errors); its locale itself is accepted.
        #expect(diagnostics.with(code: "invalid-locale").isEmpty)
        let warnings = diagnostics.with(code: "unconfirmed-locale")
        #expect(warnings.count == 1)
        #expect(warnings.first?.message.contains("unconfirmed") == true)
    }

    @Test("App Store Connect lists 50 locales, 11 of them new")
    func fiftyLocales() {
        #expect(AppStoreLocaleCodes.all.count == 50)
        #expect(Set(AppStoreLocaleCodes.all).count == 50)
        #expect(AppStoreLocaleCodes.addedOn20260331.allSatisfy(AppStoreLocaleCodes.isWellFormed))
    }

    @Test("bn and ur, as some tools write them, get a hint with App Store Connect's spelling")
    func regionlessNewLocalesGetAHint() throws {
        let base = try BaseCopy()
        defer { base.remove() }
        try base.edit("app.yaml", "  - id: com.example.focus.yearly\n    locales: [en-US, de-DE]",
                      "  - id: com.example.focus.yearly\n    locales: [en-US, de-DE]\n  - id: com.example.focus.weekly\n    locales: [bn, ur]")
        let hints = base.validate().with(code: "invalid-locale").compactMap(\.hint)
        #expect(hints == ["did you mean bn-BD?", "did you mean ur-PK?"])
    }
}
