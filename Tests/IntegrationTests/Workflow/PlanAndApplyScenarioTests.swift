import Foundation
import Testing
import TestSupport
import YAML

/// The plan preview's and the reconcile's own steps, run as the runner runs them, with stand-ins for
/// retention-sync (its exit codes) and gh (GitHub's recorded answers in fixtures/github-api).
@Suite("Previewing and reconciling")
struct PlanAndApplyScenarioTests {
    static let preview = "examples/github-actions/plan-preview.yml"
    static let reconcile = "examples/github-actions/reconcile.yml"
    static let merged = "9f1c2a7e55d04b1c8e3b6a0f7d2e4c1b9a8f7e6d"

    /// retention-sync stand-in: prints its arguments to stdout, logs them, exits with $FAKE_CODE.
    func fakeRetentionSync(_ s: Scenario) throws {
        try s.fake("retention-sync", #"""
            echo "$*" >> "$FAKE_LOG"
            echo "retention-sync $*"
            exit "${FAKE_CODE:-0}"
            """#)
    }

    /// gh stand-in answering from fixtures/github-api, logging every call.
    func fakeGh(_ s: Scenario, pulls: String = "commit-pulls.json") throws {
        let fixtures = Repository.url("fixtures/github-api").path
        try s.fake("gh", #"""
            echo "$*" >> "$FAKE_LOG"
            case "$1 $2" in
              "api repos/acme/daybreak/commits/\#(Self.merged)/pulls") cat "\#(fixtures)/\#(pulls)" ;;
              "api --paginate")
                [ "$3" = "repos/acme/daybreak/actions/artifacts?name=reviewed-plan-manifests-production&per_page=100" ] || { echo "unexpected: $3" >&2; exit 1; }
                cat "\#(fixtures)/artifacts-page-1.json" "\#(fixtures)/artifacts-page-2.json" ;;
              "run download")
                # gh run download RUN --repo R --name NAME --dir DIR: the artifact holds the file the preview uploaded.
                mkdir -p "$9"; echo "{\"from_run\": $3}" > "$9/reviewed-plan-production.json" ;;
              "api repos/acme/daybreak/commits/"*) echo "[]" ;;
              *) echo "unexpected gh $*" >&2; exit 1 ;;
            esac
            """#)
    }

    func environment(_ s: Scenario, _ extra: [String: String] = [:]) -> [String: String] {
        ["RS_APP": "manifests", "RS_ENV": "production", "FAKE_LOG": s.url("calls").path,
         "GITHUB_REPOSITORY": "acme/daybreak", "GITHUB_SHA": Self.merged].merging(extra) { $1 }
    }

    @Test("a pull request's preview passes when there is nothing to do, changes pending or something at Apple needing a person, and fails on an error")
    func previewExitCodes() async throws {
        let script = try WorkflowFile.script(Self.preview, step: "Plan")
        for (code, passes) in [(0, true), (2, true), (3, true), (1, false), (64, false)] {
            let s = try Scenario("preview-\(code)")
            defer { s.finish() }
            try fakeRetentionSync(s)
            let result = try await s.runStep(script, environment: environment(s, ["FAKE_CODE": "\(code)"]))
            #expect((result.status == 0) == passes, "plan exit \(code): step exit \(result.status)\n\(result.all)")
            if !passes { #expect(result.status == Int32(code)) }
            #expect(s.outputs["exit-code"] == "\(code)")
            #expect(result.stdout.contains("::warning") == (code == 3), "plan exit \(code): \(result.stdout)")
            #expect(s.read("step-summary").contains("--detailed-exitcode"), "the plan went to the job summary")
            #expect(s.read("calls").contains("--out reviewed-plan-production.json"))
            #expect(s.read("calls").contains("--preview preview-production"), "the changed messages drawn for the comment")
        }
    }

    @Test("a merge's reconcile finds the reviewed plan by artifact name and head commit, whatever the preview's workflow file is called, and applies it")
    func findsReviewedPlan() async throws {
        let s = try Scenario("reconcile-finds-plan")
        defer { s.finish() }
        try fakeGh(s)
        try fakeRetentionSync(s)
        let find = try WorkflowFile.script(Self.reconcile, step: "Find the plan the pull request showed")
        let result = try await s.runStep(find, environment: environment(s, ["KEY": "manifests"]))
        #expect(result.status == 0, "\(result.all)")
        // The newest unexpired artifact for the pull request's head commit from this repository: run 5002
        // (not 5001, older; not 4999, another head commit; not 5003, from a fork; not 5004, expired).
        #expect(s.read("calls").contains("run download 5002 --repo acme/daybreak --name reviewed-plan-manifests-production --dir reviewed"))
        #expect(s.read("reviewed/reviewed-plan-production.json").contains("5002"))
        #expect(!s.read("calls").contains("run list"), "no lookup by workflow file name")

        let apply = try await s.runStep(try WorkflowFile.script(Self.reconcile, step: "Apply"), environment: environment(s))
        #expect(apply.status == 0, "\(apply.all)")
        #expect(s.read("calls").contains("--plan reviewed/reviewed-plan-production.json --replan-if-stale"))
    }

    @Test("the preview uploads the plan under the name, and with the file, that the reconcile looks for")
    func previewAndReconcileAgree() throws {
        let upload = try WorkflowFile.step(Self.preview, named: "Keep the reviewed plan")
        #expect(upload["with"]?["name"]?.scalar?.text == "reviewed-plan-${{ steps.names.outputs.key }}-${{ matrix.environment }}")
        #expect(upload["with"]?["path"]?.scalar?.text == "reviewed-plan-${{ matrix.environment }}.json")
        // Only a preview that succeeded leaves a plan to apply.
        #expect(upload["if"]?.scalar?.text == "steps.plan.outcome == 'success'")
        let find = try WorkflowFile.script(Self.reconcile, step: "Find the plan the pull request showed")
        #expect(find.contains(#"retention-sync-find-reviewed-plan "reviewed-plan-$KEY-$RS_ENV" reviewed"#))
        #expect(try WorkflowFile.script(Self.reconcile, step: "Apply").contains(#"reviewed/reviewed-plan-$RS_ENV.json"#))
        for path in [Self.preview, Self.reconcile] {
            let names = try WorkflowFile.step(path, named: "Name this app's files")
            #expect(names["run"]?.scalar?.text == #"echo "key=$(printf '%s' "$RS_APP" | tr -c 'A-Za-z0-9._-' '-')" >> "$GITHUB_OUTPUT""#, "\(path)")
        }
    }

    @Test("a push that merged no pull request, or whose preview left no plan, plans afresh")
    func noReviewedPlan() async throws {
        let s = try Scenario("reconcile-no-plan")
        defer { s.finish() }
        try fakeGh(s)
        try fakeRetentionSync(s)
        let find = try WorkflowFile.script(Self.reconcile, step: "Find the plan the pull request showed")
        let result = try await s.runStep(find, environment: environment(s, ["KEY": "manifests", "GITHUB_SHA": "0000000000000000000000000000000000000000"]))
        #expect(result.status == 0, "\(result.all)")
        #expect(result.stderr.contains("no pull request was merged as 000000000000; the reconcile plans afresh"))
        #expect(!FileManager.default.fileExists(atPath: s.url("reviewed").path))

        // The pull request was merged, but only a fork's run (or an expired one) has an artifact of that name.
        let other = try Scenario("reconcile-fork-plan")
        defer { other.finish() }
        try fakeGh(other)
        try fakeRetentionSync(other)
        let fixtures = Repository.url("fixtures/github-api")
        let page = try String(contentsOf: fixtures.appendingPathComponent("artifacts-page-1.json"), encoding: .utf8)
        // Keep only the fork's artifact on page 1: the jq filter must refuse it.
        let decoded = try JSONSerialization.jsonObject(with: Data(page.utf8)) as? [String: Any]
        let artifacts = try #require(decoded?["artifacts"] as? [[String: Any]])
        let forkOnly = artifacts.filter { ($0["workflow_run"] as? [String: Any])?["head_repository_id"] as? Int == 77 }
        #expect(forkOnly.count == 1)
        let data = try JSONSerialization.data(withJSONObject: ["total_count": 1, "artifacts": forkOnly])
        let script = try WorkflowFile.script(Self.reconcile, step: "Find the plan the pull request showed")
        try other.fake("gh", #"""
            case "$1 $2" in
              "api repos/"*) cat "\#(fixtures.path)/commit-pulls.json" ;;
              "api --paginate") printf '%s' '\#(String(decoding: data, as: UTF8.self))'; cat "\#(fixtures.path)/artifacts-page-2.json" ;;
              *) echo "gh $*" >> "$FAKE_LOG"; exit 1 ;;
            esac
            """#)
        let refused = try await other.runStep(script, environment: environment(other, ["KEY": "manifests"]))
        #expect(refused.status == 0, "\(refused.all)")
        #expect(refused.stderr.contains("no unexpired artifact reviewed-plan-manifests-production from a preview of 4e7a9c1d2b3f"))
        #expect(other.read("calls").isEmpty, "nothing downloaded")
    }

    @Test("the reconcile stays green when apply did what it could but something at Apple needs a person, and opens the tracking issue")
    func reconcileAttention() async throws {
        let apply = try WorkflowFile.script(Self.reconcile, step: "Apply")
        for (code, passes, attention) in [(0, true, "false"), (3, true, "true"), (1, false, "false"), (2, false, "false")] {
            let s = try Scenario("reconcile-\(code)")
            defer { s.finish() }
            try fakeRetentionSync(s)
            let result = try await s.runStep(apply, environment: environment(s, ["FAKE_CODE": "\(code)"]))
            #expect((result.status == 0) == passes, "apply exit \(code): step exit \(result.status)\n\(result.all)")
            #expect(s.outputs["attention"] == attention, "apply exit \(code)")
            #expect(result.stdout.contains("::warning") == (code == 3))
        }
        // The tracking issue step opens the issue on either attention: status's or apply's.
        let issue = try WorkflowFile.step(Self.reconcile, named: "Tracking issue")
        #expect(issue["env"]?["ATTENTION"]?.scalar?.text == "${{ steps.status.outputs.attention == 'true' || steps.apply.outputs.attention == 'true' }}")
        let s = try Scenario("reconcile-issue")
        defer { s.finish() }
        try s.fake("gh", #"""
            echo "$*" >> "$FAKE_LOG"
            [ "$1 $2" = "issue list" ] && exit 0
            exit 0
            """#)
        let result = try await s.runStep(try #require(issue["run"]?.scalar?.text), environment: environment(s, [
            "ATTENTION": "true", "APPLY_OUTCOME": "success", "RUN_URL": "https://github.com/acme/daybreak/actions/runs/1",
        ]))
        #expect(result.status == 0, "\(result.all)")
        #expect(s.read("calls").contains("issue create --repo acme/daybreak --title retention-sync: manifests production needs attention"))
    }

    @Test("a pull request from a fork is validated without secrets, and neither plans against Apple nor submits")
    func forkPullRequest() throws {
        let root = try WorkflowFile.root(Self.preview)
        guard case .mapping(let jobs)? = root["jobs"]?.kind, let job = jobs.first?.value else { Issue.record("no job"); return }
        let trusted = try #require(job["env"]?["RS_TRUSTED"]?.scalar?.text)
        #expect(trusted == "${{ github.event.pull_request.head.repo.fork != true && secrets.RETENTION_SYNC_PRIVATE_KEY != '' }}")
        let steps = try WorkflowFile.steps(Self.preview)
        var needsTrust = 0
        for step in steps {
            let condition = step["if"]?.scalar?.text ?? ""
            let uses = step["uses"]?.scalar?.text ?? ""
            let script = step["run"]?.scalar?.text ?? ""
            // Whatever needs a secret or AWS: the credentials, the plan (Apple's API), the submission.
            if uses.hasPrefix("aws-actions/") || script.contains("retention-sync plan --") || script.contains("retention-sync apply --") {
                #expect(condition.contains("env.RS_TRUSTED == 'true'") || condition.contains("steps.plan.outcome == 'success'"),
                        "step '\(step["name"]?.scalar?.text ?? uses)' runs for forks: if: \(condition)")
                needsTrust += 1
            }
            if script.contains("retention-sync validate") { #expect(condition.isEmpty, "validation runs for everyone") }
        }
        #expect(needsTrust == 4)
        let validatedOnly = try WorkflowFile.step(Self.preview, named: "Validated only")
        #expect(validatedOnly["if"]?.scalar?.text == "env.RS_TRUSTED != 'true'")
        // The submission's own condition names the trust too, not only the plan's outcome.
        let submit = try WorkflowFile.step(Self.preview, named: "Submit the new content for App Review")
        #expect(submit["if"]?.scalar?.text.contains("env.RS_TRUSTED == 'true'") == true)
    }

    @Test("the webhook secret reaches every job that runs apply or status, as the Notifications page says")
    func webhookWired() throws {
        for path in [Self.preview, Self.reconcile] {
            let root = try WorkflowFile.root(path)
            guard case .mapping(let jobs)? = root["jobs"]?.kind, let job = jobs.first?.value else { Issue.record("no job"); continue }
            #expect(job["env"]?["RETENTION_SYNC_WEBHOOK_URL"]?.scalar?.text == "${{ secrets.RETENTION_SYNC_WEBHOOK_URL }}", "\(path)")
        }
        #expect(try Repository.text("docs/notifications.md").contains("`RETENTION_SYNC_WEBHOOK_URL`"))
    }

    @Test("the reconcile writes the results page beside the job summary, keeps the file its upload names, and links it in the summary")
    func reconcilePublishesTheResultsPage() async throws {
        let s = try Scenario("reconcile-results-page")
        defer { s.finish() }
        try fakeRetentionSync(s)
        let results = try await s.runStep(try WorkflowFile.script(Self.reconcile, step: "Results"), environment: environment(s))
        #expect(results.status == 0, "\(results.all)")
        #expect(s.read("calls").contains("results --manifests manifests --env production --format markdown"))
        #expect(s.read("calls").contains("results --manifests manifests --env production --format html"))
        // The stand-in prints its arguments: the page went to the file, the Markdown to the summary.
        #expect(s.read("results-production.html").contains("--format html"))
        #expect(s.read("step-summary").contains("--format markdown") && !s.read("step-summary").contains("--format html"))
        let upload = try WorkflowFile.step(Self.reconcile, named: "Keep the results page")
        #expect(upload["with"]?["path"]?.scalar?.text == "results-${{ matrix.environment }}.html")
        #expect(upload["id"]?.scalar?.text == "keep-results")
        let link = try await s.runStep(try WorkflowFile.script(Self.reconcile, step: "Link the results page"),
                                       environment: environment(s, ["RESULTS_URL": "https://github.com/acme/daybreak/actions/runs/7/artifacts/9"]))
        #expect(link.status == 0, "\(link.all)")
        #expect(s.read("step-summary").contains("[The results page, with charts](https://github.com/acme/daybreak/actions/runs/7/artifacts/9)"))
        #expect(s.read("step-summary").contains("results-production.html"))
    }

    @Test("the reconcile publishes the customer facts right after reading the outcomes, when the pseudonym secret is set")
    func reconcilePublishesTheFacts() async throws {
        let s = try Scenario("reconcile-facts")
        defer { s.finish() }
        try fakeRetentionSync(s)
        let facts = try await s.runStep(try WorkflowFile.script(Self.reconcile, step: "Customer facts"), environment: environment(s))
        #expect(facts.status == 0, "\(facts.all)")
        #expect(s.read("calls").contains("facts publish --manifests manifests --env production"))
        let step = try WorkflowFile.step(Self.reconcile, named: "Customer facts")
        #expect(step["if"]?.scalar?.text == "always() && env.RETENTION_SYNC_PSEUDONYM_SECRET != ''")
        let text = try Repository.text(Self.reconcile)
        let outcomes = try #require(text.range(of: "- name: Outcomes")), published = try #require(text.range(of: "- name: Customer facts"))
        let results = try #require(text.range(of: "- name: Results"))
        #expect(outcomes.lowerBound < published.lowerBound && published.lowerBound < results.lowerBound)
    }
}
