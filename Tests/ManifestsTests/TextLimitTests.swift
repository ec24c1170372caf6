@testable import Manifests
import RetentionMessagingModels
import Testing

@Suite("Text limits")
struct TextLimitTests {
    /// 144 characters, most of them two bytes in UTF-8 (so 144 is not the byte count).
    static let body144 = String(repeating: "äöüß", count: 36)

    private func codes(_ set: ManifestSet) -> [String] { ManifestValidator.validate(set).map(\.code) }

    @Test("a multi-byte body of exactly 144 characters passes")
    func body144Passes() {
        #expect(Self.body144.count == 144 && Self.body144.utf8.count == 288)
        #expect(codes(makeSet(messages: [textMessage(body: Self.body144)])) == [])
    }

    @Test("a multi-byte body of 145 characters fails, once per localization")
    func body145Fails() {
        let diagnostics = ManifestValidator.validate(makeSet(messages: [textMessage(locales: ["en-US"], body: Self.body144 + "é")],
                                                             locales: ["en-US"]))
        #expect(diagnostics.map(\.code) == ["body-too-long"])
        #expect(diagnostics.first?.message == "body is 145 characters long; Apple allows at most 144")
    }

    @Test("characters outside the BMP count twice, as UTF-16 does: 72 emoji fit a body, 73 do not")
    func emojiCountAsUTF16() {
        let fits = String(repeating: "🧘", count: 72)
        #expect(codes(makeSet(messages: [textMessage(body: fits)])) == [])
        let over = makeSet(messages: [textMessage(locales: ["en-US"], body: fits + "🧘")], locales: ["en-US"])
        #expect(codes(over) == ["body-too-long"])
    }

    @Test("a 66-character header passes and a 67-character one fails")
    func headerLimit() {
        let header = String(repeating: "ö", count: 66)
        #expect(codes(makeSet(messages: [textMessage(header: header)])) == [])
        #expect(codes(makeSet(messages: [textMessage(locales: ["en-US"], header: header + "x")], locales: ["en-US"])) == ["header-too-long"])
    }

    @Test("the local message count is capped at 2000 (one per message and locale)")
    func messageCap() {
        let locales = Array(AppStoreLocales.all.prefix(20))
        let messages = (0..<101).map { textMessage("m\($0)", locales: locales) }
        let diagnostics = ManifestValidator.validate(makeSet(messages: messages, locales: locales, defaultsFor: "m0"))
        let cap = diagnostics.filter { $0.code == "too-many-messages" }
        #expect(cap.count == 1)
        #expect(cap.first?.message.hasPrefix("the manifests declare 2020 messages") == true)
        let atCap = ManifestValidator.validate(makeSet(messages: Array(messages.prefix(100)), locales: locales, defaultsFor: "m0"))
        #expect(!atCap.contains { $0.code == "too-many-messages" })
    }

    @Test("the local image count is capped at 2000 distinct images")
    func imageCap() {
        let images = (0..<2001).map {
            ImageManifest(name: "i\($0)", file: "i\($0).png", size: .bulletPoint, png: [], sha256: "", location: here($0))
        }
        let diagnostics = ManifestValidator.validate(makeSet(messages: [textMessage()], images: images))
        #expect(diagnostics.filter { $0.code == "too-many-images" }.count == 1)
    }
}
