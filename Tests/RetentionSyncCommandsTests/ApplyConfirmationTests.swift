import CLIKit
import Emulator
import Foundation
import RetentionMessagingModels
import Operations
@testable import RetentionSyncCommands
@testable import CommandTestSupport
import Testing

/// `apply` at a terminal asks first, like Terraform; in CI (no terminal) it never asks.
@Suite("apply asks for confirmation on a terminal")
struct ApplyConfirmationTests {
    /// Runs `apply` against the harness's emulator with a person typing `input` (nil: no terminal).
    func apply(_ harness: CommandHarness, _ argv: [String], input: [String]?) async -> (code: ExitCode, stdout: String, stderr: String) {
        let captured = CapturedConsole(isTerminal: input != nil, input: input)
        let context = CommandContext(console: captured.console, environment: [:], currentDirectory: harness.root)
        var arguments = Arguments(argv)
        do {
            let code = try await ApplyCommand.execute(&arguments, context: context, provider: harness.provider)
            return (code, captured.stdout, captured.stderr)
        } catch {
            return (error.exitCode, captured.stdout, captured.stderr + error.message)
        }
    }

    @Test("answering anything but 'yes' cancels the apply and changes nothing")
    func declining() async throws {
        let harness = try CommandHarness()
        let run = await apply(harness, ["--env", "production"], input: ["y"])
        #expect(run.code == .failure)
        #expect(run.stdout.contains("Apply these "))
        #expect(run.stdout.contains(" actions to production? Only 'yes' will be accepted"))
        #expect(run.stderr.contains("apply cancelled: nothing was changed"))
        #expect(harness.emulator.state(of: .production).messages.isEmpty)
        #expect(harness.emulator.state(of: .production).images.isEmpty)
    }

    @Test("typing 'yes' applies")
    func accepting() async throws {
        let harness = try CommandHarness()
        let run = await apply(harness, ["--env", "production"], input: ["yes"])
        #expect(run.code == .success)
        #expect(run.stdout.contains("Only 'yes' will be accepted"))
        #expect(!harness.emulator.state(of: .production).messages.isEmpty)
    }

    @Test("--auto-approve applies at a terminal without asking")
    func autoApprove() async throws {
        let harness = try CommandHarness()
        let run = await apply(harness, ["--env", "production", "--auto-approve"], input: [])
        #expect(run.code == .success)
        #expect(!run.stdout.contains("Only 'yes'"))
        #expect(!harness.emulator.state(of: .production).messages.isEmpty)
    }

    @Test("without a terminal (CI) apply never asks")
    func noTerminalNeverAsks() async throws {
        let harness = try CommandHarness()
        let run = await apply(harness, ["--env", "production"], input: nil)
        #expect(run.code == .success)
        #expect(!run.stdout.contains("Only 'yes'"))
    }

    @Test("nothing to apply asks nothing")
    func nothingToApply() async throws {
        let harness = try CommandHarness()
        #expect(await apply(harness, ["--env", "sandbox"], input: nil).code == .success)
        let run = await apply(harness, ["--env", "sandbox"], input: [])
        #expect(run.code == .success)
        #expect(!run.stdout.contains("Only 'yes'"))
    }
}
