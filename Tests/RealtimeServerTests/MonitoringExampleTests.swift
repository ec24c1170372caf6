import Foundation
import HTTPCore
import Testing
import TestSupport

/// The example Grafana dashboard and Prometheus alerting rules (examples/monitoring) ask only for
/// metrics a running serve exports: a renamed metric fails here, not on an operator's empty panel.
@Suite("The monitoring examples, against serve's /metrics")
struct MonitoringExampleTests {
    static let files = ["examples/monitoring/retention-sync-dashboard.json", "examples/monitoring/retention-sync-alerts.yml",
                        "examples/monitoring/alerts-test.yml"]

    /// Every metric name the text names (`retention_sync_…`), histogram series reduced to their metric.
    static func names(in text: String) -> Set<String> {
        Set(text.matches(of: /retention_sync_[a-z_]+/).map { match in
            var name = String(match.0)
            for suffix in ["_bucket", "_sum", "_count"] where name.hasSuffix(suffix) && name.hasPrefix("retention_sync_request_duration") {
                name.removeLast(suffix.count)
            }
            return name
        })
    }

    @Test("every metric the dashboard and the alerting rules query is one a running serve with recording exports")
    func queriesNameExportedMetrics() async throws {
        let recorded = try DecisionRecordingTests.Recorded()
        let running = try RunningService(snapshot: try splitSnapshot(), recording: recorded.recording, transport: .live)
        #expect(try await running.post(requestBody(product: monthly, transaction: "2000000000000101")).status == 200)
        let metrics = String(decoding: try await running.get("/metrics").body, as: UTF8.self)
        let exported = Set(metrics.split(separator: "\n").compactMap { line -> String? in
            let parts = line.split(separator: " ")
            return parts.count == 4 && parts[0] == "#" && parts[1] == "TYPE" ? String(parts[2]) : nil
        })
        #expect(exported.count > 15, "\(metrics.prefix(300))")
        var queried = Set<String>()
        for file in Self.files {
            let names = Self.names(in: try Repository.text(file))
            #expect(!names.isEmpty, "\(file) queries no retention-sync metric")
            queried.formUnion(names)
        }
        #expect(queried.subtracting(exported).isEmpty, "queried but not exported: \(queried.subtracting(exported).sorted())")
        // The dashboard covers what an operator watches: answers, time, fallbacks, snapshot, event store, connections.
        for wanted in ["retention_sync_decisions_total", "retention_sync_request_duration_seconds", "retention_sync_requests_total",
                       "retention_sync_snapshot_age_seconds", "retention_sync_event_store_up", "retention_sync_events_spooled_bytes",
                       "retention_sync_open_connections"] {
            #expect(Self.names(in: try Repository.text(Self.files[0])).contains(wanted), "the dashboard shows no \(wanted)")
        }
    }
}
