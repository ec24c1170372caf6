import Foundation

/// `retention-sync completions SHELL`: a completion script made from the commands' option declarations.
struct CompletionsCommand: ParsedCommand {
    static let name = "completions"
    static let summary = "Print a shell completion script (bash, zsh or fish)"
    static let positional: Positional? = Positional("SHELL", choices: Shell.allCases.map(\.rawValue))
    static let helpPage = HelpPage(
        usage: "Usage: retention-sync completions bash|zsh|fish",
        about: """
        Prints a script that completes commands, options and their values in the shell, made from
        the same declarations as --help. To load it:

          bash  source <(retention-sync completions bash)      (e.g. in ~/.bashrc)
          zsh   retention-sync completions zsh > "${fpath[1]}/_retention-sync"
          fish  retention-sync completions fish > ~/.config/fish/completions/retention-sync.fish
        """)

    struct Options: CommandOptions {
        var name: String?

        func validate() throws(CommandError) {
            guard let name else {
                throw CommandError("completions needs a shell: \(Option.list(Shell.allCases.map(\.rawValue)))", exitCode: .usage)
            }
            _ = try Arguments.choice(name, of: Shell.self, for: "SHELL")
        }
    }

    static func parse(_ arguments: inout Arguments, context: CommandContext) throws(CommandError) -> Options {
        Options(name: arguments.positional())
    }

    static func run(_ options: Options, context: CommandContext) async throws -> ExitCode {
        let shell = try Arguments.choice(options.name ?? "", of: Shell.self, for: "SHELL")
        context.console.print(Completions.script(for: shell))
        return .success
    }
}
