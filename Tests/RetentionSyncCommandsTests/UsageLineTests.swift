import CLIKit
import Foundation
@testable import RetentionSyncCommands
import Testing

/// A usage line is generated from the declarations (the positional word, the required options, the
/// others in brackets or `[options]`), except where it shows what declarations cannot (alternatives
/// such as `--snapshot FILE | --manifests DIR`): there it is written by hand and held to the
/// declarations — every option it names is one the command declares, and a value it lists as `a|b`
/// is exactly the values the option takes.
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
        for (option, value) in Self.mentions(in: command.usage) {
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

    @Test("a generated usage line shows the positional word, then every required option, then the others or [options]")
    func generatedLines() {
        let env = Option("--env", value: "ENV", choices: ["sandbox", "production"], help: ["The environment"]).required()
        let manifests = Option("--manifests", value: "DIR", help: ["Where"])
        let strict = Option("--strict", help: ["Fail on warnings"])
        #expect(Synopsis.line(command: "x", positional: Positional("DIR"), options: [manifests, env, strict])
                == "Usage: retention-sync x DIR --env sandbox|production [--manifests DIR] [--strict]")
        #expect(Synopsis.line(command: "x", positional: Positional("ACTION", choices: ["show", "history"], optional: true), options: [])
                == "Usage: retention-sync x [show|history]")
        let many = (1...12).map { Option("--option-\($0)", value: "VALUE", help: ["An option"]) }
        #expect(Synopsis.line(command: "x", positional: nil, options: [env] + many) == "Usage: retention-sync x --env sandbox|production [options]")
    }

    /// The commands whose usage line is written by hand, and what no list of declarations could say.
    static let handWritten: [String: String] = [
        "decide": "a snapshot from a file or from the manifests, and a request or a signed payload: alternatives",
        "serve": "a snapshot from the manifests, a state store or a file: alternatives, and TLS options that go together",
        "state": "three modes with different options",
        "outcomes": "--root takes a list of files",
        "facts": "two actions with different options",
        "events": "two actions with different options",
        "performance-test": "sandbox only, and a transaction to start a test or a request id to follow one",
    ]

    @Test("every command's usage line is generated, except those that show what declarations cannot", arguments: commandNames)
    func handWrittenOnlyForAlternatives(_ name: String) throws {
        let command = try #require(CLI.commands.first { $0.name == name })
        #expect((command.helpPage.usage != nil) == (Self.handWritten[name] != nil),
                "'\(name)': usage \(command.helpPage.usage == nil ? "generated" : "written by hand"); handWritten says \(Self.handWritten[name] ?? "generated")")
    }
}
