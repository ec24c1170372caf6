struct PlanCommand: Command {
    static let name = "plan"
    static let summary = "Show what apply would do"
    static let help = "Usage: retention-sync plan\n\nShow what apply would do."
    static func run(_ arguments: inout Arguments, context: CommandContext) async throws -> ExitCode {
        throw CommandError("'plan' is not built yet")
    }
}
