struct ApplyCommand: Command {
    static let name = "apply"
    static let summary = "Make the environment match the manifests"
    static let help = "Usage: retention-sync apply\n\nMake the environment match the manifests."
    static func run(_ arguments: inout Arguments, context: CommandContext) async throws -> ExitCode {
        throw CommandError("'apply' is not built yet")
    }
}
