import Basics
public import CLIKit
import Foundation

/// The whole command line: picks the subcommand, runs it, turns errors into messages and exit codes.
public enum CLI {
    /// Every subcommand, in the order `--help` lists them.
    public static let commands: [any Command.Type] = [
        InitCommand.self, ValidateCommand.self, IdCommand.self, PreviewCommand.self, PlanCommand.self, ApplyCommand.self,
        StatusCommand.self, ImportCommand.self, ResultsCommand.self, PromoteCommand.self, OutcomesCommand.self, FactsCommand.self, EventsCommand.self, StateCommand.self, DecideCommand.self, ServeCommand.self, PerformanceTestCommand.self, EmulatorCommand.self, DemoCommand.self, CompletionsCommand.self,
        VersionCommand.self,
    ]

    public static let version = "0.2.0"

    static let helpOption = Option("--help", aliases: ["-h"], help: ["Show this help, or a command's with 'retention-sync COMMAND --help'"])
    static let versionOption = Option("--version", help: ["Print the version"])
    static let noColorOption = Option("--no-color", help: ["Never colour, like NO_COLOR=1 (FORCE_COLOR=1 colours without a terminal)"])
    /// Options every invocation accepts, before or after the command.
    static let globalOptions = [helpOption, versionOption, noColorOption]
    /// The shell completion scripts, from the same declarations.
    static let completions = Completions(commands: commands, globalOptions: globalOptions, commonOptions: [helpOption, noColorOption])

    public static func run(_ argv: [String], context: CommandContext) async -> ExitCode {
        var context = context
        var argv = argv
        let end = argv.firstIndex(of: "--") ?? argv.endIndex
        if argv[..<end].contains(noColorOption.name) {
            argv.removeAll { $0 == noColorOption.name }
            context.console = context.console.withoutColor()
        }
        var arguments = Arguments(argv)
        guard let name = arguments.positional() else {
            if argv.contains(versionOption.name) {
                context.console.print("retention-sync \(version)")
                return .success
            }
            let asked = argv.contains(where: helpOption.spellings.contains)
            if let other = argv.first(where: { !helpOption.spellings.contains($0) }) {
                return fail(CommandError("unknown option '\(other)'" + suggestion(other, in: globalOptions.flatMap(\.spellings))
                                         + "; see 'retention-sync --help'", exitCode: .usage), context: context)
            }
            if asked {
                context.console.print(usage)
                return .success
            }
            context.console.error(usage)
            return .usage
        }
        if name == "help" {
            guard let topic = arguments.positional() else {
                context.console.print(usage)
                return .success
            }
            guard let command = commands.first(where: { $0.name == topic }) else {
                return fail(CommandError("no help topic '\(topic)'" + suggestion(topic, in: commands.map { $0.name })
                                         + "; the topics are the commands: " + commands.map { $0.name }.joined(separator: ", "),
                                         exitCode: .usage), context: context)
            }
            context.console.print(command.help)
            return .success
        }
        guard let command = commands.first(where: { $0.name == name }) else {
            return fail(CommandError("unknown command '\(name)'" + suggestion(name, in: commands.map { $0.name }) + "\n\n\(usage)",
                                     exitCode: .usage), context: context)
        }
        if arguments.flag("--help") || arguments.flag("-h") {
            context.console.print(command.help)
            return .success
        }
        do {
            let rest = argv.drop { $0 != name }.dropFirst()
            var declared = try Arguments(Array(rest), options: command.options)
            for notice in declared.notices { context.console.error(notice) }
            return try await command.run(&declared, context: context)
        } catch let error as CommandError {
            return fail(error, context: context)
        } catch {
            return fail(CommandError("\(error)"), context: context)
        }
    }

    /// Prints `error: …` ending with exactly one newline, and returns the error's exit code.
    static func fail(_ error: CommandError, context: CommandContext) -> ExitCode {
        var message = error.message
        while message.hasSuffix("\n") { message.removeLast() }
        context.console.error("error: \(message)")
        return error.exitCode
    }

    static func suggestion(_ word: String, in candidates: [String]) -> String {
        EditDistance.nearest(word, in: candidates, maxDistance: 3).map { " (did you mean '\($0)'?)" } ?? ""
    }

    public static var usage: String {
        let width = commands.map { $0.name.count }.max() ?? 0
        let lines = commands.map { "  \($0.name.padding(toLength: width, withPad: " ", startingAt: 0))  \($0.summary)" }
        var options = globalOptions
        options[0].name = "-h, --help"
        options[0].aliases = []
        return """
        retention-sync \(version) — GitOps for Apple's Retention Messaging content

        Usage: retention-sync <command> [options]

        Commands:
        \(lines.joined(separator: "\n"))

        Options:
        \(HelpPage.rows(options, column: 12))

        Run 'retention-sync <command> --help' for a command's options.
        """
    }
}

struct VersionCommand: Command {
    static let name = "version"
    static let summary = "Print the version"
    static let helpPage = HelpPage(about: "Prints the version of retention-sync.")
    static func run(_ arguments: inout Arguments, context: CommandContext) async throws -> ExitCode {
        try arguments.finish()
        context.console.print("retention-sync \(CLI.version)")
        return .success
    }
}

/// Every command with everything it declares, for tools that generate or check documentation:
/// the same declarations parsing, `--help` and completions read.
public enum CommandRegistry {
    public struct Entry: Sendable {
        public var name: String
        public var summary: String
        public var usage: String
        public var positional: Positional?
        /// In help order; each carries its help text, choices and declared default.
        public var options: [Option]
    }

    /// In the order `retention-sync --help` lists them.
    public static var all: [Entry] {
        CLI.commands.map { command in
            Entry(name: command.name, summary: command.summary, usage: command.usage,
                  positional: command.positional, options: command.options)
        }
    }

    /// The options every invocation accepts (`--help`, `--version`, `--no-color`).
    public static var globalOptions: [Option] { CLI.globalOptions }
}
