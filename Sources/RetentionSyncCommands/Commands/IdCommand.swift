struct IdCommand: Command {
    static let name = "id"
    static let summary = "Print the identifiers the manifests derive"
    static let help = "Usage: retention-sync id\n\nPrint the identifiers the manifests derive."
    static func run(_ arguments: inout Arguments, context: CommandContext) async throws -> ExitCode {
        throw CommandError("'id' is not built yet")
    }
}
