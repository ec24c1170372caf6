import Foundation

/// `retention-sync completions SHELL`: a completion script made from the commands' option declarations.
struct CompletionsCommand: Command {
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

    static func run(_ arguments: inout Arguments, context: CommandContext) async throws -> ExitCode {
        guard let name = arguments.positional() else {
            throw CommandError("completions needs a shell: \(Option.list(Shell.allCases.map(\.rawValue)))", exitCode: .usage)
        }
        try arguments.finish()
        let shell = try Arguments.choice(name, of: Shell.self, for: "SHELL")
        context.console.print(Completions.script(for: shell))
        return .success
    }
}
