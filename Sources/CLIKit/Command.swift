public import Foundation

/// What every command is given: its arguments, where to write, the process environment and the
/// working directory. Commands never read global state directly, so tests run them in-process.
public struct CommandContext: Sendable {
    public var console: Console
    public var environment: [String: String]
    public var currentDirectory: URL

    public init(console: Console, environment: [String: String], currentDirectory: URL) {
        self.console = console
        self.environment = environment
        self.currentDirectory = currentDirectory
    }

    /// Resolves a path given on the command line against the working directory.
    public func url(_ path: String) -> URL {
        path.hasPrefix("/") ? URL(fileURLWithPath: path) : currentDirectory.appendingPathComponent(path)
    }
}

/// One subcommand of `retention-sync`.
public protocol Command: Sendable {
    static var name: String { get }
    /// One line for the command list.
    static var summary: String { get }
    /// The `--help` page; its options are the ones the command accepts.
    static var helpPage: HelpPage { get }
    /// The word the command takes besides its options (`init DIR`), for completions; nil for none.
    static var positional: Positional? { get }
    static func run(_ arguments: inout Arguments, context: CommandContext) async throws -> ExitCode
}

/// A command's positional argument, for completions and the synopsis.
public struct Positional: Sendable {
    public var name: String
    public var choices: [String]
    public var completion: Option.Completion

    /// Whether the command runs without it; the synopsis brackets it.
    public var isOptional: Bool

    public init(_ name: String, choices: [String] = [], completion: Option.Completion = .none, optional: Bool = false) {
        self.name = name
        self.choices = choices
        self.completion = completion
        self.isOptional = optional
    }

    /// How the synopsis writes it: `DIR`, `bash|zsh|fish`, `[ACTION]`.
    public var synopsis: String {
        let word = choices.isEmpty ? name : choices.joined(separator: "|")
        return isOptional ? "[\(word)]" : word
    }
}

extension Command {
    public static var positional: Positional? { nil }
    /// The synopsis: written by hand in the help page, else generated from the declarations.
    public static var usage: String { helpPage.usage ?? Synopsis.line(command: name, positional: positional, options: options) }
    /// The full help text, options included.
    public static var help: String { helpPage.text(usage: usage) }
    /// Every option the command accepts: what parsing checks against and completions offer.
    public static var options: [Option] { helpPage.options }
}

/// A command's options as a value: read from the command line, then checked on their own before
/// anything is read, opened or sent, so every usage error comes first.
public protocol CommandOptions: Sendable {
    /// Usage errors only: combinations that cannot work, whatever the files and stores hold.
    func validate() throws(CommandError)
}

/// A command in three steps: `parse` reads its declared options, `validate` checks them, `run` does
/// the work with values that are already typed and checked.
public protocol ParsedCommand: Command {
    associatedtype Options: CommandOptions
    static func parse(_ arguments: inout Arguments, context: CommandContext) throws(CommandError) -> Options
    static func run(_ options: Options, context: CommandContext) async throws -> ExitCode
}

extension ParsedCommand {
    public static func run(_ arguments: inout Arguments, context: CommandContext) async throws -> ExitCode {
        try await run(parsed(&arguments, context: context), context: context)
    }

    /// The first two steps: the options read (nothing else left on the line) and checked. Callers
    /// that run a command in-process with an API of their own (the demo, the tests) start here too.
    public static func parsed(_ arguments: inout Arguments, context: CommandContext) throws(CommandError) -> Options {
        let options = try parse(&arguments, context: context)
        try arguments.finish()
        try options.validate()
        return options
    }
}
