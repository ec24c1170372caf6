import CLIKit
import Emulator
import Foundation
import RetentionMessagingModels
@testable import CommandTestSupport
import Testing
import TestSupport
import YAML

/// The Atlantis example, run as Atlantis runs it: each project's plan steps, then its apply steps,
/// in the project's folder with `$WORKSPACE` and `$PLANFILE` set — here in-process against the
/// emulator, the relative paths resolved from the project's folder.
@Suite("Atlantis runs the manifests' plan and apply")
struct AtlantisWorkflowTests {
    /// The `run:` commands of one stage (`plan` or `apply`) of the server's retention-sync workflow.
    static func commands(_ stage: String) throws -> [String] {
        let path = "examples/atlantis/repos.yaml"
        let root = try #require(try YAMLParser.parse(try Repository.text(path), file: path).first?.root)
        guard case .sequence(let steps)? = root["workflows"]?["retention-sync"]?[stage]?["steps"]?.kind else {
            Issue.record("\(path) has no \(stage) steps"); return []
        }
        return steps.compactMap { $0["run"]?.scalar?.text }
    }

    /// The projects of the repository's atlantis.yaml: (folder, workspace, workflow).
    static func projects() throws -> [(dir: String, workspace: String, workflow: String)] {
        let path = "examples/atlantis/atlantis.yaml"
        let root = try #require(try YAMLParser.parse(try Repository.text(path), file: path).first?.root)
        guard case .sequence(let projects)? = root["projects"]?.kind else { return [] }
        return projects.compactMap { project in
            guard let dir = project["dir"]?.scalar?.text, let workspace = project["workspace"]?.scalar?.text,
                  let workflow = project["workflow"]?.scalar?.text else { return nil }
            return (dir, workspace, workflow)
        }
    }

    /// One step's command as the project's shell would run it: variables filled in, paths relative
    /// to the project's folder made relative to the harness's root.
    static func argv(_ command: String, dir: String, workspace: String, planfile: String) -> [String] {
        let words = command.replacingOccurrences(of: "\"$WORKSPACE\"", with: workspace)
            .replacingOccurrences(of: "\"$PLANFILE\"", with: planfile)
            .split(separator: " ").map(String.init)
        return words.map { $0 == "." ? dir : $0 }
    }

    static func runStage(_ stage: String, harness: CommandHarness, dir: String, workspace: String,
                         planfile: String) async throws -> [CommandHarness.Run] {
        var runs: [CommandHarness.Run] = []
        for command in try commands(stage) {
            let argv = argv(command, dir: dir, workspace: workspace, planfile: planfile)
            #expect(argv.first == "retention-sync", "\(command)")
            runs.append(await harness.run(Array(argv.dropFirst())))
        }
        return runs
    }

    @Test("each environment's project plans into Atlantis's plan file and applies exactly that plan; a second plan has nothing to do")
    func planThenApply() async throws {
        let projects = try Self.projects()
        #expect(projects.map(\.workspace).sorted() == ["production", "sandbox"])
        #expect(projects.allSatisfy { $0.workflow == "retention-sync" && $0.dir == "manifests" })
        let harness = try CommandHarness()
        let planfile = harness.file("sandbox.tfplan").path
        let plans = try await Self.runStage("plan", harness: harness, dir: "manifests", workspace: "sandbox", planfile: planfile)
        #expect(plans.count == 2 && plans.allSatisfy { $0.code == .success }, "\(plans.map { $0.stdout + $0.stderr })")
        #expect(plans.last?.stdout.contains("to upload") == true, "\(plans.last?.stdout ?? "")")
        #expect(FileManager.default.fileExists(atPath: planfile), "the plan is where Atlantis keeps it")

        let applies = try await Self.runStage("apply", harness: harness, dir: "manifests", workspace: "sandbox", planfile: planfile)
        #expect(applies.map(\.code) == [.success], "\(applies.map { $0.stdout + $0.stderr })")
        #expect(applies.first?.stdout.contains("Applying the saved plan \(planfile).") == true, "\(applies.first?.stdout ?? "")")
        #expect(!harness.emulator.state(of: .sandbox).messages.isEmpty)

        let again = try await Self.runStage("plan", harness: harness, dir: "manifests", workspace: "sandbox", planfile: planfile)
        #expect(again.last?.stdout.contains("No changes.") == true, "\(again.last?.stdout ?? "")")
    }

    @Test("an Atlantis apply of a plan the manifests no longer match is refused, and nothing is uploaded")
    func staleApplyIsRefused() async throws {
        let harness = try CommandHarness()
        let planfile = harness.file("production.tfplan").path
        let plans = try await Self.runStage("plan", harness: harness, dir: "manifests", workspace: "production", planfile: planfile)
        #expect(plans.allSatisfy { $0.code == .success }, "\(plans.map { $0.stdout + $0.stderr })")
        let messages = try FileManager.default.contentsOfDirectory(atPath: harness.file("manifests").path).filter { $0.hasSuffix(".yaml") }
        let file = try #require(messages.first { (try? String(contentsOf: harness.file("manifests/\($0)"), encoding: .utf8))?.contains("header:") == true })
        let text = try String(contentsOf: harness.file("manifests/\(file)"), encoding: .utf8)
        let edited = try #require(text.range(of: "header: "))
        try text.replacingCharacters(in: edited, with: "header: Edited ").write(to: harness.file("manifests/\(file)"), atomically: true, encoding: .utf8)

        let applies = try await Self.runStage("apply", harness: harness, dir: "manifests", workspace: "production", planfile: planfile)
        #expect(applies.first?.code == .failure, "\(applies.map { $0.stdout + $0.stderr })")
        #expect(harness.emulator.state(of: .production).messages.isEmpty, "nothing was uploaded")
    }
}
