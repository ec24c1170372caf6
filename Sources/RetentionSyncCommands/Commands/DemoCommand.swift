struct DemoCommand: Command {
    static let name = "demo"
    static let summary = "Run the whole story on the embedded emulator"
    static let help = "Usage: retention-sync demo\n\nRun the whole story on the embedded emulator."
    static func run(_ arguments: inout Arguments, context: CommandContext) async throws -> ExitCode {
        throw CommandError("'demo' is not built yet")
    }
}
