import Basics
import Foundation
import YAML

/// The whole command line: picks the subcommand, runs it, turns errors into messages and exit codes.
public enum CLI {
    /// Every subcommand, in the order `--help` lists them.
    public static let commands: [any Command.Type] = [
        InitCommand.self, ValidateCommand.self, IdCommand.self, PlanCommand.self, ApplyCommand.self,
        StatusCommand.self, DecideCommand.self, EmulatorCommand.self, DemoCommand.self, VersionCommand.self,
    ]

    public static let version = "0.1.0"

    public static func run(_ argv: [String], context: CommandContext) async -> ExitCode {
        var arguments = Arguments(argv)
        guard let name = arguments.positional() else {
            context.console.print(usage)
            return argv.contains("--help") || argv.contains("-h") ? .success : .usage
        }
        if name == "help" {
            if let topic = arguments.positional(), let command = commands.first(where: { $0.name == topic }) {
                context.console.print(command.help)
            } else {
                context.console.print(usage)
            }
            return .success
        }
        guard let command = commands.first(where: { $0.name == name }) else {
            let suggestion = EditDistance.nearest(name, in: commands.map { $0.name }).map { " (did you mean '\($0)'?)" } ?? ""
            context.console.error("error: unknown command '\(name)'\(suggestion)\n\n\(usage)")
            return .usage
        }
        if arguments.flag("--help") || arguments.flag("-h") {
            context.console.print(command.help)
            return .success
        }
        do {
            return try await command.run(&arguments, context: context)
        } catch let error as CommandError {
            context.console.error("error: \(error.message)")
            return error.exitCode
        } catch {
            context.console.error("error: \(error)")
            return .failure
        }
    }

    public static var usage: String {
        let width = commands.map { $0.name.count }.max() ?? 0
        let lines = commands.map { "  \($0.name.padding(toLength: width, withPad: " ", startingAt: 0))  \($0.summary)" }
        return """
        retention-sync \(version) — GitOps for Apple's Retention Messaging content

        Usage: retention-sync <command> [options]

        Commands:
        \(lines.joined(separator: "\n"))

        Run 'retention-sync <command> --help' for a command's options.
        """
    }
}

struct VersionCommand: Command {
    static let name = "version"
    static let summary = "Print the version"
    static let help = "Usage: retention-sync version\n\nPrints the version of retention-sync."
    static func run(_ arguments: inout Arguments, context: CommandContext) async throws -> ExitCode {
        try arguments.finish()
        context.console.print("retention-sync \(CLI.version)")
        return .success
    }
}
