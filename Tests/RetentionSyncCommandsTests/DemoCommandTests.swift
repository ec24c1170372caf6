import CLIKit
@testable import Demo
import Emulator
import Foundation
import RetentionMessaging
import RetentionMessagingModels
@testable import RetentionSyncCommands
@testable import CommandTestSupport
import Testing

@Suite("retention-sync demo")
struct DemoCommandTests {
    struct StoryRun {
        var code: ExitCode
        var stdout: String
        var stderr: String
        /// What `retention-sync results --env sandbox` prints afterwards in the demo's folder, as of the demo's report.
        var resultsAfterwards: String
    }

    /// One run of the demo, shared by the tests that read it: the story takes seconds.
    static let story = Task { () -> StoryRun in
        let captured = CapturedConsole()
        let context = CommandContext(console: captured.console, environment: [:], currentDirectory: CommandHarness.repository)
        let code = await CLI.run(["demo", "--keep"], context: context)
        let out = captured.stdout
        guard let kept = out.components(separatedBy: "The demo's files are in ").last?.split(separator: "\n").first.map(String.init),
              let asOf = out.components(separatedBy: "Results for sandbox as of ").last?.split(separator: "\n").first.map(String.init) else {
            return StoryRun(code: code, stdout: out, stderr: captured.stderr, resultsAfterwards: "")
        }
        let root = URL(fileURLWithPath: kept.hasSuffix(".") ? String(kept.dropLast()) : kept)
        defer { try? FileManager.default.removeItem(at: root) }
        let results = CapturedConsole()
        _ = await CLI.run(["results", "--manifests", "manifests", "--env", "sandbox", "--as-of", asOf],
                          context: CommandContext(console: results.console, environment: [:], currentDirectory: root))
        return StoryRun(code: code, stdout: out, stderr: captured.stderr, resultsAfterwards: results.stdout + results.stderr)
    }

    @Test("the demo tells the whole story on the embedded emulator and exits 0")
    func wholeStory() async throws {
        let run = await Self.story.value
        #expect(run.code == .success, "\(run.stderr)")
        let out = run.stdout
        for step in ["── 1. Validate", "── 3. Apply sandbox", "── 4. Go live in sandbox", "── 6. Apply production",
                     "── 7. App Review approves", "── 8. The scheduled reconcile publishes", "── 9. Edit a message", "── 10. Roll back",
                     "── 11. Which answer keeps subscribers?", "── 12. Answer the person", "── 13. End the experiment"] {
            #expect(out.contains(step))
        }
        #expect(out.contains("→ exit 0: only waiting for App Review"))
        #expect(out.contains("still serves en-US with"))
        #expect(out.contains("The story held"))
        // The 35 simulated days are said as days, never as "0 s of virtual time".
        #expect(out.contains(", then 35 days of simulated customers measured by results, their facts for a rule that answers the person, "
                             + "and the winner promoted as a reviewed change."),
                "\(out.suffix(400))")
        #expect(!out.contains("0 s of virtual time"))
        // The performance test really ran against serve on loopback, and production took the URL after it.
        #expect(out.contains("PASS performance test"))
        #expect(out.contains("% (needs 95%)"))
        #expect(out.contains("production accepted the realtime URL"))
    }

    @Test("the demo ends by measuring the example's split: results counts what the emulator's customers did and names the upsell better")
    func splitResults() async throws {
        let run = await Self.story.value
        #expect(run.code == .success, "\(run.stderr)")
        let out = run.stdout
        #expect(out.contains("the emulator's customers are told: upsell-yearly's answer, the alternate product com.example.stillpoint.yearly, "
                             + "keeps 45% of them; upsell-control's answer, the message before-you-go, keeps 30% of them"))
        #expect(out.contains("$ retention-sync results --env sandbox --events manifests/.retention-sync --as-of "))
        // The seed fixes who lands in which arm: the report's exposures are the emulator's.
        #expect(out.contains("the emulator drew upsell-yearly 1,004 shown, 432 kept; upsell-control 996 shown, 301 kept"))
        #expect(out.contains("  upsell-control (control)  upsell-control  996 "))
        #expect(out.contains("  upsell-yearly             upsell-yearly   1,004 "))
        #expect(out.contains("Split group cancel-flow/yearly-upsell: control upsell-control (marked in the manifest)"))
        #expect(out.contains("  upsell-yearly vs upsell-control: kept at 24 h higher, +"))
        #expect(out.contains("names upsell-yearly better at keeping subscribers than upsell-control"))
        #expect(!out.contains("not distinguishable yet"))
    }

    @Test("the demo publishes the customers' facts and previews a rule on them: billing retry gets the plain message, a customer paying or unknown the upsell; then it reverts the rule")
    func answersThePerson() async throws {
        let run = await Self.story.value
        #expect(run.code == .success, "\(run.stderr)")
        let out = run.stdout
        #expect(out.contains("facts publish (sandbox): 2,000 customer(s) from "), "\(out.suffix(2000))")
        #expect(out.contains("the plan publishes rule payment-failing with its condition: match.customer.billing: retry, grace"))
        #expect(out.contains("→ a customer with billing=retry: rule cancel-flow/payment-failing"))
        #expect(out.contains("→ a customer with billing=none: rule cancel-flow/upsell-yearly"))
        #expect(out.contains("→ a customer nothing is known of (a condition on an unknown fact does not hold): rule cancel-flow/upsell-yearly"))
        #expect(out.contains("$ git revert --no-edit HEAD\nreverted: left as a pull request."))
    }

    @Test("the demo ends the experiment through promote: the evidence, the upsell promoted on a branch for review, main unchanged")
    func promotesTheWinner() async throws {
        let run = await Self.story.value
        #expect(run.code == .success, "\(run.stderr)")
        let out = run.stdout
        #expect(out.contains("$ retention-sync promote yearly-upsell --env sandbox --metric kept24h --events manifests/.retention-sync --as-of "))
        #expect(out.contains("  ## Promote `upsell-yearly` in `cancel-flow` / `yearly-upsell`"), "\(out.suffix(3000))")
        #expect(out.contains("promoted upsell-yearly: cancel-flow.yaml edited (upsell-control removed, its split gone) on the branch promote/yearly-upsell"))
    }

    @Test("the demo records its events where results looks for them: results afterwards prints the report the demo showed")
    func eventsWhereResultsLooks() async throws {
        let run = await Self.story.value
        #expect(run.code == .success, "\(run.stderr)")
        let report = try #require(run.stdout.components(separatedBy: "$ retention-sync results --env sandbox --events manifests/.retention-sync --as-of ").last)
        let printed = report.split(separator: "\n", maxSplits: 1).last.map(String.init) ?? ""
        #expect(!run.resultsAfterwards.isEmpty && printed.hasPrefix(run.resultsAfterwards), "\(run.resultsAfterwards)")
    }

    @Test("each plan the demo shows reads the environment once, with the calls a plan makes")
    func planStepReadsOnce() async throws {
        let captured = CapturedConsole()
        let demo = try DemoStory(source: "manifests", context: CommandContext(console: captured.console, environment: [:],
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
