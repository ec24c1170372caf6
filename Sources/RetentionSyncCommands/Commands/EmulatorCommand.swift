struct EmulatorCommand: Command {
    static let name = "emulator"
    static let summary = "Run the API emulator on loopback"
    static let help = "Usage: retention-sync emulator\n\nRun the API emulator on loopback."
    static func run(_ arguments: inout Arguments, context: CommandContext) async throws -> ExitCode {
        throw CommandError("'emulator' is not built yet")
    }
}
