import Foundation
import Testing
import TestSupport
import YAML

/// The rollback workflow's revert (`scripts/retention-sync-revert`, which the workflow calls) on real
/// git repositories, one for each way GitHub lands a pull request.
@Suite("Rolling back")
struct RollbackScenarioTests {
    static let before = "header: Spare 40 % on a year\n"
    static let after = "header: Jahresabo: 40 % günstiger\n"
    static let messages = "manifests/messages/offer.yaml"

    /// A team repository on `main` with one message, then a later, unrelated commit is added by `land`.
    func team(_ s: Scenario) async throws -> URL {
        let repo = s.url("team")
        try FileManager.default.createDirectory(at: repo, withIntermediateDirectories: true)
        try await s.git("init", "--quiet", "--initial-branch=main", in: repo)
        try s.write(Self.before, to: "team/\(Self.messages)")
        try s.write("bundleId: com.acme.daybreak\n", to: "team/manifests/app.yaml")
        try await s.git("add", ".", in: repo)
        try await s.git("commit", "--quiet", "-m", "Start the offer", in: repo)
        return repo
    }

    /// A pull request on branch `offer`: two commits that change the message.
    func pullRequest(_ s: Scenario, _ repo: URL) async throws {
        try await s.git("switch", "--quiet", "-c", "offer", in: repo)
        try s.write("header: Jahresabo\n", to: "team/\(Self.messages)")
        try await s.git("commit", "--quiet", "-am", "Translate the offer", in: repo)
        try s.write(Self.after, to: "team/\(Self.messages)")
        try await s.git("commit", "--quiet", "-am", "Say how much", in: repo)
        try await s.git("switch", "--quiet", "main", in: repo)
        // main moved on meanwhile.
        try s.write("# the team's notes\n", to: "team/NOTES.md")
        try await s.git("add", "NOTES.md", in: repo)
        try await s.git("commit", "--quiet", "-m", "Notes (#3)", in: repo)
    }

    /// After the pull request landed: one more commit on main that the rollback must keep.
    func later(_ s: Scenario, _ repo: URL) async throws {
        try s.write("bundleId: com.acme.daybreak\nappAppleId: 1234\n", to: "team/manifests/app.yaml")
        try await s.git("commit", "--quiet", "-am", "Name the app (#9)", in: repo)
    }

    /// The message is back as it was, later work is kept, the tree is clean, and one ordinary commit was made.
    func expectRolledBack(_ s: Scenario, _ repo: URL, from head: String, title: String) async throws {
        #expect(s.read("team/\(Self.messages)") == Self.before)
        #expect(s.read("team/manifests/app.yaml").contains("appAppleId: 1234"), "the later commit was kept")
        #expect(s.read("team/NOTES.md") == "# the team's notes\n")
        #expect(try await s.git("status", "--porcelain", in: repo).isEmpty)
        #expect(try await s.git("rev-parse", "HEAD~1", in: repo) == head, "exactly one commit on top")
        #expect(try await s.git("rev-list", "--parents", "-n1", "HEAD", in: repo).split(separator: " ").count == 2)
        #expect(try await s.git("log", "-1", "--format=%s", in: repo) == title)
    }

    @Test("a team that commits straight to main rolls back a plain commit")
    func plainCommit() async throws {
        let s = try Scenario("rollback-plain")
        defer { s.finish() }
        let repo = try await team(s)
        try s.write("# the team's notes\n", to: "team/NOTES.md")
        try await s.git("add", "NOTES.md", in: repo)
        try await s.git("commit", "--quiet", "-m", "Notes", in: repo)
        try s.write(Self.after, to: "team/\(Self.messages)")
        try await s.git("commit", "--quiet", "-am", "Say how much", in: repo)
        let change = try await s.git("rev-parse", "--short", "HEAD", in: repo)
        try await later(s, repo)
        let head = try await s.git("rev-parse", "HEAD", in: repo)

        let result = try await s.run("retention-sync-revert", [change], in: repo)
        #expect(result.status == 0, "\(result.all)")
        let full = try await s.git("rev-parse", change, in: repo)
        try await expectRolledBack(s, repo, from: head, title: "Roll back \(full.prefix(12)): Say how much")
        #expect(s.outputs["reverted"] == full)
    }

    @Test("a team that squash-merges rolls back a pull request by number")
    func squashByNumber() async throws {
        let s = try Scenario("rollback-squash")
        defer { s.finish() }
        let repo = try await team(s)
        try await pullRequest(s, repo)
        try await s.git("merge", "--quiet", "--squash", "offer", in: repo)
        try await s.git("commit", "--quiet", "-m", "Jahresabo offer (#12)", "-m", "* Translate the offer\n* Say how much", in: repo)
        let squash = try await s.git("rev-parse", "HEAD", in: repo)
        try await later(s, repo)
        let head = try await s.git("rev-parse", "HEAD", in: repo)

        let result = try await s.run("retention-sync-revert", ["--pull-request", "12"], in: repo)
        #expect(result.status == 0, "\(result.all)")
        try await expectRolledBack(s, repo, from: head, title: "Roll back #12: Jahresabo offer")
        #expect(s.outputs["reverted"] == squash)
    }

    /// GitHub's merge button: a merge commit with two parents, "Merge pull request #N from OWNER/BRANCH",
    /// the pull request's title as its body.
    func mergeButton(_ s: Scenario, _ repo: URL) async throws -> String {
        try await pullRequest(s, repo)
        try await s.git("merge", "--quiet", "--no-ff", "offer", "-m", "Merge pull request #7 from acme/offer", "-m", "Jahresabo offer", in: repo)
        let merge = try await s.git("rev-parse", "HEAD", in: repo)
        #expect(try await s.git("rev-list", "--parents", "-n1", merge, in: repo).split(separator: " ").count == 3, "a real two-parent merge")
        return merge
    }

    @Test("a team that merges with the merge button rolls back the merge commit")
    func mergeCommit() async throws {
        let s = try Scenario("rollback-merge")
        defer { s.finish() }
        let repo = try await team(s)
        let merge = try await mergeButton(s, repo)
        try await later(s, repo)
        let head = try await s.git("rev-parse", "HEAD", in: repo)

        // What the old workflow ran fails on exactly this commit.
        let plain = try await s.run("git", ["revert", "--no-edit", merge], in: repo)
        #expect(plain.status != 0 && plain.stderr.contains("is a merge but no -m option was given"))
        try await s.git("reset", "--hard", "--quiet", head, in: repo)

        let result = try await s.run("retention-sync-revert", [merge], in: repo)
        #expect(result.status == 0, "\(result.all)")
        try await expectRolledBack(s, repo, from: head, title: "Roll back \(merge.prefix(12)): Merge pull request #7 from acme/offer")
    }

    @Test("a team that merges with the merge button rolls back a pull request by number")
    func mergeByNumber() async throws {
        let s = try Scenario("rollback-merge-number")
        defer { s.finish() }
        let repo = try await team(s)
        let merge = try await mergeButton(s, repo)
        try await later(s, repo)
        let head = try await s.git("rev-parse", "HEAD", in: repo)

        let result = try await s.run("retention-sync-revert", ["--pull-request", "#7"], in: repo)
        #expect(result.status == 0, "\(result.all)")
        try await expectRolledBack(s, repo, from: head, title: "Roll back #7: Jahresabo offer")
        #expect(s.outputs["reverted"] == merge)
        #expect(try await s.git("log", "-1", "--format=%b", in: repo).contains("This reverts commit \(merge)."))
    }

    @Test("a team that rebase-merges rolls back all of a pull request's commits by number")
    func rebaseByNumber() async throws {
        let s = try Scenario("rollback-rebase")
        defer { s.finish() }
        let repo = try await team(s)
        try await pullRequest(s, repo)
        // "Rebase and merge": the pull request's commits, replayed on main, with no mark in git.
        try await s.git("cherry-pick", "main..offer", in: repo)
        let last = try await s.git("rev-parse", "HEAD", in: repo)
        let first = try await s.git("rev-parse", "HEAD~1", in: repo)
        try await later(s, repo)
        let head = try await s.git("rev-parse", "HEAD", in: repo)
        // GitHub's record of the pull request, as `gh pr view 15 --json state,mergeCommit,commits --jq …` prints it.
        try s.fake("gh", """
            echo "$*" >> "\(s.url("gh-calls").path)"
            [ "$1 $2 $3" = "pr view 15" ] || exit 1
            printf 'MERGED\\t\(last)\\t2\\n'
            """)

        let result = try await s.run("retention-sync-revert", ["--pull-request", "15"], in: repo,
                                     environment: ["GITHUB_REPOSITORY": "acme/daybreak"])
        #expect(result.status == 0, "\(result.all)")
        try await expectRolledBack(s, repo, from: head, title: "Roll back #15: Translate the offer")
        #expect(s.outputs["reverted"] == "\(last) \(first)")
        #expect(s.read("gh-calls").contains("--repo acme/daybreak"))
    }

    @Test("rolling back a pull request that never landed is refused, and the branch stays as it was")
    func unknownPullRequest() async throws {
        let s = try Scenario("rollback-unknown")
        defer { s.finish() }
        let repo = try await team(s)
        _ = try await mergeButton(s, repo)
        let head = try await s.git("rev-parse", "HEAD", in: repo)

        let result = try await s.run("retention-sync-revert", ["--pull-request", "70"], in: repo)
        #expect(result.status == 1)
        #expect(result.stderr.contains("no commit on main names pull request #70"))
        #expect(try await s.git("rev-parse", "HEAD", in: repo) == head)
        #expect(try await s.git("status", "--porcelain", in: repo).isEmpty)

        // A commit on another branch is no rollback of main either.
        let elsewhere = try await s.git("rev-parse", "offer", in: repo)
        try await s.git("switch", "--quiet", "-c", "other", "HEAD~1", in: repo)
        let refused = try await s.run("retention-sync-revert", [elsewhere], in: repo)
        #expect(refused.status == 1 && refused.stderr.contains("is not on other"), "\(refused.all)")
    }

    @Test("a rollback that conflicts with later changes commits nothing and says to revert by hand")
    func conflict() async throws {
        let s = try Scenario("rollback-conflict")
        defer { s.finish() }
        let repo = try await team(s)
        let merge = try await mergeButton(s, repo)
        try s.write("header: Jahresabo: 50 % günstiger\n", to: "team/\(Self.messages)")
        try await s.git("commit", "--quiet", "-am", "Raise the discount (#8)", in: repo)
        let head = try await s.git("rev-parse", "HEAD", in: repo)

        let result = try await s.run("retention-sync-revert", [merge], in: repo)
        #expect(result.status == 1)
        #expect(result.stderr.contains("conflicts with later changes"))
        #expect(try await s.git("rev-parse", "HEAD", in: repo) == head)
        #expect(try await s.git("status", "--porcelain", in: repo).isEmpty)
        #expect(s.read("team/\(Self.messages)") == "header: Jahresabo: 50 % günstiger\n")
    }

    @Test("the rollback workflow's step pushes a revert branch and opens a pull request for a merge-button pull request")
    func workflowStep() async throws {
        let s = try Scenario("rollback-workflow")
        defer { s.finish() }
        let repo = try await team(s)
        _ = try await mergeButton(s, repo)
        try await later(s, repo)
        // GitHub's copy of the repository, and the runner's checkout of it.
        let origin = s.url("origin.git")
        try await s.git("clone", "--quiet", "--bare", repo.path, origin.path, in: s.folder)
        let checkout = s.url("checkout")
        try await s.git("clone", "--quiet", origin.path, checkout.path, in: s.folder)
        try s.fake("gh", #"printf '%s\n' "$@" > "$GH_CALLS""#)
        let script = try WorkflowFile.script("examples/github-actions/rollback.yml", step: "Open the revert as a pull request")

        let result = try await s.runStep(script, in: checkout, environment: [
            "PULL_REQUEST": "7", "COMMIT": "", "GITHUB_REPOSITORY": "acme/daybreak", "GH_CALLS": s.url("gh-calls").path,
        ])
        #expect(result.status == 0, "\(result.all)")
        let pushed = try await s.git("show", "rollback-pr-7:\(Self.messages)", in: origin)
        #expect(pushed + "\n" == Self.before)
        let call = s.read("gh-calls").split(separator: "\n").map(String.init)
        #expect(Array(call.prefix(4)) == ["pr", "create", "--title", "Roll back #7: Jahresabo offer"])
        #expect(call.contains("rollback-pr-7"))

        let both = try await s.runStep(script, in: checkout, environment: ["PULL_REQUEST": "7", "COMMIT": "abc"])
        #expect(both.status == 1 && both.stdout.contains("Give either a commit or a pull request number"))
    }
}
