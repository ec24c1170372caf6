import Foundation
@testable import CommandTestSupport
import Testing
import TestSupport

/// A first publish that dies without a word (`kill -9`, a runner that vanishes) before it wrote any
/// state must converge with plain applies: the store holds the evidence that it began the publish,
/// so the lost-state guard does not mistake it for a store that was lost or moved.
@Suite("retention-sync apply, a first publish killed part-way", .serialized)
struct FirstPublishKillTests {
    static let environment = ApplySignalTests.environment

    /// Runs `arguments` against the emulator and returns the exit status and the output.
    static func run(_ arguments: [String], in harness: CommandHarness, name: String) async throws -> (Int32?, String, String) {
        let child = try ChildProcess(arguments, in: harness.root, environment: environment, name: name)
        let status = await child.finish(within: 180)
        return (status, String(decoding: child.output, as: UTF8.self), child.errors)
    }

    @Test("a first publish killed with kill -9 after some uploads converges with plain applies, through injected server errors",
          arguments: [1, 5, 12])
    func killedFirstPublishConverges(killAfter: Int) async throws {
        let harness = try CommandHarness()
        let emulator = try await EmulatorProcess.start(in: harness.root, environment: Self.environment, name: "emulator",
                                                       arguments: ["--latency", "0.1", "--server-errors", "0.1", "--seed", "\(killAfter)"])
        let first = try ChildProcess(["apply", "--env", "sandbox", "--endpoint", emulator.endpoint],
                                     in: harness.root, environment: Self.environment, name: "first")
        // Seen and killed on one thread, so a busy concurrency pool cannot let the apply run on.
        let pid = first.process.processIdentifier
        let killed = try await onOwnThread { () -> Bool in
            for _ in 0..<12_000 {
                let text = String(decoding: first.output, as: UTF8.self)
                if text.split(separator: "\n").contains(where: { $0.hasPrefix("  [\(killAfter)/") }) {
                    kill(pid, SIGKILL)
                    return true
                }
                if !first.process.isRunning { return false }
                usleep(5_000)
            }
            return false
        }
        #expect(killed, "the first apply ended before it was killed: \(first.errors)")
        #expect(await first.finish(within: 30) == SIGKILL)

        // No human step: plain applies (no --first-publish) until the plan shows nothing left to do.
        var converged = false
        for attempt in 1...4 {
            let (applied, _, applyErrors) = try await Self.run(["apply", "--env", "sandbox", "--endpoint", emulator.endpoint],
                                                                in: harness, name: "apply-\(attempt)")
            #expect(!applyErrors.contains("holds nothing"), "apply \(attempt) took the killed first publish for a lost store: \(applyErrors)")
            #expect(applied == 0, "apply \(attempt): \(applyErrors)")
            let (_, plan, _) = try await Self.run(["plan", "--env", "sandbox", "--endpoint", emulator.endpoint],
                                                  in: harness, name: "plan-\(attempt)")
            if plan.contains("No changes.") {
                converged = true
                break
            }
        }
        #expect(converged, "four applies after the kill did not bring sandbox in line with the manifests")
        #expect(await emulator.stop() == 0)
    }
}
