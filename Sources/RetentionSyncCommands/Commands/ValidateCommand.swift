struct ValidateCommand: Command {
    static let name = "validate"
    static let summary = "Check manifests offline"
    static let help = "Usage: retention-sync validate\n\nCheck manifests offline."
    static func run(_ arguments: inout Arguments, context: CommandContext) async throws -> ExitCode {
        throw CommandError("'validate' is not built yet")
    }
}
