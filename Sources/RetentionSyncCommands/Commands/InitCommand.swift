struct InitCommand: Command {
    static let name = "init"
    static let summary = "Write a small app that validates cleanly"
    static let help = "Usage: retention-sync init\n\nWrite a small app that validates cleanly."
    static func run(_ arguments: inout Arguments, context: CommandContext) async throws -> ExitCode {
        throw CommandError("'init' is not built yet")
    }
}
