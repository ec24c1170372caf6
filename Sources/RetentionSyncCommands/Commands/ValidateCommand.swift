import CLIKit
import Manifests
import Operations
import Views

struct ValidateCommand: ParsedCommand {
    static let name = "validate"
    static let summary = "Check manifests offline"
    static let manifests = Option.manifests()
    static let format = Option("--format", value: "FORMAT", of: DiagnosticFormat.self, default: .text, help: [
        "text: file:line:column: error: message, with hints;",
        "json: a versioned JSON object for scripts;",
        "github: GitHub Actions annotations on the pull request's lines.",
    ])
    static let strict = Option("--strict", help: ["Fail on warnings too."])

    static let helpPage = HelpPage(
        about: """
        Checks the manifests in DIR (default: manifests) offline against Apple's rules: text lengths,
        locales, images, references, locale coverage and limits. Every problem is reported in one run.
        """,
        options: [manifests, format, strict], column: 18,
        footer: "Exit status: 0 when there are no errors (and, with --strict, no warnings), 1 otherwise.")

    struct Options: CommandOptions {
        var directory: String
        var format: DiagnosticFormat
        var strict: Bool

        func validate() throws(CommandError) {}
    }

    static func parse(_ arguments: inout Arguments, context: CommandContext) throws(CommandError) -> Options {
        Options(directory: try arguments.value(Self.manifests, as: String.self) ?? Option.defaultManifests,
                format: try arguments.value(Self.format, as: DiagnosticFormat.self) ?? .text,
                strict: arguments.flag(Self.strict))
    }

    static func run(_ options: Options, context: CommandContext) async throws -> ExitCode {
        ValidateOperation.run(directory: options.directory, format: options.format, strict: options.strict, context: context)
    }
}
