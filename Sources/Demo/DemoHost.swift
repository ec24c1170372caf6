public import CLIKit
public import Foundation
public import Reconciler
public import RetentionMessaging
public import RetentionMessagingModels

/// The API client the story hands to a command for one environment: the embedded emulator's.
public typealias DemoAPI = @Sendable (_ environment: Environment) -> RetentionMessagingClient

/// What the story asks of the command line it plays: the commands themselves, run in-process with
/// the emulator's clients instead of the network. The command module implements it, so the story
/// reads no command's internals and the commands know nothing of the story.
///
/// Each requirement is what a user would type (named beside it); the story prints that line first.
public protocol DemoHost: Sendable {
    /// `retention-sync ARGUMENTS`, for the commands that never call Apple (`validate`, `decide`).
    func run(_ arguments: [String], context: CommandContext) async -> ExitCode

    /// `retention-sync plan --env ENVIRONMENT`, read once: the plan, for the story to print and check.
    func plan(_ environment: Environment, api: @escaping DemoAPI, context: CommandContext) async throws(CommandError) -> Plan
    /// Prints `plan` as the plan command prints it, in text.
    func show(_ plan: Plan, context: CommandContext) throws(CommandError)
    /// The plan command's exit code for `plan` (`--detailed-exitcode` when `detailed`).
    func exitCode(of plan: Plan, detailed: Bool) -> ExitCode

    /// `retention-sync apply --env ENVIRONMENT` (the plan itself is not printed again).
    func apply(_ environment: Environment, api: @escaping DemoAPI, context: CommandContext) async throws(CommandError) -> ExitCode

    /// `retention-sync performance-test ARGUMENTS`, polling Apple's result no less than `minimumPoll` apart.
    func performanceTest(_ arguments: [String], api: @escaping DemoAPI, minimumPoll: TimeInterval,
                         context: CommandContext) async throws(CommandError) -> ExitCode
}
