import Basics
@testable import CLIKit
import Emulator
import Foundation
import HTTPCore
import Reconciler
import RetentionMessaging
import RetentionMessagingModels
@testable import RetentionSyncCommands
@testable import CommandTestSupport
import Testing
import TestSupport
@testable import Views

/// A client budget that empties after one request and then allows one every 10 s (virtual), so an
/// apply spends minutes waiting on the rate limit without a test spending real time.
let slowPacing = Pacing(limits: RateLimits(configureDefaultPerSecond: 10, otherPerSecond: 1, notificationHistoryPerSecond: 50,
                                           sandboxFactor: 0.1, window: 10))

@Suite("retention-sync apply in CI")
struct ApplyInCITests {
    func json(_ harness: CommandHarness, _ path: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: harness.file(path))) as? [String: Any])
    }

    @Test("an apply in a CI log prints a line per action and, while rate-limited, a heartbeat at most every 30 s")
    func heartbeatInALog() async throws {
        let harness = try CommandHarness(pacing: slowPacing)
        let run = await harness.run(["apply", "--env", "sandbox"])
        #expect(run.code == .success, "\(run.stderr)")
        let lines = run.stdout.components(separatedBy: "\n")
        #expect(lines.filter { $0.hasPrefix("  [") }.count == 24)
        let heartbeats = lines.filter { $0.hasPrefix("  … ") }
        #expect(heartbeats.count >= 2)
        for line in heartbeats {
            #expect(line.contains(" done; waiting 10 s (pacing to 360 requests per hour in sandbox); about "), "\(line)")
            #expect(line.hasSuffix(" left"))
        }
        // One request every 10 s means a heartbeat every third wait at most: never one per wait.
        let waits = lines.count { $0.hasPrefix("  [") } + 2
        #expect(heartbeats.count <= waits / 3 + 1)
    }

    @Test("a plan reading under rate-limit waits in a CI log prints a heartbeat on standard error, at most every 30 s, and leaves standard output to the plan")
    func planReadHeartbeat() async throws {
        let harness = try CommandHarness(pacing: slowPacing)
        let run = await harness.run(["plan", "--env", "sandbox", "--format", "json"])
        #expect(run.code == .success, "\(run.stderr)")
        #expect((try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8))) != nil, "stdout is the plan alone")
        let heartbeats = run.stderr.components(separatedBy: "\n").filter { $0.hasPrefix("  … reading sandbox: waiting ") }
        #expect(!heartbeats.isEmpty, "\(run.stderr)")
        #expect(heartbeats.allSatisfy { $0.contains("(pacing to 360 requests per hour in sandbox)") }, "\(heartbeats)")
        // The plan reads about 9 times at one request every 10 s: never a line per wait.
        #expect(heartbeats.count <= 4, "\(heartbeats)")
    }

    @Test("an apply whose upload is held up past its token's five minutes (other requests' waits moving Apple's clock meanwhile) signs it again and applies everything")
    func uploadOutlivesItsToken() async throws {
        // The first upload reaches Apple 400 s after it was signed: past the token's 300 s and the
        // minute of leeway Apple's clock check allows.
        let harness = try CommandHarness(transport: { emulator, clock in
            HeldUpTransport(emulator, clock: clock, seconds: 400) { $0.method == "PUT" && $0.url.path.contains("/message/") }
        })
        let refusals = LogLines()
        harness.emulator.onLog { line in if line.contains(" → 401") { refusals.append(line) } }
        let run = await harness.run(["apply", "--env", "sandbox"])
        #expect(run.code == .success, "\(run.stdout)\(run.stderr)")
        #expect(refusals.value.count == 1 && refusals.value[0].hasSuffix(" → 401 (token expired)"), "\(refusals.value)")
        let plan = await harness.run(["plan", "--env", "sandbox"])
        #expect(plan.stdout.contains("No changes. sandbox matches the manifests."), "\(plan.stdout)\(plan.stderr)")
    }

    @Test("the heartbeat states done/total, the wait and an ETA from the pace so far")
    func heartbeatWording() {
        #expect(ApplyProgressView.heartbeat(done: 12, total: 42, elapsed: 120, wait: 10, reason: "pacing to 360 requests per hour in sandbox")
                == "  … 12/42 done; waiting 10 s (pacing to 360 requests per hour in sandbox); about 5 min left")
    }

    @Test("apply --format github groups the plan and the log, and annotates blocked actions at their manifest line")
    func githubFormat() async throws {
        let harness = try CommandHarness()
        let run = await harness.run(["apply", "--env", "production", "--format", "github"])
        #expect(run.code == .success, "\(run.stderr)")
        let lines = run.stdout.components(separatedBy: "\n")
        #expect(lines.first?.hasPrefix("::group::Plan: Plan (production): ") == true)
        #expect(lines.filter { $0 == "::endgroup::" }.count == 2)
        #expect(lines.contains("::group::Applying to production:"))
        let warnings = lines.filter { $0.hasPrefix("::warning ") }
        #expect(!warnings.isEmpty)
        #expect(warnings.contains { $0.hasPrefix("::warning file=manifests/") && $0.contains(",line=") })
        // Annotations come after the group closes, so GitHub shows them outside the fold.
        let close = try #require(lines.lastIndex(of: "::endgroup::"))
        #expect(lines.firstIndex { $0.hasPrefix("::warning") }! > close)

        // The next run while App Review is pending runs nothing, and still annotates what waits.
        let waiting = await harness.run(["apply", "--env", "production", "--format", "github"])
        #expect(waiting.code == .success)
        #expect(waiting.stdout.contains("Nothing to apply now."))
        #expect(waiting.stdout.contains("\n::warning file=manifests/"))
    }

    @Test("a failed apply with --format github ends the group and annotates the failure as an error")
    func githubFormatFailure() async throws {
        let harness = try CommandHarness()
        harness.emulator.setFaults(FaultInjection(haltAfterRequests: 14))
        let run = await harness.run(["apply", "--env", "sandbox", "--format", "github"])
        #expect(run.code == .failure)
        let lines = run.stdout.components(separatedBy: "\n")
        #expect(lines.filter { $0 == "::endgroup::" }.count == 2)
        #expect(lines.contains { $0.hasPrefix("::error ") && $0.contains("title=") && $0.contains("::FAILED (") })
    }

    @Test("plan --format github prints the plan in a group with annotations for blocked actions")
    func planGithubFormat() async throws {
        let harness = try CommandHarness()
        let run = await harness.run(["plan", "--env", "production", "--format", "github"])
        #expect(run.code == .success)
        #expect(run.stdout.hasPrefix("::group::Plan: Plan (production): "))
        #expect(run.stdout.contains("\n::endgroup::\n"))
        #expect(!run.stdout.contains("\u{1B}["))
    }

    @Test("workflow command values are escaped as GitHub's runner reads them")
    func githubEscaping() {
        let location = SourceLocation(file: "manifests/a,b:c.yaml", line: 3, column: 5)
        #expect(GitHubActions.annotation(.error, "50% done\r\nnext", title: "upload: x, y", location: location)
                == "::error file=manifests/a%2Cb%3Ac.yaml,line=3,col=5,title=upload%3A x%2C y::50%25 done%0D%0Anext")
        #expect(GitHubActions.group("a\nb") == "::group::a%0Ab")
        #expect(GitHubActions.annotation(.warning, "plain") == "::warning::plain")
    }

    @Test("the estimate of an apply within the hour's budget says it runs as fast as Apple answers; the paced figure only when the budget is spent")
    func estimateAtSustainedRates() async throws {
        let estimate = Estimate(configureDefaultRequests: 0, otherRequests: 72, configureDefaultRate: 1, otherRate: 0.1,
                                minimumSeconds: 0, content: [.message: .init(after: 72, cap: 2000), .image: .init(after: 0, cap: 2000)])
        #expect(estimate.sustainedSeconds == 720)
        #expect(PlanView.estimateText(estimate).contains("within this hour's budget, so as fast as Apple answers (~12 min at sandbox's 1 configure-default request/s and 0.1 other requests/s only if earlier runs this hour spent it); messages 72/2000"))
        #expect(!PlanView.estimateText(estimate).contains("once this hour's budget is spent"))
        var over = estimate
        over.minimumSeconds = 1800
        #expect(PlanView.estimateText(over).contains("~12 min at sandbox's 1 configure-default request/s and 0.1 other requests/s once this hour's budget is spent, at least 30 min while it lasts; messages 72/2000"))
        #expect(!PlanView.estimateText(estimate).contains("at least 0 s"))

        let harness = try CommandHarness()
        let run = await harness.run(["plan", "--env", "sandbox"])
        let line = try #require(run.stdout.components(separatedBy: "\n").first { $0.hasPrefix("Estimate: ") })
        #expect(line.contains(" at sandbox's "))
        #expect(!line.contains("~0 s"))
    }

    @Test("apply --max-duration stops cleanly, marks the report, and the next apply finishes without repeating an upload")
    func maxDurationThenResume() async throws {
        let harness = try CommandHarness(pacing: slowPacing)
        // The plan's nine reads take 90 s of the three minutes at one request per 10 s.
        let first = await harness.run(["apply", "--env", "sandbox", "--max-duration", "3m", "--report", "first.json"])
        #expect(first.code == .success, "\(first.stderr)")
        #expect(first.stdout.contains("Stopped at --max-duration 3m: "))
        #expect(first.stdout.contains("The next apply picks up where this one stopped"))
        #expect(first.stdout.contains("\nLeft for the next apply (ready in the plan):\n  - "))
        let report = try json(harness, "first.json")
        #expect(report["stopped"] as? String == "max-duration")
        #expect(report["completed"] as? Bool == false)
        let remaining = try #require(report["remaining"] as? Int)
        #expect(remaining > 0)
        let firstDone = Set((report["results"] as? [[String: Any]] ?? []).filter { $0["outcome"] as? String == "done" }.compactMap { $0["id"] as? String })
        #expect(!firstDone.isEmpty)

        let second = await harness.run(["apply", "--env", "sandbox", "--report", "second.json"])
        #expect(second.code == .success, "\(second.stderr)")
        let results = try json(harness, "second.json")["results"] as? [[String: Any]] ?? []
        #expect(results.allSatisfy { !firstDone.contains($0["id"] as? String ?? "") })
        #expect(!results.contains { $0["outcome"] as? String == "already_done" })
        #expect(await harness.run(["plan", "--env", "sandbox", "--detailed-exitcode"]).code == .success)
    }

    @Test("--max-duration takes 90s, 320m, 2h and 1h30m, and refuses anything else")
    func maxDurationSpelling() async throws {
        #expect(TimeSpan.seconds("90s") == 90)
        #expect(TimeSpan.seconds("320m") == 19_200)
        #expect(TimeSpan.seconds("2h") == 7200)
        #expect(TimeSpan.seconds("1h30m") == 5400)
        #expect(TimeSpan.seconds("45") == 45)
        for bad in ["", "0s", "soon", "5d", "1h30"] { #expect(TimeSpan.seconds(bad) == nil, "\(bad)") }
        let harness = try CommandHarness()
        let run = await harness.run(["apply", "--env", "sandbox", "--max-duration", "soon"])
        #expect(run.code == .usage)
        #expect(run.stderr.contains("--max-duration 'soon' is not a duration"))
    }
}
