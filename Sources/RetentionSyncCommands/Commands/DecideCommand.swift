struct DecideCommand: Command {
    static let name = "decide"
    static let summary = "Preview the realtime answer for a request"
    static let help = "Usage: retention-sync decide\n\nPreview the realtime answer for a request."
    static func run(_ arguments: inout Arguments, context: CommandContext) async throws -> ExitCode {
        throw CommandError("'decide' is not built yet")
    }
}
