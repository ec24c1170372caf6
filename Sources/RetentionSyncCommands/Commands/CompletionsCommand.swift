import CLIKit
import Foundation

/// `retention-sync completions SHELL`: a completion script made from the commands' option declarations.
struct CompletionsCommand: ParsedCommand {
    static let name = "completions"
    static let summary = "Print a shell completion script (bash, zsh or fish)"
    static let positional: Positional? = Positional("SHELL", choices: Shell.allCases.map(\.rawValue))
    static let helpPage = HelpPage(
        about: """
        Prints a script that completes commands, options and their values in the shell, made from
        the same declarations as --help. To load it:

          bash  source <(retention-sync completions bash)      (e.g. in ~/.bashrc)
          zsh   retention-sync completions zsh > "${fpath[1]}/_retention-sync"
          fish  retention-sync completions fish > ~/.config/fish/completions/retention-sync.fish
        """)

    struct Options: CommandOptions {
        var shell: Shell?

        func validate() throws(CommandError) {
            guard shell != nil else {
                throw CommandError("completions needs a shell: \(Option.list(Shell.allValueStrings))", exitCode: .usage)
            }
        }
    }

    static func parse(_ arguments: inout Arguments, context: CommandContext) throws(CommandError) -> Options {
        Options(shell: try arguments.positional().map { name throws(CommandError) in
            try Arguments.read(name, as: Shell.self, for: Option("SHELL", help: []), relativeTo: nil)
        })
    }

    static func run(_ options: Options, context: CommandContext) async throws -> ExitCode {
        guard let shell = options.shell else { return .usage }
        context.console.print(CLI.completions.script(for: shell))
        return .success
    }
}
