import CLIKit
import Emulator
import Foundation
import HTTPClient
import HTTPCore
import RetentionMessaging
import RetentionMessagingModels
import RetentionSyncCommands
@testable import CommandTestSupport
import Testing
import TestSupport

/// One `retention-sync emulator` on loopback for a whole repository: one base URL for both
/// environments (each command's `--env` picks), and several apps kept apart by bundle id.
@Suite("One emulator for every environment and app")
struct OneEmulatorTests {
    /// An app made with `init`, renamed to `bundleId`, with both environments and its own message text.
    struct App {
        let bundleId: String
        let directory: URL

        init(_ name: String, bundleId: String, in root: URL, text: String) async throws {
            self.bundleId = bundleId
            directory = root.appendingPathComponent(name)
            let captured = CapturedConsole()
            let context = CommandContext(console: captured.console, environment: [:], currentDirectory: root)
            try #require(await CLI.run(["init", name], context: context) == .success, "\(captured.stderr)")
            try """
            apiVersion: retention-sync/v1
            kind: App
            bundleId: \(bundleId)
            appAppleId: 6450012345
            environments:
              sandbox:
                realtimeURL: https://\(name).example/apple/sandbox
                snapshotPath: .retention-sync/sandbox-snapshot.json
              production:
                realtimeURL: https://\(name).example/apple/production
                snapshotPath: .retention-sync/production-snapshot.json
            products:
              - id: \(bundleId).monthly
                locales: [en-US]

            """.write(to: directory.appendingPathComponent("app.yaml"), atomically: true, encoding: .utf8)
            let messages = directory.appendingPathComponent("messages.yaml")
            let original = try String(contentsOf: messages, encoding: .utf8)
            try original.replacingOccurrences(of: "header: Before you go", with: "header: \(text)")
                .write(to: messages, atomically: true, encoding: .utf8)
        }

        /// `retention-sync <command> --manifests DIR …` in-process, its output and exit code.
        func run(_ arguments: [String], environment: [String: String]) async -> (code: ExitCode, stdout: String, stderr: String) {
            let captured = CapturedConsole()
            let context = CommandContext(console: captured.console, environment: environment,
                                         currentDirectory: directory.deletingLastPathComponent())
            let code = await CLI.run(arguments + ["--manifests", directory.lastPathComponent], context: context)
            return (code, captured.stdout, captured.stderr)
        }
    }

    /// The key's variables, and the emulator's one base URL as `RETENTION_SYNC_ENDPOINT` (what its export line says).
    static func environment(_ app: CommandTestApp, port: Int) -> [String: String] {
        app.environment.merging(["RETENTION_SYNC_ENDPOINT": "http://127.0.0.1:\(port)"]) { _, new in new }
    }

    @Test("two apps with different bundle ids against one emulator keep their lists, defaults and realtime URLs apart, and each plan says nothing of the other's content")
    func twoAppsStayApart() async throws {
        let root = try temporaryFolder("one-emulator-apps")
        defer { try? FileManager.default.removeItem(at: root) }
        let key = CommandTestApp()
        let running = try await RunningEmulatorCommand.start([], environment: key.environment)
        let environment = Self.environment(key, port: running.port)
        let daybreak = try await App("daybreak", bundleId: "com.acme.daybreak", in: root, text: "Your mornings stay yours")
        let focus = try await App("focus", bundleId: "com.acme.focus", in: root, text: "Your focus streak is saved")

        let applied = await daybreak.run(["apply", "--env", "sandbox", "--auto-approve"], environment: environment)
        #expect(applied.code == .success, "\(applied.stdout)\(applied.stderr)")
        // The second app starts from nothing: the first app's message is neither its own nor "unmanaged".
        let focusPlan = await focus.run(["plan", "--env", "sandbox"], environment: environment)
        #expect(focusPlan.code == .success, "\(focusPlan.stderr)")
        #expect(focusPlan.stdout.hasPrefix("Plan (sandbox): 1 to upload"), "\(focusPlan.stdout)")
        #expect(!focusPlan.stdout.contains("unmanaged"), "\(focusPlan.stdout)")
        #expect(!focusPlan.stdout.contains("Your mornings stay yours"), "\(focusPlan.stdout)")
        let focusApplied = await focus.run(["apply", "--env", "sandbox", "--auto-approve"], environment: environment)
        #expect(focusApplied.code == .success, "\(focusApplied.stdout)\(focusApplied.stderr)")

        // Each app is in sync after the other applied: nothing of the other's to delete, its realtime URL its own.
        for app in [daybreak, focus] {
            let plan = await app.run(["plan", "--env", "sandbox"], environment: environment)
            #expect(plan.code == .success && plan.stdout.contains("No changes."), "\(app.bundleId): \(plan.stdout)\(plan.stderr)")
            #expect(!plan.stdout.contains("unmanaged"), "\(app.bundleId): \(plan.stdout)")
        }
        func state(_ bundleId: String) async throws -> EmulatorState {
            let answer = try await running.admin("GET", "/sandbox/emulator/state?bundleId=\(bundleId)")
            #expect(answer.header("X-Emulator-Bundle-Id") == bundleId)
            return try JSONDecoder().decode(EmulatorState.self, from: answer.body)
        }
        let (mornings, streaks) = (try await state(daybreak.bundleId), try await state(focus.bundleId))
        #expect(mornings.messages.count == 1 && streaks.messages.count == 1)
        #expect(Set(mornings.messages.keys).isDisjoint(with: streaks.messages.keys))
        #expect(mornings.messages.values.map(\.body.header) == ["Your mornings stay yours"])
        #expect(streaks.messages.values.map(\.body.header) == ["Your focus streak is saved"])
        #expect(mornings.defaults[DefaultKey(productId: "com.acme.daybreak.monthly", locale: "en-US")] == mornings.messages.keys.first)
        #expect(streaks.defaults[DefaultKey(productId: "com.acme.focus.monthly", locale: "en-US")] == streaks.messages.keys.first)
        #expect(mornings.defaults.count == 1 && streaks.defaults.count == 1)
        #expect(mornings.realtimeURL == "https://daybreak.example/apple/sandbox")
        #expect(streaks.realtimeURL == "https://focus.example/apple/sandbox")

        let apps = try await running.admin("GET", "/emulator/apps")
        #expect(String(decoding: apps.body, as: UTF8.self).contains("com.acme.focus"))
        #expect(try await running.stop() == .success)
    }

    @Test("one emulator base URL used with --env sandbox and --env production reaches each environment")
    func oneBaseURLBothEnvironments() async throws {
        let root = try temporaryFolder("one-emulator-environments")
        defer { try? FileManager.default.removeItem(at: root) }
        let key = CommandTestApp()
        // Started for sandbox: its --env only picks the environment of calls that name none.
        let running = try await RunningEmulatorCommand.start(["--review", "manual"], environment: key.environment)
        let environment = Self.environment(key, port: running.port)
        let app = try await App("daybreak", bundleId: "com.acme.daybreak", in: root, text: "Your mornings stay yours")

        let sandbox = await app.run(["apply", "--env", "sandbox", "--auto-approve"], environment: environment)
        #expect(sandbox.code == .success, "\(sandbox.stdout)\(sandbox.stderr)")
        let production = await app.run(["apply", "--env", "production", "--auto-approve"], environment: environment)
        // Production takes the realtime URL only after a sandbox performance test: attention (3), not a failure.
        #expect(production.code == .needsAttention, "\(production.stdout)\(production.stderr)")
        #expect(production.stderr.contains("attention: ") && production.stderr.contains("performance test"), "\(production.stderr)")
        #expect(!production.stderr.contains("is an emulator serving"), "\(production.stderr)")

        func state(_ environment: Environment) async throws -> EmulatorState {
            let answer = try await running.admin("GET", "/\(environment.rawValue)/emulator/state")
            #expect(answer.header("X-Emulator-Environment") == environment.rawValue)
            return try JSONDecoder().decode(EmulatorState.self, from: answer.body)
        }
        // Sandbox approves at once; production keeps the upload for review: each went where --env said.
        #expect(try await state(.sandbox).messages.values.map(\.state) == [.approved])
        #expect(try await state(.production).messages.values.map(\.state) == [.pending])

        // The old per-environment endpoint still works, and still refuses the other environment's run.
        var old = environment
        old["RETENTION_SYNC_ENDPOINT"] = "http://127.0.0.1:\(running.port)/sandbox/inApps/v1/messaging"
        #expect(await app.run(["plan", "--env", "sandbox"], environment: old).code == .success)
        let wrong = await app.run(["plan", "--env", "production"], environment: old)
        #expect(wrong.code != .success)
        #expect(wrong.stderr.contains("is an emulator serving its sandbox environment, but this run is for production"), "\(wrong.stderr)")
        #expect(wrong.stderr.contains("http://127.0.0.1:\(running.port)"), "\(wrong.stderr)")
        #expect(try await running.stop() == .success)
    }

    @Test("a plan for an app the emulator was not started for gets Apple's 401, and the hint names its bundle id")
    func unknownApp() async throws {
        let root = try temporaryFolder("one-emulator-unknown")
        defer { try? FileManager.default.removeItem(at: root) }
        let key = CommandTestApp()
        let running = try await RunningEmulatorCommand.start(["--bundle-id", "com.acme.daybreak"], environment: key.environment)
        let environment = Self.environment(key, port: running.port)
        let focus = try await App("focus", bundleId: "com.acme.focus", in: root, text: "Your focus streak is saved")
        let plan = await focus.run(["plan", "--env", "sandbox"], environment: environment)
        #expect(plan.code == .failure)
        #expect(plan.stderr.contains("HTTP 401"), "\(plan.stderr)")
        #expect(plan.stderr.contains("com.acme.focus is not an app of this emulator, which serves com.acme.daybreak"), "\(plan.stderr)")
        #expect(plan.stderr.contains("--bundle-id com.acme.daybreak,com.acme.focus"), "\(plan.stderr)")
        #expect(try await running.stop() == .success)
    }
}
