import EventContract
@testable import ExperimentsTestSupport
import Foundation
import Testing
import TestSupport

/// The reconcile workflow's "Promotion pull requests" step, run by bash as a runner runs it: the real
/// retention-sync over simulated experiments, real git repositories (GitHub's copy and the runner's
/// checkout), and a stand-in for gh that keeps the pull requests' state.
@Suite("Ending an experiment through the reconcile workflow", .serialized)
struct PromotionScenarioTests {
    static let workflow = "examples/github-actions/reconcile.yml"
    static let branch = "retention-sync/promote-manifests-sandbox-cancel-flow-yearly-upsell"

    /// gh's pull requests as files: `prs/<number>` holds the head branch of an open one.
    static let gh = #"""
        echo "$*" >> "$GH_CALLS"
        prs="$GH_STATE/prs"; mkdir -p "$prs"
        case "$1 $2" in
          "pr list")
            for file in "$prs"/*; do [ -f "$file" ] && [ "$(cat "$file")" = "$4" ] && basename "$file"; done; exit 0 ;;
          "pr create")
            number=$(( $(ls "$prs" | wc -l) + 7 )); echo "$4" > "$prs/$number"
            while [ $# -gt 0 ]; do [ "$1" = --body-file ] && cp "$2" "$GH_STATE/body-$number.md"; shift; done; exit 0 ;;
          "pr edit")
            while [ $# -gt 0 ]; do [ "$1" = --body-file ] && cp "$2" "$GH_STATE/edited.md"; shift; done; exit 0 ;;
          "pr close")
            rm -f "$prs/$3"; exit 0 ;;
        esac
        exit 1
        """#

    /// The example manifests in a repository with GitHub's copy and the runner's checkout of it.
    func team(_ s: Scenario) async throws -> (origin: URL, checkout: URL) {
        let repo = s.url("team")
        try FileManager.default.createDirectory(at: repo, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: Repository.url("manifests"), to: repo.appendingPathComponent("manifests"))
        try? FileManager.default.removeItem(at: repo.appendingPathComponent("manifests/.retention-sync"))
        try s.write(".retention-sync/\n", to: "team/.gitignore")
        try await s.git("init", "--quiet", "-b", "main", in: repo)
        try await s.git("add", ".", in: repo)
        try await s.git("commit", "--quiet", "-m", "The team's manifests", in: repo)
        let origin = s.url("origin.git")
        try await s.git("clone", "--quiet", "--bare", repo.path, origin.path, in: s.folder)
        let checkout = s.url("checkout")
        try await s.git("clone", "--quiet", origin.path, checkout.path, in: s.folder)
        return (origin, checkout)
    }

    /// The events an experiment left: the yearly upsell keeps `upsellKeeps` of its customers, the control 30%,
    /// exposed from 60 days ago, so every outcome is decided by now.
    func experiment(upsellKeeps: Double, seed: UInt64, in checkout: URL) throws {
        let events = checkout.appendingPathComponent("manifests/.retention-sync")
        try? FileManager.default.removeItem(at: events)
        var simulator = EventSimulator(arms: [
            EventSimulator.Arm(rule: "upsell-yearly", keepRate: upsellKeeps, answer: "alternateProduct",
                               alternateProduct: "com.example.stillpoint.yearly"),
            EventSimulator.Arm(rule: "upsell-control", keepRate: 0.30, splitControl: true),
        ], customers: 3000)
        simulator.environment = "sandbox"
        simulator.splitGroup = "yearly-upsell"
        simulator.duplicateShare = 0
        simulator.start = Int64(Date().timeIntervalSince1970 * 1000) / EventTime.day * EventTime.day - 70 * EventTime.day
        simulator.run(seed: seed)
        try simulator.write(to: events)
    }

    @Test("a winner gets one pull request with the edit and the evidence, updated on the next run, and closed with the reason when the evidence goes")
    func promotionPullRequestLifecycle() async throws {
        let s = try Scenario("promotion")
        defer { s.finish() }
        let (origin, checkout) = try await team(s)
        let main = try await s.git("rev-parse", "main", in: origin)
        let binary = Bundle.main.bundleURL.appendingPathComponent("retention-sync")
        try s.fake("retention-sync", "exec \"\(binary.path)\" \"$@\"\n")
        try s.fake("gh", Self.gh)
        let script = try WorkflowFile.script(Self.workflow, step: "Promotion pull requests")
        let environment = ["RS_APP": "manifests", "RS_ENV": "sandbox", "KEY": "manifests", "GH_CALLS": s.url("gh-calls").path,
                           "GH_STATE": s.url("gh").path, "GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "acme/stillpoint",
                           "GITHUB_RUN_ID": "42"]

        // A true winner: the step proposes it.
        try experiment(upsellKeeps: 0.45, seed: 7, in: checkout)
        let first = try await s.runStep(script, in: checkout, environment: environment)
        #expect(first.status == 0, "\(first.all)")
        let proposed = try await s.git("show", "\(Self.branch):manifests/cancel-flow.yaml", in: origin)
        #expect(!proposed.contains("- name: upsell-control") && proposed.contains("- name: upsell-yearly"), "\(proposed)")
        #expect(!proposed.contains("split: { group: yearly-upsell"))
        #expect(s.read("gh/prs/7") == Self.branch + "\n")
        #expect(s.read("gh/body-7.md").hasPrefix("## Promote `upsell-yearly` in `cancel-flow` / `yearly-upsell`"), "\(s.read("gh/body-7.md"))")
        #expect(s.read("step-summary").contains("cancel-flow / yearly-upsell: a pull request proposes its winner"))
        // Nothing moved without a person: main is where it was, and the checkout is back on it, clean.
        #expect(try await s.git("rev-parse", "main", in: origin) == main)
        #expect(try await s.git("rev-parse", "--abbrev-ref", "HEAD", in: checkout) == "main")
        #expect(try await s.git("status", "--porcelain", "--untracked-files=no", in: checkout).isEmpty)

        // The next run, same evidence: the same pull request is updated, not a second one opened.
        let second = try await s.runStep(script, in: checkout, environment: environment)
        #expect(second.status == 0, "\(second.all)")
        #expect(s.read("gh-calls").components(separatedBy: "pr create").count == 2)
        #expect(s.read("gh-calls").contains("pr edit 7 --body-file evidence.md"))
        #expect(s.read("gh/edited.md").hasPrefix("## Promote `upsell-yearly`"))

        // New data no longer names a winner: the stale pull request is closed, saying why.
        try experiment(upsellKeeps: 0.30, seed: 8, in: checkout)
        let third = try await s.runStep(script, in: checkout, environment: environment)
        #expect(third.status == 0, "\(third.all)")
        let close = try #require(s.read("gh-calls").split(separator: "\n").first { $0.hasPrefix("pr close 7") })
        #expect(close.contains("--delete-branch") && close.contains("not promoting yearly-upsell"), "\(close)")
        #expect(close.contains("https://github.com/acme/stillpoint/actions/runs/42"))
        #expect(!FileManager.default.fileExists(atPath: s.url("gh/prs/7").path))
        #expect(s.read("step-summary").contains("pull request #7 closed: not promoting yearly-upsell"))
        #expect(try await s.git("rev-parse", "main", in: origin) == main)

        // The team declared a guardrail, and the upsell turns out harmful: the pull request stops it, with a warning.
        let flow = checkout.appendingPathComponent("manifests/cancel-flow.yaml")
        try (try String(contentsOf: flow, encoding: .utf8) + "guardrails:\n  - group: yearly-upsell\n    metric: kept24h\n    maxDrop: 2\n")
            .write(to: flow, atomically: true, encoding: .utf8)
        try await s.git("commit", "--quiet", "-am", "Guard the yearly upsell", in: checkout)
        try experiment(upsellKeeps: 0.15, seed: 9, in: checkout)
        let fourth = try await s.runStep(script, in: checkout, environment: environment)
        #expect(fourth.status == 0, "\(fourth.all)")
        #expect(fourth.stdout.contains("::warning title=retention-sync manifests sandbox::guardrail crossed in cancel-flow / yearly-upsell"), "\(fourth.all)")
        let create = try #require(s.read("gh-calls").split(separator: "\n").last { $0.hasPrefix("pr create") })
        #expect(create.contains("guardrail crossed, stop an arm of cancel-flow / yearly-upsell"), "\(create)")
        let stopped = try await s.git("show", "\(Self.branch):manifests/cancel-flow.yaml", in: origin)
        #expect(!stopped.contains("- name: upsell-yearly") && !stopped.contains("guardrails:"), "\(stopped)")
        #expect(s.read("step-summary").contains("a pull request proposes stopping the arm that crossed a guardrail"))
    }
}
