struct StatusCommand: Command {
    static let name = "status"
    static let summary = "Show remote content, review states and use"
    static let help = "Usage: retention-sync status\n\nShow remote content, review states and use."
    static func run(_ arguments: inout Arguments, context: CommandContext) async throws -> ExitCode {
        throw CommandError("'status' is not built yet")
    }
}
