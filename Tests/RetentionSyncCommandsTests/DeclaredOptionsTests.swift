import CLIKit
import Foundation
@testable import RetentionSyncCommands
import Testing

/// A declared option that no parse asks for is a line of help that does nothing: it is accepted,
/// shown and completed, and silently ignored. Each command is parsed from the command lines below
/// (one per branch of its parse: a subcommand, a mode), and every option its help declares must have
/// been asked for by at least one of them.
@Suite("Declared options")
struct DeclaredOptionsTests {
    /// Command lines that reach every branch of each command's parse, by command name.
    static let lines: [String: [[String]]] = [
        "init": [["my-app"]],
        "validate": [[]],
        "id": [[]],
        "preview": [["--out", "site"]],
        "plan": [["--env", "sandbox"]],
        "apply": [["--env", "sandbox"], ["--env", "sandbox", "--plan", "plan.json"], ["--env", "sandbox", "--only-uploads"]],
        "status": [["--env", "sandbox"]],
        "import": [["--env", "sandbox"]],
        "results": [["--env", "sandbox"]],
        "promote": [["yearly-upsell", "--env", "sandbox"]],
        "outcomes": [["pull", "--env", "sandbox"]],
        "facts": [["publish", "--env", "sandbox"], ["show", "--env", "sandbox"]],
        "events": [["compact", "--env", "sandbox", "--as-of", "2026-11-01"], ["erase", "--env", "sandbox", "--customers", "ids.txt"]],
        "state": [["show", "--env", "sandbox"], ["history", "--env", "sandbox"], ["migrate", "--env", "sandbox", "--from", "old.json"]],
        "decide": [["--env", "sandbox", "--request", "request.json"]],
        "serve": [["--env", "sandbox"]],
        "performance-test": [["--env", "sandbox", "--original-transaction-id", "2000000000000001"]],
        "emulator": [[]],
        "demo": [[]],
        "completions": [["bash"]],
    ]

    static let commandNames: [String] = CLI.commands.map { command in command.name }

    static func asked<C: ParsedCommand>(_ command: C.Type, _ line: [String], context: CommandContext) -> Set<String> {
        guard var arguments = try? Arguments(line, options: command.options) else { return [] }
        _ = try? command.parse(&arguments, context: context)
        return arguments.consulted
    }

    @Test("every option a command's help declares is read by the command", arguments: commandNames)
    func everyDeclaredOptionIsRead(_ name: String) throws {
        let command = try #require(CLI.commands.first { $0.name == name })
        guard let parsed = command as? any ParsedCommand.Type else { return }
        let lines = try #require(Self.lines[name], "no command line for '\(name)': add one that reaches its parse")
        let context = CommandContext(console: CapturedConsole().console, environment: [:],
                                     currentDirectory: FileManager.default.temporaryDirectory)
        var asked: Set<String> = []
        for line in lines { asked.formUnion(Self.asked(parsed, line, context: context)) }
        let unread = command.options.map(\.name).filter { !asked.contains($0) }
        #expect(unread.isEmpty, "'\(name)' declares \(unread.joined(separator: ", ")) but its parse never reads them")
    }

    @Test("an option the command cannot run without is declared required, so the usage line shows it outside brackets", arguments: commandNames)
    func requiredOptionsAreDeclared(_ name: String) throws {
        let command = try #require(CLI.commands.first { $0.name == name })
        guard let parsed = command as? any ParsedCommand.Type else { return }
        let lines = try #require(Self.lines[name])
        let context = CommandContext(console: CapturedConsole().console, environment: [:],
                                     currentDirectory: FileManager.default.temporaryDirectory)
        var demanded: Set<String> = []
        for line in lines {
            guard var arguments = try? Arguments(line, options: parsed.options) else { continue }
            _ = try? parsed.parse(&arguments, context: context)
            demanded.formUnion(arguments.demanded)
        }
        let declared = Set(command.options.filter(\.isRequired).map(\.name))
        #expect(demanded == declared, "'\(name)' reads \(demanded.sorted()) as required but declares \(declared.sorted())")
    }
}
