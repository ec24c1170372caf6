import Testing
import YAML

/// Text from someone else written into a manifest reads back exactly, on one line, whatever it holds.
@Suite("Writing text into YAML")
struct YAMLTextTests {
    static let samples = [
        "plain", "", "Stay \"a little\" longer", #"C:\path\to"#, "two\nlines\r\nand a\ttab", "# not a comment", "key: value, [x]",
        "- dash", "null", "true", "0x1F", "~", "  spaced  ", "Bleib noch – 50 % günstiger 🎁", "bell\u{07}nul\u{0}del\u{7F}",
        "next\u{85}line\u{2028}sep\u{2029}para", "\u{FEFF}bom", "c1\u{9B}control", "'single'", "{flow}", "&anchor *alias !tag %directive @at `tick`",
    ]

    @Test("every sample, written as a double-quoted scalar, parses back to the same text, on one line")
    func samplesReadBack() throws {
        for sample in Self.samples {
            let quoted = YAMLText.doubleQuoted(sample)
            #expect(!quoted.contains("\n") && !quoted.contains("\r"), "\(quoted)")
            let documents = try YAMLParser.parse("text: \(quoted)\n", file: "sample.yaml")
            let value = try #require(documents.first?.root["text"]?.scalar)
            #expect(value.text == sample, "\(quoted)")
            #expect(value.isQuoted)
        }
    }
}
