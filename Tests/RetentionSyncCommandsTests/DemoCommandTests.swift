import Emulator
import Foundation
import RetentionMessaging
import RetentionMessagingModels
@testable import RetentionSyncCommands
import Testing

@Suite("retention-sync demo")
struct DemoCommandTests {
    @Test("the demo tells the whole story on the embedded emulator and exits 0")
    func wholeStory() async throws {
        let captured = CapturedConsole()
        let context = CommandContext(console: captured.console, environment: [:], currentDirectory: CommandHarness.repository)
        let code = await CLI.run(["demo"], context: context)
        #expect(code == .success, "\(captured.stderr)")
        let out = captured.stdout
        for step in ["── 1. Validate", "── 3. Apply sandbox", "── 4. Go live in sandbox", "── 6. Apply production",
                     "── 7. App Review approves", "── 8. The scheduled reconcile publishes", "── 9. Edit a message", "── 10. Roll back"] {
            #expect(out.contains(step))
        }
        #expect(out.contains("→ exit 0: only waiting for App Review"))
        #expect(out.contains("still serves en-US with"))
        #expect(out.contains("The story held"))
        // The performance test really ran against serve on loopback, and production took the URL after it.
        #expect(out.contains("PASS performance test"))
        #expect(out.contains("% (needs 95%)"))
        #expect(out.contains("production accepted the realtime URL"))
    }

    @Test("each plan the demo shows reads the environment once, with the calls a plan makes")
    func planStepReadsOnce() async throws {
        let captured = CapturedConsole()
        let demo = try Demo(source: "manifests", context: CommandContext(console: captured.console, environment: [:],
                                                                         currentDirectory: CommandHarness.repository))
        defer { try? FileManager.default.removeItem(at: demo.root) }
        _ = try await demo.plan(.sandbox)
        // Two list calls, one GET /default per declared pair (2 products × 3 locales), the realtime URL.
        #expect(captured.stdout.contains("Read sandbox with 9 API calls."))
        #expect(demo.emulator.requestCount(in: .sandbox) == 9)
    }

    @Test("the demo without manifests says where to run it")
    func noManifests() async throws {
        let captured = CapturedConsole()
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("empty-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: empty) }
        let code = await CLI.run(["demo"], context: CommandContext(console: captured.console, environment: [:], currentDirectory: empty))
        #expect(code == .failure)
        #expect(captured.stderr.contains("run the demo from the repository's root, or pass --manifests DIR"))
    }
}
