public import Basics
public import EventStore
import Foundation
public import HTTPServer
import Runtime
import Synchronization

/// What `/metrics` shows, in the Prometheus text format. Counters only grow; label values are
/// the service's own words (outcomes, rule ids, reasons), never anything a caller sent.
public final class RealtimeMetrics: Sendable {
    /// Where the connection figures come from: the HTTP server in front of the service.
    private let connections = Mutex<(@Sendable () -> HTTPServerStatistics)?>(nil)

    /// Shows the server's connections (open, closed by reason) in `/metrics`.
    public func showConnections(of statistics: @escaping @Sendable () -> HTTPServerStatistics) {
        connections.withLock { $0 = statistics }
    }

    /// Where the event figures come from: the recorder behind the service, when decisions are recorded.
    private let events = Mutex<(@Sendable () -> EventRecorder.Counters)?>(nil)

    /// Shows the event recorder's figures (recorded, stored, dropped, spooled) in `/metrics`.
    public func showEvents(of counters: @escaping @Sendable () -> EventRecorder.Counters) {
        events.withLock { $0 = counters }
    }

    /// Upper bounds of the latency histogram, in seconds; Apple's budget is 0.7 s.
    static let latencyBuckets: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.7, 1]

    /// What the request path counts, keyed by the label values themselves, so counting hashes a
    /// few short strings and never formats a label (that waits for `/metrics`).
    private struct RequestKey: Hashable {
        var environment: String
        var outcome: String
    }

    private struct DecisionKey: Hashable {
        var environment: String
        var rule: String
        var kind: String
        /// The split group and arm (the rule's name) when the rule belongs to one; empty otherwise.
        var group: String
        var arm: String
    }

    private struct State {
        var requests: [RequestKey: Int] = [:]
        var decisions: [DecisionKey: Int] = [:]
        var latencyCounts = [Int](repeating: 0, count: RealtimeMetrics.latencyBuckets.count)
        var latencyCount = 0
        var latencySum = 0.0
        var verificationFailures: [String: Int] = [:]
        var notifications: [String: Int] = [:]
        var reloadFailures: [String: Int] = [:]
        var reloads = 0
        var snapshotDigest: String?
        var snapshotLoadedAt: UTCTime?
        var factsSources: [RequestKey: Int] = [:]
        var factsCustomers: [String: Int] = [:]
        var factsBuiltAt: [String: Int] = [:]
        var factsRefused: [String: Int] = [:]
        var lookups: [RequestKey: Int] = [:]
    }

    // One lock is enough: serve answers from one event loop per processor, so few threads count.
    private let state = Mutex(State())

    public init() {}

    func request(environment: String, outcome: String, seconds: Double) {
        state.withLock { state in
            state.requests[RequestKey(environment: environment, outcome: outcome), default: 0] += 1
            state.latencyCount += 1
            state.latencySum += seconds
            for (index, bound) in Self.latencyBuckets.enumerated() where seconds <= bound {
                state.latencyCounts[index] += 1
            }
        }
    }

    func decision(environment: String, answered: Answered, kind: String) {
        // The arm is the rule's name within its flow, which `Answered` already holds apart.
        let key = DecisionKey(environment: environment, rule: answered.ruleId, kind: kind, group: answered.split?.salt ?? "",
                              arm: answered.split == nil ? "" : answered.rule)
        state.withLock { $0.decisions[key, default: 0] += 1 }
    }

    func notification(environment: String, outcome: String) {
        state.withLock { $0.notifications[labels(["environment": environment, "outcome": outcome]), default: 0] += 1 }
    }

    func verificationFailure(environment: String, reason: String) {
        state.withLock { $0.verificationFailures[labels(["environment": environment, "reason": reason]), default: 0] += 1 }
    }

    func reloadFailure(environment: String, reason: String) {
        state.withLock { $0.reloadFailures[labels(["environment": environment, "reason": reason]), default: 0] += 1 }
    }

    func snapshotLoaded(environment: String, digest: String, at date: UTCTime) {
        state.withLock { state in
            state.reloads += 1
            state.snapshotDigest = labels(["environment": environment, "digest": digest])
            state.snapshotLoadedAt = date
        }
    }

    /// A decision that looked the customer's facts up, by where they came from.
    func factsLookup(environment: String, source: String) {
        // Keyed by the values themselves, like requests: the label text waits for /metrics.
        state.withLock { $0.factsSources[RequestKey(environment: environment, outcome: source), default: 0] += 1 }
    }

    func factsLoaded(environment: String, customers: Int, builtAt: Int64) {
        state.withLock { state in
            state.factsCustomers[labels(["environment": environment])] = customers
            state.factsBuiltAt[labels(["environment": environment])] = Int(builtAt / 1000)
        }
    }

    /// A live lookup's result: found, not_found, late, paced, rate_limited, failed or refused.
    func lookup(environment: String, result: String) {
        state.withLock { $0.lookups[RequestKey(environment: environment, outcome: result), default: 0] += 1 }
    }

    func factsRefused(environment: String) {
        state.withLock { $0.factsRefused[labels(["environment": environment]), default: 0] += 1 }
    }

    /// The Prometheus exposition text, lines sorted within each metric.
    public func render(now: UTCTime) -> String {
        let state = state.withLock { $0 }
        var text = Exposition()
        text.counter("retention_sync_requests_total", "Realtime requests by environment and outcome.", requestCounts(state))
        text.counter("retention_sync_decisions_total", "Answers by flow, rule, split group, arm and kind (results has what they kept).", decisionCounts(state))
        text.counter("retention_sync_verification_failures_total", "Refused signedPayloads by reason.", state.verificationFailures)
        text.counter("retention_sync_notifications_total", "App Store Server Notifications received, by environment and outcome.", state.notifications)
        if let events = events.withLock({ $0 })?() { write(events, to: &text) }
        text.counter("retention_sync_snapshot_reload_failures_total", "Snapshots refused or unreadable, by reason.", state.reloadFailures)
        text.single("retention_sync_snapshot_reloads_total", "Snapshots loaded.", "counter", state.reloads)
        text.header("retention_sync_request_duration_seconds", "Time from a request's arrival to its answer.", "histogram")
        for (index, bound) in Self.latencyBuckets.enumerated() {
            text.lines.append("retention_sync_request_duration_seconds_bucket{le=\"\(bound)\"} \(state.latencyCounts[index])")
        }
        text.lines.append("retention_sync_request_duration_seconds_bucket{le=\"+Inf\"} \(state.latencyCount)")
        text.lines.append("retention_sync_request_duration_seconds_sum \(state.latencySum)")
        text.lines.append("retention_sync_request_duration_seconds_count \(state.latencyCount)")
        if let statistics = connections.withLock({ $0 })?() { write(statistics, to: &text) }
        text.counter("retention_sync_decision_facts_total",
                     "Decisions by where the customer's facts came from: table, notification, lookup, or unknown.",
                     Dictionary(state.factsSources.map { (labels(["environment": $0.key.environment, "source": $0.key.outcome]), $0.value) },
                                uniquingKeysWith: +))
        text.counter("retention_sync_lookups_total",
                     "Live lookups (Get All Subscription Statuses) by result: found, not_found, late (past the deadline: answered unknown), "
                        + "paced (no budget left: not sent), rate_limited (429), failed, refused (did not verify).",
                     Dictionary(state.lookups.map { (labels(["environment": $0.key.environment, "result": $0.key.outcome]), $0.value) },
                                uniquingKeysWith: +))
        text.header("retention_sync_facts_customers", "Customers in the facts table being served.", "gauge")
        for key in state.factsCustomers.keys.sorted() { text.lines.append("retention_sync_facts_customers{\(key)} \(state.factsCustomers[key]!)") }
        text.header("retention_sync_facts_built_timestamp_seconds", "When the facts table being served was built (UNIX seconds).", "gauge")
        for key in state.factsBuiltAt.keys.sorted() { text.lines.append("retention_sync_facts_built_timestamp_seconds{\(key)} \(state.factsBuiltAt[key]!)") }
        text.counter("retention_sync_facts_refused_total", "Facts tables refused (unreadable, damaged, or for another App, environment or key).",
                     state.factsRefused)
        text.header("retention_sync_snapshot_info", "The snapshot being served (value 1).", "gauge")
        if let digest = state.snapshotDigest { text.lines.append("retention_sync_snapshot_info{\(digest)} 1") }
        text.header("retention_sync_snapshot_age_seconds", "Seconds since the served snapshot was loaded.", "gauge")
        if let loaded = state.snapshotLoadedAt {
            text.lines.append("retention_sync_snapshot_age_seconds \(Int(now.seconds(since: loaded)))")
        }
        return text.lines.joined(separator: "\n") + "\n"
    }

    /// The exposition text as it is written, metric by metric.
    private struct Exposition {
        var lines: [String] = []

        mutating func header(_ name: String, _ help: String, _ type: String) {
            lines.append("# HELP \(name) \(help)")
            lines.append("# TYPE \(name) \(type)")
        }

        mutating func counter(_ name: String, _ help: String, _ values: [String: Int]) {
            header(name, help, "counter")
            for key in values.keys.sorted() { lines.append("\(name){\(key)} \(values[key]!)") }
        }

        /// A metric with one unlabelled value.
        mutating func single(_ name: String, _ help: String, _ type: String, _ value: some BinaryInteger) {
            header(name, help, type)
            lines.append("\(name) \(value)")
        }
    }

    private func requestCounts(_ state: State) -> [String: Int] {
        var requests: [String: Int] = [:]
        for (key, count) in state.requests {
            requests[labels(["environment": key.environment, "outcome": key.outcome]), default: 0] += count
        }
        return requests
    }

    private func decisionCounts(_ state: State) -> [String: Int] {
        var decisions: [String: Int] = [:]
        for (key, count) in state.decisions {
            let flow = key.rule.firstIndex(of: "/").map { String(key.rule[..<$0]) } ?? ""
            var values = ["environment": key.environment, "rule": key.rule, "kind": key.kind]
            if !flow.isEmpty { values["flow"] = flow }
            if !key.group.isEmpty { values["group"] = key.group }
            if !key.arm.isEmpty { values["arm"] = key.arm }
            decisions[labels(values), default: 0] += count
        }
        return decisions
    }

    /// The event recorder's counters.
    private func write(_ events: EventRecorder.Counters, to text: inout Exposition) {
        func streams(_ values: [String: Int]) -> [String: Int] {
            Dictionary(uniqueKeysWithValues: values.map { (labels(["stream": $0.key]), $0.value) })
        }
        text.counter("retention_sync_events_recorded_total", "Events queued for the event store, by stream.", streams(events.recorded))
        text.counter("retention_sync_events_stored_total", "Events the event store has, by stream.", streams(events.stored))
        text.counter("retention_sync_events_dropped_total", "Events lost, by reason (queue_full, spool_full, spool_unwritable, closed).",
                     Dictionary(uniqueKeysWithValues: events.dropped.map { (labels(["reason": $0.key]), $0.value) }))
        text.single("retention_sync_event_store_failures_total", "Segment uploads the event store refused or did not answer.", "counter",
                    events.storeFailures)
        text.single("retention_sync_event_store_up",
                    "1 while the event store takes segments, 0 while it refuses them (the recorder is degraded: events wait in the spool).", "gauge",
                    events.storeProblem == nil ? 1 : 0)
        text.single("retention_sync_events_queued", "Events waiting in memory for the next flush.", "gauge", events.queued)
        text.single("retention_sync_events_spooled_bytes", "Bytes of segments waiting in the local spool for the store.", "gauge", events.spooledBytes)
    }

    /// The HTTP server's connections: open now, idle, closed by reason.
    private func write(_ statistics: HTTPServerStatistics, to text: inout Exposition) {
        text.single("retention_sync_open_connections", "Connections open now.", "gauge", statistics.openConnections)
        text.single("retention_sync_idle_connections", "Open connections with nothing in flight (what a newcomer at the cap may replace).", "gauge",
                    statistics.idleConnections)
        text.counter("retention_sync_connections_closed_total",
                     "Connections the server closed, by reason: idle, head_timeout, request_timeout, evicted (idle, to admit a newcomer at the cap), refused (503: every connection busy).",
                     ["reason=\"evicted\"": statistics.evicted, "reason=\"head_timeout\"": statistics.closedHeadTimeout,
                      "reason=\"idle\"": statistics.closedIdle, "reason=\"refused\"": statistics.refused,
                      "reason=\"request_timeout\"": statistics.closedRequestTimeout])
    }

    private func labels(_ values: [String: String]) -> String {
        values.keys.sorted().map { key in
            let value = values[key]!
            // Most values need no escaping; checking the bytes first keeps the request path cheap.
            guard value.utf8.contains(where: { $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "\"") || $0 == 10 }) else {
                return "\(key)=\"\(value)\""
            }
            let escaped = value.replacingOccurrences(of: "\\", with: "\\\\")
                .replacingOccurrences(of: "\"", with: "\\\"").replacingOccurrences(of: "\n", with: "\\n")
            return "\(key)=\"\(escaped)\""
        }.joined(separator: ",")
    }
}
