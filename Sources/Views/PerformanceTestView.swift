import CLIKit
import Foundation
import RetentionMessaging
public import RetentionMessagingModels

/// What a finished performance test run found: the result and what it took to get it.
public struct PerformanceTestOutcome: Sendable {
    public var requestId: String
    public var result: PerformanceTestResultResponse
    public var seconds: Double
    /// Calls this run made to Apple (start + polls, retries included).
    public var calls: Int

    public init(requestId: String, result: PerformanceTestResultResponse, seconds: Double, calls: Int) {
        self.requestId = requestId
        self.result = result
        self.seconds = seconds
        self.calls = calls
    }
}

/// How `performance-test` words the test's config, its progress and its result.
public enum PerformanceTestView {
    /// The command a person runs to pass the test, as every hint that asks for it words it.
    public static let invocation = "retention-sync performance-test --env sandbox --original-transaction-id ID"

    /// What each of Apple's `SendAttemptResult`s usually means for the realtime server.
    static let meanings: [String: String] = [
        "SUCCESS": "answered 200 with a valid body within the threshold",
        "TIMED_OUT": "slower than responseTimeThreshold: answer from memory, no network calls on the request path",
        "TLS_ISSUE": "the certificate chain (send the intermediates) or the TLS version (1.2 or later) is wrong",
        "NO_RESPONSE": "the connection closed without an answer: the server crashed or dropped the request",
        "SOCKET_ISSUE": "the connection failed: the host is unreachable, the port closed or a firewall drops it",
        "INVALID_RESPONSE": "the body is not a RealtimeResponseBody: at most one field, and a named message must exist and be APPROVED",
        "UNSUCCESSFUL_HTTP_RESPONSE_CODE": "not 200: answer 200 even when you have nothing to say ({} chooses the default)",
        "CIRCULAR_REDIRECT": "the URL redirects in a loop: give the final URL",
        "UNSUPPORTED_CHARSET": "the response's charset is not UTF-8",
        "OTHER": "something else went wrong: check the server's log for the request",
    ]

    public static func config(_ config: PerformanceTestConfig?) -> String {
        guard let config else { return "config: (not given)" }
        var parts: [String] = []
        if let value = config.totalRequests { parts.append("\(value) requests") }
        if let value = config.maxConcurrentRequests { parts.append("at most \(value) at once") }
        if let value = config.totalDuration { parts.append("over \(seconds(value))") }
        if let value = config.responseTimeThreshold { parts.append("each within \(value) ms") }
        if let value = config.successRateThreshold { parts.append("\(percent(value * 100)) must succeed") }
        return "config: " + parts.joined(separator: ", ")
    }

    public static func progress(_ result: PerformanceTestResultResponse, config: PerformanceTestConfig?, elapsed: Double) -> String {
        var line = "PENDING"
        if let total = config?.totalRequests, let pending = result.numPending {
            line += ": \(max(0, total - pending))/\(total) done, \(pending) pending"
        }
        line += String(format: ", %.0f s elapsed", elapsed)
        if let duration = config?.totalDuration {
            line += String(format: ", about %.0f s left", max(0, Double(duration) / 1000 - elapsed))
        }
        return line
    }

    public static func text(_ outcome: PerformanceTestOutcome) -> String {
        let result = outcome.result
        let config = result.config
        let passed = result.result == .pass
        var lines = ["", "\(passed ? "PASS" : "FAIL") performance test \(outcome.requestId)" + (result.target.map { " against \($0)" } ?? "")]
        if let rate = result.successRate {
            let threshold = config?.successRateThreshold.map { " (needs \(percent($0 * 100)))" } ?? ""
            lines.append("  success rate \(percent(rate))\(threshold)")
        }
        if let times = result.responseTimes {
            let limit = config?.responseTimeThreshold
            func mark(_ value: Int64?) -> String {
                guard let value else { return "–" }
                return "\(value) ms" + (limit.map { value > $0 ? " (over)" : "" } ?? "")
            }
            lines.append("  response times: average \(mark(times.average)), p50 \(mark(times.p50)), p90 \(mark(times.p90)), p95 \(mark(times.p95)), p99 \(mark(times.p99))"
                         + (limit.map { " (threshold \($0) ms)" } ?? ""))
        }
        let failures = (result.failures ?? [:]).filter { $0.value > 0 }
        if !failures.isEmpty {
            lines.append("  failures:")
            for (reason, count) in failures.sorted(by: { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }) {
                lines.append("    \(reason) × \(count): \(meanings[reason] ?? "see Apple's SendAttemptResult")")
            }
        }
        lines.append(String(format: "  %.0f s, %d API call%@ (start and paced polls)", outcome.seconds, outcome.calls, outcome.calls == 1 ? "" : "s"))
        if passed {
            lines.append("  Apple now accepts the production realtime URL: retention-sync apply --env production")
        } else {
            lines.append("  Fix what the failures name, then run the test again.")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The result in Apple's shape plus the request id and the calls made, with sorted keys.
    public static func json(_ outcome: PerformanceTestOutcome) -> String {
        struct Document: Encodable {
            var requestId: String
            var result: PerformanceTestResultResponse
            var apiCalls: Int
            var passed: Bool
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        let document = Document(requestId: outcome.requestId, result: outcome.result, apiCalls: outcome.calls, passed: outcome.result.result == .pass)
        return ((try? encoder.encode(document)).map { String(decoding: $0, as: UTF8.self) } ?? "{}") + "\n"
    }

    public static func describe(_ error: any Error) -> String {
        if let error = error as? CommandError { return error.message }
        guard let error = error as? RetentionMessagingError else { return "performance test: \(error)" }
        if error.isNoAPIAccess { return "performance test: \(error)\n\(RetentionMessagingError.requestAccessHint)" }
        switch error.errorCode {
        case 4000213: return "performance test: \(error); a test already runs for this App: wait for it (or follow it with --request-id ID)"
        case 4000211: return "performance test: \(error); configure the sandbox realtime URL first (retention-sync apply --env sandbox)"
        case 4000006, 4000048, 4000185, 4000187:
            return "performance test: \(error); give the original transaction id of a sandbox subscription bought by this App (not family-shared)"
        default: return "performance test: \(error)"
        }
    }

    private static func percent(_ value: Double) -> String {
        value.rounded() == value ? "\(Int(value))%" : String(format: "%.1f%%", value)
    }

    private static func seconds(_ milliseconds: Int64) -> String {
        milliseconds % 1000 == 0 ? "\(milliseconds / 1000) s" : String(format: "%.1f s", Double(milliseconds) / 1000)
    }
}
