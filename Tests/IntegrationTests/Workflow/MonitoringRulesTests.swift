import Foundation
import Testing
import TestSupport

/// The example alerting rules and dashboard (examples/monitoring) are valid for Prometheus itself:
/// `promtool` (from Debian's prometheus package, which `.ci/setup --test` unpacks) checks the rules,
/// runs their unit tests, and parses every query of the dashboard.
@Suite("The monitoring examples, checked by promtool")
struct MonitoringRulesTests {
    static let folder = "examples/monitoring"

    static func promtool() throws -> URL {
        try #require(Repository.tool("promtool"), "promtool is missing: run bash .ci/setup --test, which unpacks it from Debian's prometheus package")
    }

    @Test("promtool finds the alerting rules valid, and each alert fires on the series that should page and on no healthy one")
    func rulesCheckAndTheirUnitTestsPass() async throws {
        let tool = try Self.promtool()
        let (checked, report) = try await WorkflowFilesTests.check(with: tool, ["check", "rules", "\(Self.folder)/retention-sync-alerts.yml"])
        #expect(checked == 0, "\(report)")
        #expect(report.contains("SUCCESS: 7 rules found"), "\(report)")
        let (tested, results) = try await WorkflowFilesTests.check(with: tool, ["test", "rules", "\(Self.folder)/alerts-test.yml"])
        #expect(tested == 0, "\(results)")
    }

    @Test("every query of the Grafana dashboard is PromQL that promtool parses")
    func dashboardQueriesParse() async throws {
        let tool = try Self.promtool()
        let dashboard = try #require(try JSONSerialization.jsonObject(with: Data(Repository.text("\(Self.folder)/retention-sync-dashboard.json").utf8))
                                     as? [String: Any])
        let panels = try #require(dashboard["panels"] as? [[String: Any]])
        let queries = panels.flatMap { ($0["targets"] as? [[String: Any]] ?? []).compactMap { $0["expr"] as? String } }
        #expect(queries.count >= 10)
        // As recording rules, so that promtool parses each expression.
        var rules = "groups:\n  - name: dashboard\n    rules:\n"
        for (index, query) in queries.enumerated() {
            let quoted = "'" + query.replacingOccurrences(of: "'", with: "''") + "'"
            rules += "      - record: dashboard:query_\(index)\n        expr: \(quoted)\n"
        }
        let file = try temporaryFolder("dashboard-queries").appendingPathComponent("queries.yml")
        try rules.write(to: file, atomically: true, encoding: .utf8)
        let (status, report) = try await WorkflowFilesTests.check(with: tool, ["check", "rules", file.path])
        #expect(status == 0, "\(report)")
        #expect(report.contains("SUCCESS: \(queries.count) rules found"), "\(report)")
    }
}
