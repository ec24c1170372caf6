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
    static let own = [".github/workflows/release.yml", ".github/workflows/ci.yml"]

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
        #expect(reconcile.contains("--name \"reviewed-plan-$KEY-$RS_ENV\""))
        #expect(reconcile.contains("title=\"retention-sync: $RS_APP $RS_ENV needs attention\""))
    }

    @Test("the plan preview treats exit code 2 (changes pending) as a successful preview")
    func planPreviewExitCodes() throws {
        let text = try Repository.text("\(Self.folder)/plan-preview.yml")
        #expect(text.contains("--detailed-exitcode"))
        #expect(text.contains("case \"$code\" in 0|2) ;; *) exit \"$code\" ;; esac"))
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

    @Test("actionlint finds nothing in the workflows", .enabled(if: Repository.tool("actionlint") != nil))
    func actionlintIsClean() async throws {
        let tool = try #require(Repository.tool("actionlint"))
        let arguments = Self.files.map { "\(Self.folder)/\($0)" } + Self.own
        // Waited for on a thread of its own, never on Swift's small concurrency pool.
        let (status, report) = try await onOwnThread { () throws -> (Int32, String) in
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
        #expect(status == 0, "actionlint:\n\(report)")
    }
}
