import CLIKit
import Foundation
@testable import RetentionSyncCommands
import Testing

/// A usage line is written by hand where it shows what declarations cannot (alternatives such as
/// `--snapshot FILE | --manifests DIR`), so it is held to the declarations: every option it names is
/// one the command declares, and a value it lists as `a|b` is exactly the values the option takes.
@Suite("Usage lines")
struct UsageLineTests {
    static let commandNames: [String] = CLI.commands.map { command in command.name }

    /// Each `--option` in `usage` and the word after it, when that word is its value.
    static func mentions(in usage: String) -> [(option: String, value: String?)] {
        let words = usage.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "[" || $0 == "]" || $0 == "(" || $0 == ")" })
            .map(String.init)
        var found: [(String, String?)] = []
        for (index, word) in words.enumerated() where word.hasPrefix("--") {
            let next = index + 1 < words.count ? words[index + 1] : nil
            let value = next.flatMap { $0.hasPrefix("-") || $0 == "|" ? nil : $0 }
            found.append((word, value))
        }
        return found
    }

    @Test("a usage line names only declared options, and lists exactly the values each takes", arguments: commandNames)
    func usageMatchesDeclarations(_ name: String) throws {
        let command = try #require(CLI.commands.first { $0.name == name })
        let declared = command.options
        for (option, value) in Self.mentions(in: command.helpPage.usage) {
            let declaration = declared.first { $0.spellings.contains(option) }
            #expect(declaration != nil, "'\(name)' usage names \(option), which the command does not declare")
            guard let declaration, let value, value.contains("|") else { continue }
            #expect(value.split(separator: "|").map(String.init) == declaration.choices,
                    "'\(name)' usage lists \(option) \(value), but it takes \(declaration.choices.joined(separator: "|"))")
        }
    }

    @Test("the usage check reads options, values and alternatives out of a line")
    func mentionsAreRead() {
        let found = Self.mentions(in: "Usage: x [--snapshot FILE | --manifests DIR --env ENV] (--a b|c) [--strict]")
        #expect(found.map(\.option) == ["--snapshot", "--manifests", "--env", "--a", "--strict"])
        #expect(found.map(\.value) == ["FILE", "DIR", "ENV", "b|c", nil])
    }
}
