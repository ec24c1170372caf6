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
    /// The full help text, options included.
    static var help: String { get }
    static func run(_ arguments: inout Arguments, context: CommandContext) async throws -> ExitCode
}
