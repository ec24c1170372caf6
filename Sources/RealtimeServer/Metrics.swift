public import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// What `/metrics` shows, in the Prometheus text format. Counters only grow; label values are
/// the service's own words (outcomes, rule ids, reasons), never anything a caller sent.
public final class RealtimeMetrics: Sendable {
    /// Upper bounds of the latency histogram, in seconds; Apple's budget is 0.7 s.
    static let latencyBuckets: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.7, 1]

    /// What the request path counts, kept per shard and keyed by the label values themselves, so
    /// counting hashes a few short strings and never formats a label.
    private struct RequestKey: Hashable {
        var environment: String
        var outcome: String
    }

    private struct DecisionKey: Hashable {
        var environment: String
        var rule: String
        var kind: String
    }

    private struct Counts {
        var requests: [RequestKey: Int] = [:]
        var decisions: [DecisionKey: Int] = [:]
        var latencyCounts = [Int](repeating: 0, count: RealtimeMetrics.latencyBuckets.count)
        var latencyCount = 0
        var latencySum = 0.0
    }

    private struct State {
        var verificationFailures: [String: Int] = [:]
        var reloadFailures: [String: Int] = [:]
        var reloads = 0
        var snapshotDigest: String?
        var snapshotLoadedAt: Date?
    }

    /// Threads count into the shard their id picks, so concurrent requests rarely wait on one lock.
    private static let shardCount = 8
    private let shards = (0..<RealtimeMetrics.shardCount).map { _ in Shard() }
    private let state = Mutex(State())

    public init() {}

    private final class Shard: Sendable {
        let counts = Mutex(Counts())
        // Keeps two shards' locks off one cache line.
        private let padding: (Int, Int, Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0, 0, 0)
    }

    private var shard: Shard {
        // pthread_self is the address of the thread's control block; a multiplicative hash spreads them.
        #if canImport(Darwin)
        let id = UInt64(UInt(bitPattern: pthread_self()))
        #else
        let id = UInt64(pthread_self())
        #endif
        return shards[Int((id &* 0x9E37_79B9_7F4A_7C15) >> 61) % Self.shardCount]
    }

    func request(environment: String, outcome: String, seconds: Double) {
        shard.counts.withLock { counts in
            counts.requests[RequestKey(environment: environment, outcome: outcome), default: 0] += 1
            counts.latencyCount += 1
            counts.latencySum += seconds
            for (index, bound) in Self.latencyBuckets.enumerated() where seconds <= bound {
                counts.latencyCounts[index] += 1
            }
        }
    }

    func decision(environment: String, rule: String, kind: String) {
        shard.counts.withLock { $0.decisions[DecisionKey(environment: environment, rule: rule, kind: kind), default: 0] += 1 }
    }

    func verificationFailure(environment: String, reason: String) {
        state.withLock { $0.verificationFailures[labels(["environment": environment, "reason": reason]), default: 0] += 1 }
    }

    func reloadFailure(environment: String, reason: String) {
        state.withLock { $0.reloadFailures[labels(["environment": environment, "reason": reason]), default: 0] += 1 }
    }

    func snapshotLoaded(environment: String, digest: String, at date: Date) {
        state.withLock { state in
            state.reloads += 1
            state.snapshotDigest = labels(["environment": environment, "digest": digest])
            state.snapshotLoadedAt = date
        }
    }

    /// The Prometheus exposition text, lines sorted within each metric.
    public func render(now: Date = Date()) -> String {
        let state = state.withLock { $0 }
        var requests: [String: Int] = [:]
        var decisions: [String: Int] = [:]
        var latencyCounts = [Int](repeating: 0, count: Self.latencyBuckets.count)
        var latencyCount = 0
        var latencySum = 0.0
        for shard in shards {
            let counts = shard.counts.withLock { $0 }
            for (key, count) in counts.requests {
                requests[labels(["environment": key.environment, "outcome": key.outcome]), default: 0] += count
            }
            for (key, count) in counts.decisions {
                decisions[labels(["environment": key.environment, "rule": key.rule, "kind": key.kind]), default: 0] += count
            }
            for index in latencyCounts.indices { latencyCounts[index] += counts.latencyCounts[index] }
            latencyCount += counts.latencyCount
            latencySum += counts.latencySum
        }
        var lines: [String] = []
        func counter(_ name: String, _ help: String, _ values: [String: Int]) {
            lines.append("# HELP \(name) \(help)")
            lines.append("# TYPE \(name) counter")
            for key in values.keys.sorted() { lines.append("\(name){\(key)} \(values[key]!)") }
        }
        counter("retention_sync_requests_total", "Realtime requests by environment and outcome.", requests)
        counter("retention_sync_decisions_total", "Answers by rule and kind.", decisions)
        counter("retention_sync_verification_failures_total", "Refused signedPayloads by reason.", state.verificationFailures)
        counter("retention_sync_snapshot_reload_failures_total", "Snapshots refused or unreadable, by reason.", state.reloadFailures)
        lines.append("# HELP retention_sync_snapshot_reloads_total Snapshots loaded.")
        lines.append("# TYPE retention_sync_snapshot_reloads_total counter")
        lines.append("retention_sync_snapshot_reloads_total \(state.reloads)")
        lines.append("# HELP retention_sync_request_duration_seconds Time from a request's arrival to its answer.")
        lines.append("# TYPE retention_sync_request_duration_seconds histogram")
        for (index, bound) in Self.latencyBuckets.enumerated() {
            lines.append("retention_sync_request_duration_seconds_bucket{le=\"\(bound)\"} \(latencyCounts[index])")
        }
        lines.append("retention_sync_request_duration_seconds_bucket{le=\"+Inf\"} \(latencyCount)")
        lines.append("retention_sync_request_duration_seconds_sum \(latencySum)")
        lines.append("retention_sync_request_duration_seconds_count \(latencyCount)")
        lines.append("# HELP retention_sync_snapshot_info The snapshot being served (value 1).")
        lines.append("# TYPE retention_sync_snapshot_info gauge")
        if let digest = state.snapshotDigest { lines.append("retention_sync_snapshot_info{\(digest)} 1") }
        lines.append("# HELP retention_sync_snapshot_age_seconds Seconds since the served snapshot was loaded.")
        lines.append("# TYPE retention_sync_snapshot_age_seconds gauge")
        if let loaded = state.snapshotLoadedAt {
            lines.append("retention_sync_snapshot_age_seconds \(Int(now.timeIntervalSince(loaded)))")
        }
        return lines.joined(separator: "\n") + "\n"
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
