import Foundation
@testable import CommandTestSupport
import Testing
import TestSupport

@Suite("retention-sync apply, stopped by a signal", .serialized)
struct ApplySignalTests {
    static let environment = [
        "RETENTION_SYNC_KEY_ID": "TEST000001", "RETENTION_SYNC_ISSUER_ID": "57246542-96fe-1a63-e053-0824d011072a",
        "RETENTION_SYNC_PRIVATE_KEY_FILE": CommandHarness.repository.appendingPathComponent("fixtures/crypto/AuthKey_TEST000001.p8").path,
    ]

    @Test("cancelling a CI job (SIGTERM) or pressing Ctrl-C (SIGINT) mid-apply writes the report and exits 143 or 130",
          arguments: [(SIGTERM, Int32(143), "terminated"), (SIGINT, Int32(130), "interrupted")])
    func signalMidApply(signal: Int32, status: Int32, stopped: String) async throws {
        let harness = try CommandHarness()
        // Every answer takes 0.5 s, so the apply (two dozen calls) is still running when the signal comes,
        // even on a busy machine where this test reads the progress line late.
        let emulator = try await EmulatorProcess.start(in: harness.root, environment: Self.environment, name: "emulator",
                                                       arguments: ["--latency", "0.5"])
        let apply = try ChildProcess(["apply", "--env", "sandbox", "--endpoint", emulator.endpoint, "--report", "report.json"],
                                     in: harness.root, environment: Self.environment, name: "apply")
        // Seen and signalled on one thread, so a busy concurrency pool cannot delay the signal.
        let pid = apply.process.processIdentifier
        let progress = try await onOwnThread { () -> String? in
            for _ in 0..<12_000 {
                let text = String(decoding: apply.output, as: UTF8.self)
                if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("  [3/") }) {
                    kill(pid, signal)
                    return String(line)
                }
                usleep(5_000)
            }
            return nil
        }
        #expect(progress != nil, "\(apply.errors)")
        let exit = await apply.finish(within: 30)
        #expect(await emulator.stop() == 0)

        #expect(exit == status, "\(apply.errors)")
        let output = String(decoding: apply.output, as: UTF8.self)
        #expect(output.contains(" left. The next apply picks up where this one stopped"))
        let report = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: harness.file("report.json"))) as? [String: Any])
        #expect(report["stopped"] as? String == stopped)
        #expect(report["completed"] as? Bool == false)
        #expect((report["remaining"] as? Int ?? 0) > 0)
        let results = report["results"] as? [[String: Any]] ?? []
        #expect(results.count >= 3)
        #expect(results.allSatisfy { $0["outcome"] as? String != "failed" })
    }
}
