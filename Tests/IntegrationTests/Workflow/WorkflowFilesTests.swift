import Foundation
import Testing
import TestSupport
import YAML

/// The workflow files users copy into `.github/workflows/`, and what the README shows of them.
@Suite("Workflow files work as pasted")
struct WorkflowFilesTests {
    static let folder = "examples/github-actions"
    static let files = ["plan-preview.yml", "reconcile.yml", "rollback.yml"]
    /// The repository's own workflows.
    static let own = [".github/workflows/release.yml", ".github/workflows/ci.yml", ".github/workflows/setup-action.yml"]

    @Test("the manual's Workflows page shows each workflow exactly as the file in examples/github-actions holds it")
    func manualShowsTheFiles() throws {
        let readme = try Repository.text("docs/workflows.md")
        for file in Self.files {
            let path = "\(Self.folder)/\(file)"
            let marker = "<!-- file: \(path) -->\n```yaml\n"
            guard let start = readme.range(of: marker) else {
                Issue.record("docs/workflows.md does not show \(path) (no '<!-- file: \(path) -->' before a yaml block)")
                continue
            }
            guard let end = readme.range(of: "```\n", range: start.upperBound..<readme.endIndex) else {
                Issue.record("The block for \(path) in docs/workflows.md is not closed"); continue
            }
            #expect(String(readme[start.upperBound..<end.lowerBound]) == (try Repository.text(path)), "\(path)")
        }
    }

    @Test("the In-App Purchase key lives in GitHub Environments, and each AWS role trusts only the environment of the job that assumes it")
    func keysBehindEnvironments() throws {
        var environments: [String: String] = [:]
        for (file, trust) in [("plan-preview.yml", "examples/aws/plan-role-trust.json"), ("reconcile.yml", "examples/aws/apply-role-trust.json")] {
            let path = "\(Self.folder)/\(file)"
            let root = try #require(try YAMLParser.parse(try Repository.text(path), file: path).first?.root)
            guard case .mapping(let jobs)? = root["jobs"]?.kind, let job = jobs.first?.value else {
                Issue.record("\(path) has no job"); continue
            }
            let environment = try #require(job["environment"]?.scalar?.text, "\(path): the job names no GitHub Environment")
            environments[file] = environment
            #expect(job["env"]?["RETENTION_SYNC_PRIVATE_KEY"] != nil, "\(path) reads the key from the job's secrets")
            let policy = try #require(try JSONSerialization.jsonObject(with: Data(try Repository.text(trust).utf8)) as? [String: Any])
            let statements = try #require(policy["Statement"] as? [[String: Any]])
            #expect(statements.count == 1, "\(trust)")
            let condition = try #require(statements.first?["Condition"] as? [String: [String: String]], "\(trust)")
            #expect(condition.keys.sorted() == ["StringEquals"], "\(trust): an exact subject, no wildcard")
            #expect(condition["StringEquals"]?["token.actions.githubusercontent.com:sub"] == "repo:acme/app:environment:\(environment)", "\(trust)")
            #expect(condition["StringEquals"]?["token.actions.githubusercontent.com:aud"] == "sts.amazonaws.com", "\(trust)")
        }
        #expect(Set(environments.values).count == 2, "the preview and the reconcile use different environments: \(environments)")
    }

    @Test("every workflow parses as YAML and has triggers and jobs with steps")
    func workflowsParse() throws {
        for path in Self.files.map({ "\(Self.folder)/\($0)" }) + Self.own {
            let documents = try YAMLParser.parse(try Repository.text(path), file: path)
            #expect(documents.count == 1, "\(path)")
            let root = try #require(documents.first?.root)
            #expect(root["on"] != nil, "\(path) has no 'on:' triggers")
            guard case .mapping(let jobs)? = root["jobs"]?.kind, !jobs.isEmpty else {
                Issue.record("\(path) has no jobs"); continue
            }
            for job in jobs {
                let name = job.key.scalar?.text ?? "?"
                #expect(job.value["runs-on"] != nil, "\(path): job \(name) has no runs-on")
                guard case .sequence(let steps)? = job.value["steps"]?.kind else {
                    Issue.record("\(path): job \(name) has no steps"); continue
                }
                #expect(!steps.isEmpty, "\(path): job \(name) has no steps")
            }
        }
    }

    @Test("several apps in one repository: every command names its app's folder, and comments, plans, reports and issues are per app")
    func severalApps() throws {
        for file in ["plan-preview.yml", "reconcile.yml"] {
            let path = "\(Self.folder)/\(file)"
            let root = try #require(try YAMLParser.parse(try Repository.text(path), file: path).first?.root)
            guard case .mapping(let jobs)? = root["jobs"]?.kind, let job = jobs.first?.value else {
                Issue.record("\(path) has no job"); continue
            }
            #expect(job["strategy"]?["matrix"]?["app"]?.scalar?.text.contains("vars.RETENTION_SYNC_APPS") == true, "\(path): no app matrix")
            #expect(job["env"]?["RS_APP"]?.scalar?.text == "${{ matrix.app }}", "\(path)")
            guard case .sequence(let steps)? = job["steps"]?.kind else { continue }
            for step in steps {
                guard let script = step["run"]?.scalar?.text else { continue }
                // Every command that reads manifests is told which app's folder to read.
                for line in script.split(separator: "\n") where line.contains("retention-sync ") && !line.contains("#") {
                    let command = line.components(separatedBy: "retention-sync ")[1].split(separator: " ").first.map(String.init) ?? ""
                    guard ["validate", "plan", "apply", "status", "outcomes", "results"].contains(command) else { continue }
                    #expect(line.contains("--manifests \"$RS_APP\""), "\(path): \(line)")
                }
            }
        }
        let preview = try Repository.text("\(Self.folder)/plan-preview.yml")
        #expect(preview.contains("marker=\"<!-- retention-sync plan: $RS_APP $RS_ENV -->\""))
        #expect(preview.contains("name: reviewed-plan-${{ steps.names.outputs.key }}-${{ matrix.environment }}"))
        let reconcile = try Repository.text("\(Self.folder)/reconcile.yml")
        #expect(reconcile.contains("retention-sync-find-reviewed-plan \"reviewed-plan-$KEY-$RS_ENV\" reviewed"))
        #expect(reconcile.contains("title=\"retention-sync: $RS_APP $RS_ENV needs attention\""))
        // While a vendor still writes, drift is proposed as a pull request, never set back or pushed to main.
        #expect(reconcile.contains("if [ \"$ON_DRIFT\" = pull-request ]; then drift=(--leave-drift); fi"))
        #expect(reconcile.contains("retention-sync import --manifests \"$RS_APP\" --env \"$RS_ENV\" --accept-drift"))
        #expect(reconcile.contains("branch=\"retention-sync/drift-$KEY-$RS_ENV\""))
        #expect(reconcile.contains("gh pr create --head \"$branch\""))
        #expect(!reconcile.contains("git push origin main") && !reconcile.contains("git push --force origin main"))
    }

    @Test("the setup action is a composite action whose steps run scripts that exist, with the cache keyed by the route step")
    func setupAction() throws {
        let root = try WorkflowFile.root("action.yml")
        #expect(root["runs"]?["using"]?.scalar?.text == "composite")
        #expect(root["name"]?.scalar?.text == "setup-retention-sync" && root["description"] != nil)
        let steps = try WorkflowFile.steps("action.yml")
        let ids = Set(steps.compactMap { $0["id"]?.scalar?.text })
        #expect(ids == ["route", "cache"])
        for step in steps {
            let name = step["name"]?.scalar?.text ?? "?"
            if let script = step["run"]?.scalar?.text {
                // A composite action's run steps must name their shell.
                #expect(step["shell"]?.scalar?.text == "bash", "action.yml: step '\(name)' has no shell: bash")
                for path in script.components(separatedBy: "$GITHUB_ACTION_PATH/").dropFirst().map({ String($0.prefix { $0 != "\"" && $0 != " " }) }) {
                    #expect(FileManager.default.isExecutableFile(atPath: Repository.url(path).path), "action.yml runs \(path), which is missing or not executable")
                }
            } else {
                #expect(step["uses"]?.scalar?.text == "actions/cache@v5", "action.yml: step '\(name)'")
                #expect(step["with"]?["key"]?.scalar?.text == "${{ steps.route.outputs.cache-key }}")
                #expect(step["with"]?["path"]?.scalar?.text == "${{ steps.route.outputs.bin-dir }}")
            }
            // Every step output it reads is one the route script writes, or the cache's own.
            let text = [step["if"], step["env"], step["with"]].compactMap { $0 }.map { "\($0)" }.joined()
            for reference in text.components(separatedBy: "steps.route.outputs.").dropFirst() {
                let output = String(reference.prefix { $0.isLetter || $0 == "-" })
                #expect(try Repository.text("scripts/retention-sync-setup").contains("output \(output) "), "action.yml reads route output '\(output)' the script never writes")
            }
        }
        // The helper scripts the example workflows call are on the PATH the action sets, and exist.
        #expect(steps.first?["run"]?.scalar?.text == #"echo "$GITHUB_ACTION_PATH/scripts" >> "$GITHUB_PATH""#)
        for file in Self.files {
            let text = try Repository.text("\(Self.folder)/\(file)")
            for helper in ["retention-sync-find-reviewed-plan", "retention-sync-revert"] where text.contains(helper) {
                #expect(FileManager.default.isExecutableFile(atPath: Repository.url("scripts/\(helper)").path))
            }
        }
    }

    @Test("shellcheck finds nothing in the scripts the action and the workflows run")
    func shellcheckIsClean() async throws {
        let tool = try #require(Repository.tool("shellcheck"), "shellcheck is missing: run bash .ci/setup --test, which installs it")
        let scripts = try FileManager.default.contentsOfDirectory(atPath: Repository.url("scripts").path).sorted().map { "scripts/\($0)" }
        #expect(scripts.count == 3)
        let (status, report) = try await Self.check(with: tool, scripts)
        #expect(status == 0, "shellcheck:\n\(report)")
    }

    @Test("the project's CI runs the README's test command on Linux for every supported Swift, the tests on macOS, and keeps benchmark figures")
    func projectCI() throws {
        let path = ".github/workflows/ci.yml"
        let root = try #require(try YAMLParser.parse(try Repository.text(path), file: path).first?.root)
        guard case .sequence(let versions)? = root["jobs"]?["linux"]?["strategy"]?["matrix"]?["swift"]?.kind else {
            Issue.record("ci.yml: the linux job has no Swift version matrix"); return
        }
        #expect(versions.compactMap(\.scalar?.text) == ["6.0", "6.1", "6.2", "6.3"])
        let text = try Repository.text(path)
        #expect(try Repository.text(".ci/run").contains("bash .ci/setup --test && swift test"))
        #expect(text.contains("run: bash .ci/run"))
        #expect(root["jobs"]?["macos"]?["runs-on"]?.scalar?.text.hasPrefix("macos-") == true)
        #expect(text.contains("retention-sync-bench") && text.contains("name: benchmark-figures"))
    }

    @Test("actionlint finds nothing in the workflows, nor in the action they use")
    func actionlintIsClean() async throws {
        let tool = try #require(Repository.tool("actionlint"), "actionlint is missing: run bash .ci/setup --test, which installs it")
        // setup-action.yml uses the action at the root (`uses: ./`), so actionlint reads action.yml too and
        // checks the inputs given to it; with shellcheck (from .ci/setup --test) it checks every run: block.
        let shellcheck = Repository.tool("shellcheck").map { ["-shellcheck", $0.path] } ?? []
        let arguments = shellcheck + Self.files.map { "\(Self.folder)/\($0)" } + Self.own
        let (status, report) = try await Self.check(with: tool, arguments)
        #expect(status == 0, "actionlint:\n\(report)")
    }

    /// Runs a checker over `arguments` from the repository's root and returns its status and its whole
    /// output; waited for on a thread of its own, never on Swift's small concurrency pool.
    static func check(with tool: URL, _ arguments: [String]) async throws -> (Int32, String) {
        try await onOwnThread { () throws -> (Int32, String) in
            let process = Process()
            process.executableURL = tool
            process.currentDirectoryURL = Repository.root
            process.arguments = arguments
            let output = Pipe()
            process.standardOutput = output
            process.standardError = output
            try process.run()
            let report = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return (process.terminationStatus, report)
        }
    }
}
