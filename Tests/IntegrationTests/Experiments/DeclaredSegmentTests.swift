import Basics
import CLIKit
@testable import CommandTestSupport
import EventContract
import Experiments
@testable import ExperimentsTestSupport
import Foundation
import Manifests
@testable import Reconciler
import RetentionMessagingModels
import Runtime
import Testing
import TestSupport

/// From the manifest to the report: a Flow declares the segments a split group is judged by, the
/// declaration is compiled into the snapshot's layout of the group, serve records that layout on every
/// decision, and `results --by` reads it back to tell confirmatory from exploratory.
@Suite("Segments declared before an experiment", .serialized)
struct DeclaredSegmentTests {
    static let declaration = "segments:\n  - group: yearly-upsell\n    by: storefront\n"

    /// The layout the snapshot compiled from `manifests` records for `group`.
    static func layout(_ manifests: URL, group: String) throws -> String? {
        let (validated, _) = try Workspace.load(directory: manifests, displayPath: "manifests")
        let (rules, _) = try RuleCompiler.compile(validated, environment: .sandbox, messageIds: [:])
        return RuntimeSnapshot(bundleId: validated.app.bundleId, appAppleId: nil, environment: .sandbox, localeFallbacks: [:], rules: rules)
            .splitLayouts[group]
    }

    @Test("a segment declared in the manifest is in the group's layout, and results labels that breakdown confirmatory and any other exploratory")
    func aDeclaredSegmentIsConfirmatoryInResults() async throws {
        let harness = try CommandHarness()
        let flowFile = harness.file("manifests/cancel-flow.yaml")
        let undeclared = try #require(try Self.layout(harness.file("manifests"), group: "yearly-upsell"))
        #expect(!undeclared.contains(";"), "a group without declarations keeps its layout: \(undeclared)")
        try (try String(contentsOf: flowFile, encoding: .utf8) + Self.declaration).write(to: flowFile, atomically: true, encoding: .utf8)
        let layout = try #require(try Self.layout(harness.file("manifests"), group: "yearly-upsell"))
        #expect(layout == undeclared + ";confirm=storefront")

        var simulator = PromoteTests.simulation(upsellKeeps: 0.40, customers: 3000, seed: 17)
        simulator.storefronts = ["DEU", "USA"]
        simulator.tenureBands = [("0-1m", 0), ("12m+", 0)]
        simulator.recordedLayout = layout
        simulator.run(seed: 17)
        try simulator.write(to: harness.file("manifests/.retention-sync"))
        let asOf = PromoteTests.asOf(simulator)
        let confirmed = await harness.run(["results", "--env", "sandbox", "--as-of", asOf, "--by", "storefront", "--format", "json"])
        #expect(confirmed.code == .success, "\(confirmed.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(confirmed.stdout.utf8)) as? [String: Any])
        let segments = try #require(json["segmentComparisons"] as? [[String: Any]])
        #expect(segments.count == 2 && segments.allSatisfy { $0["confirmatory"] as? Bool == true }, "\(segments)")
        let explored = await harness.run(["results", "--env", "sandbox", "--as-of", asOf, "--by", "tenure"])
        #expect(explored.stdout.contains("upsell-yearly vs upsell-control (exploratory)"), "\(explored.stdout)")
        #expect(!explored.stdout.contains("(confirmatory)"))
    }

    @Test("results --versus names the arm every other arm is compared with, and an unknown arm is a usage error listing the arms")
    func versusAnArm() async throws {
        let harness = try CommandHarness()
        let simulator = PromoteTests.simulation(upsellKeeps: 0.40, customers: 2000, seed: 3)
        try simulator.write(to: harness.file("manifests/.retention-sync"))
        let asOf = PromoteTests.asOf(simulator)
        let unknown = await harness.run(["results", "--env", "sandbox", "--as-of", asOf, "--versus", "upsell-yerly"])
        #expect(unknown.code == .usage)
        #expect(unknown.stderr.contains("no split arm 'upsell-yerly'") && unknown.stderr.contains("the split arms are upsell-control, upsell-yearly"),
                "\(unknown.stderr)")
        let run = await harness.run(["results", "--env", "sandbox", "--as-of", asOf, "--versus", "upsell-yearly", "--format", "markdown"])
        #expect(run.code == .success, "\(run.stderr)")
        #expect(run.stdout.contains("**Split group cancel-flow/yearly-upsell: vs upsell-yearly**"), "\(run.stdout)")
        #expect(run.stdout.contains("- upsell-control vs upsell-yearly: kept at 24 h lower"), "\(run.stdout)")
    }

    @Test("a segment for a group the flow does not have, by a breakdown results does not know, or twice, is an error at its line and column")
    func segmentMistakesAreErrors() throws {
        let folder = try temporaryFolder("segments")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.copyItem(at: Repository.url("manifests"), to: folder.appendingPathComponent("manifests"))
        let flowFile = folder.appendingPathComponent("manifests/cancel-flow.yaml")
        let text = try String(contentsOf: flowFile, encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).count
        try (text + """
            segments:
              - group: yearly-upsel
                by: storefront
              - group: yearly-upsell
                by: storefronts
              - group: yearly-upsell
                by: tenure
              - { group: yearly-upsell, by: tenure }

            """).write(to: flowFile, atomically: true, encoding: .utf8)
        var diagnostics: [Diagnostic] = []
        do {
            _ = try Workspace.load(directory: folder.appendingPathComponent("manifests"), displayPath: "manifests")
        } catch {
            diagnostics = error.diagnostics
        }
        func found(_ code: String, line: Int, column: Int) -> Bool {
            diagnostics.contains {
                $0.code == code && $0.location?.line == lines + line - 1 && $0.location?.column == column
                    && $0.location?.file.hasSuffix("cancel-flow.yaml") == true
            }
        }
        #expect(found("segment-unknown-group", line: 2, column: 12), "\(diagnostics)")
        #expect(found("invalid-segment", line: 5, column: 9), "\(diagnostics)")
        #expect(found("duplicate-segment", line: 8, column: 5), "\(diagnostics)")
        #expect(diagnostics.first { $0.code == "segment-unknown-group" }?.hint?.contains("yearly-upsell") == true)
        #expect(diagnostics.first { $0.code == "invalid-segment" }?.hint?.contains("did you mean 'storefront'?") == true)
    }
}
