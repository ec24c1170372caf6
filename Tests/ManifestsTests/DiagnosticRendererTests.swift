import Basics
import Foundation
@testable import Manifests
import Testing
@testable import Views
import YAML

@Suite("Rendering diagnostics")
struct DiagnosticRendererTests {
    static let diagnostics: [Diagnostic] = [
        .warning("unused-image", at: SourceLocation(file: "m/images.yaml", line: 9, column: 7), "no message uses image 'spare'"),
        .error("header-too-long", at: SourceLocation(file: "m/messages.yaml", line: 12, column: 13),
               "header is 67 characters long; Apple allows at most 66", hint: "shorten it by 1 character"),
        .error("body-too-long", at: SourceLocation(file: "m/images.yaml", line: 9, column: 7), "body, too: long"),
    ]

    @Test("text: sorted by file, line, column and code, hints indented, a count line last")
    func text() {
        let text = DiagnosticRenderer.render(Self.diagnostics, format: .text, color: false)
        #expect(text == """
        m/images.yaml:9:7: error: body, too: long [body-too-long]
        m/images.yaml:9:7: warning: no message uses image 'spare' [unused-image]
        m/messages.yaml:12:13: error: header is 67 characters long; Apple allows at most 66 [header-too-long]
            hint: shorten it by 1 character
        2 errors, 1 warning

        """)
    }

    @Test("text: colour only when asked for")
    func colour() {
        #expect(DiagnosticRenderer.render(Self.diagnostics, format: .text, color: true).contains("\u{1B}[1;31merror\u{1B}[0m"))
        #expect(!DiagnosticRenderer.render(Self.diagnostics, format: .text, color: false).contains("\u{1B}"))
    }

    @Test("text: nothing at all when there is nothing to report")
    func empty() {
        #expect(DiagnosticRenderer.render([], format: .text, color: false) == "")
    }

    @Test("json: a versioned object with sorted keys and counts")
    func json() throws {
        let text = DiagnosticRenderer.render(Self.diagnostics, format: .json, color: false)
        #expect(text.hasPrefix(#"{"diagnostics":[{"code":"body-too-long","location":{"column":7,"file":"m/images.yaml","line":9}"#))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(object["format_version"] as? String == "1.0")
        #expect(object["error_count"] as? Int == 2)
        #expect(object["warning_count"] as? Int == 1)
        let decoded = try JSONDecoder().decode([String: [Diagnostic]].self,
                                               from: JSONSerialization.data(withJSONObject: ["d": object["diagnostics"]!]))
        #expect(decoded["d"] == Diagnostic.sorted(Self.diagnostics))
    }

    @Test("github: workflow commands with escaped properties and data")
    func github() {
        let lines = DiagnosticRenderer.render(Self.diagnostics, format: .github, color: false).split(separator: "\n")
        #expect(lines == [
            "::error file=m/images.yaml,line=9,col=7,title=body-too-long::body, too: long",
            "::warning file=m/images.yaml,line=9,col=7,title=unused-image::no message uses image 'spare'",
            "::error file=m/messages.yaml,line=12,col=13,title=header-too-long::header is 67 characters long; Apple allows at most 66%0Ahint: shorten it by 1 character",
        ])
        let odd = Diagnostic.error("x", at: SourceLocation(file: "a,b:c.yaml", line: 1, column: 1), "100% sure")
        #expect(DiagnosticRenderer.render([odd], format: .github, color: false) == "::error file=a%2Cb%3Ac.yaml,line=1,col=1,title=x::100%25 sure\n")
    }
}

@Suite("Showing the source line under a diagnostic")
struct SourceExcerptTests {
    static let diagnostic = Diagnostic.error("type-mismatch", at: SourceLocation(file: "m/app.yaml", line: 2, column: 13),
                                             "appAppleId: expected an integer, found \"twelve\"", hint: "write a number")

    @Test("on a terminal, validate shows the line with a caret under the column, like gcc")
    func caretUnderColumn() {
        let text = DiagnosticRenderer.render([Self.diagnostic], format: .text, color: false) { file in
            file == "m/app.yaml" ? "kind: App\nappAppleId: twelve\n" : nil
        }
        #expect(text == """
        m/app.yaml:2:13: error: appAppleId: expected an integer, found "twelve" [type-mismatch]
         2 | appAppleId: twelve
           |             ^
            hint: write a number
        1 error, 0 warnings

        """)
    }

    @Test("without a source (not a terminal, or the file is gone) the output is unchanged")
    func noSourceNoExcerpt() {
        let plain = DiagnosticRenderer.render([Self.diagnostic], format: .text, color: false)
        #expect(DiagnosticRenderer.render([Self.diagnostic], format: .text, color: false) { _ in nil } == plain)
        #expect(!plain.contains("^"))
    }

    @Test("tabs keep the caret aligned and control characters in the line are shown escaped")
    func tabsAndControlCharacters() {
        let excerpt = DiagnosticRenderer.excerpt(["\tkey: \u{1B}[31mred"], line: 1, column: 7)
        #expect(excerpt?.line == "\tkey: \\u{1B}[31mred")
        #expect(excerpt?.padding == "\t     ")
    }
}

@Suite("Diagnostics cannot drive the terminal")
struct TerminalSafetyTests {
    @Test("an escape sequence or newline in a value quoted by a message is printed escaped, not executed")
    func controlCharactersAreEscaped() {
        let hostile = Diagnostic.error("unknown-message", at: SourceLocation(file: "m/flow.yaml", line: 3, column: 5),
                                       "no message named 'x\u{1B}[2J\nerror: forged'", hint: "did you mean 'x\u{07}'?")
        let text = DiagnosticRenderer.render([hostile], format: .text, color: false)
        #expect(!text.contains("\u{1B}") && !text.contains("\u{07}"))
        #expect(text.contains("no message named 'x\\u{1B}[2J\\u{A}error: forged'"))
        #expect(text.split(separator: "\n").count == 3)
    }
}
