public import Foundation
public import HTTPCore
public import RetentionMessagingModels
import RetentionMessaging
import Synchronization

/// What a performance test has seen so far: one result and one response time per finished request.
public struct PerformanceTestTally: Sendable, Hashable {
    public var totalRequests: Int
    public var results: [SendAttemptResult: Int] = [:]
    /// Milliseconds from sending to the answer (or to giving up), one per finished request.
    public var responseTimes: [Int64] = []
    /// Set when the run could not send at all (an http:// target that is not loopback, say).
    public var refusal: String?

    public init(totalRequests: Int) { self.totalRequests = totalRequests }

    public var finished: Int { results.values.reduce(0, +) }
    public var successes: Int { results[.success] ?? 0 }

    /// Apple's result shape. `PENDING` until every request finished; then PASS when the success
    /// rate reaches `successRateThreshold`, else FAIL.
    public func response(settings: PerformanceTestSettings, target: String) -> PerformanceTestResultResponse {
        let pending = totalRequests - finished
        let rate = totalRequests > 0 ? Double(successes) / Double(totalRequests) : 0
        let status: PerformanceTestStatus = pending > 0 ? .pending : rate >= settings.successRateThreshold ? .pass : .fail
        var failures: [String: Int] = [:]
        for (result, count) in results where result != .success { failures[result.rawValue] = count }
        return PerformanceTestResultResponse(
            config: settings.config, target: target, result: status,
            successRate: (rate * 100).rounded(.down), numPending: pending,
            responseTimes: Self.percentiles(responseTimes), failures: failures)
    }

    /// Nearest-rank percentiles; nil before any request finished.
    static func percentiles(_ times: [Int64]) -> PerformanceTestResponseTimes? {
        guard !times.isEmpty else { return nil }
        let sorted = times.sorted()
        func rank(_ percent: Double) -> Int64 {
            let index = Int((percent / 100 * Double(sorted.count)).rounded(.up)) - 1
            return sorted[min(max(index, 0), sorted.count - 1)]
        }
        let average = sorted.reduce(0, +) / Int64(sorted.count)
        return PerformanceTestResponseTimes(average: average, p50: rank(50), p90: rank(90), p95: rank(95), p99: rank(99))
    }
}

/// Sends a performance test's realtime requests: `totalRequests` POSTs of `{"signedPayload": …}`
/// to the target, started evenly over `totalDuration`, never more than `maxConcurrentRequests` at
/// once, each given `responseTimeThreshold` to answer. A run therefore ends within
/// `totalDuration + responseTimeThreshold` (plus the time the last slot takes to free).
public struct PerformanceTestRunner: Sendable {
    public var settings: PerformanceTestSettings
    public var transport: any HTTPTransport
    public var signer: any RealtimeRequestSigner

    public init(settings: PerformanceTestSettings, transport: any HTTPTransport, signer: any RealtimeRequestSigner) {
        self.settings = settings
        self.transport = transport
        self.signer = signer
    }

    /// Why the emulator will not call `url`, or nil: `http://` only on loopback, else `https://`.
    public static func targetProblem(_ url: URL) -> String? {
        guard let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty else {
            return "the realtime URL is not an absolute http(s) URL"
        }
        switch scheme {
        case "https": return nil
        case "http":
            return RetentionMessagingClient.isLoopback(host.lowercased()) ? nil
                : "the emulator calls plain http:// only on loopback; use https:// for \(host)"
        default: return "the realtime URL must use https:// (or http:// on loopback)"
        }
    }

    /// Runs the test. `payload` makes request number `index`'s decoded body; `judge` says whether a
    /// 200 answer's body is a valid RealtimeResponseBody; `progress` sees the tally after each request.
    public func run(target: URL, payload: @escaping @Sendable (Int) -> DecodedRealtimeRequestBody,
                    judge: @escaping @Sendable (Data) -> Bool,
                    progress: @escaping @Sendable (PerformanceTestTally) -> Void = { _ in }) async -> PerformanceTestTally {
        var tally = PerformanceTestTally(totalRequests: settings.totalRequests)
        if let problem = settings.problem ?? Self.targetProblem(target) {
            tally.refusal = problem
            tally.results[.other] = settings.totalRequests
            progress(tally)
            return tally
        }
        let total = settings.totalRequests
        let interval = Duration.milliseconds(settings.totalDuration) / total
        let start = ContinuousClock.now
        let limit = settings.maxConcurrentRequests
        return await withTaskGroup(of: (SendAttemptResult, Int64).self) { group in
            var inFlight = 0
            func record(_ outcome: (SendAttemptResult, Int64)) {
                tally.results[outcome.0, default: 0] += 1
                tally.responseTimes.append(outcome.1)
                progress(tally)
            }
            for index in 0..<total {
                try? await Task.sleep(until: start + interval * index, clock: .continuous)
                while inFlight >= limit, let outcome = await group.next() {
                    inFlight -= 1
                    record(outcome)
                }
                inFlight += 1
                group.addTask { await send(index: index, target: target, payload: payload(index), judge: judge) }
            }
            for await outcome in group { record(outcome) }
            return tally
        }
    }

    private struct Body: Encodable {
        var signedPayload: String
    }

    private func send(index: Int, target: URL, payload: DecodedRealtimeRequestBody,
                      judge: @Sendable (Data) -> Bool) async -> (SendAttemptResult, Int64) {
        let body: Data
        do {
            body = try CanonicalJSON.encode(Body(signedPayload: try signer.sign(payload)))
        } catch {
            return (.other, 0)
        }
        let threshold = Double(settings.responseTimeThreshold) / 1000
        let request = HTTPRequest(method: "POST", url: target, headers: [(name: "Content-Type", value: "application/json")],
                                  body: body, connectTimeout: threshold, timeout: threshold)
        let started = ContinuousClock.now
        let outcome: Result<HTTPResponse, HTTPError>
        do {
            outcome = .success(try await transport.send(request))
        } catch {
            outcome = .failure(error)
        }
        let elapsed = ContinuousClock.now - started
        let milliseconds = elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000
        switch outcome {
        case .failure(let error):
            return (Self.classify(error), milliseconds)
        case .success(let response):
            guard response.status == 200 else { return (.unsuccessfulHTTPResponseCode, milliseconds) }
            guard milliseconds <= settings.responseTimeThreshold else { return (.timedOut, milliseconds) }
            return (judge(response.body) ? .success : .invalidResponse, milliseconds)
        }
    }

    static func classify(_ error: HTTPError) -> SendAttemptResult {
        switch error.kind {
        case .timeout, .connectTimeout: .timedOut
        case .tls: .tlsIssue
        case .couldNotConnect: .socketIssue
        case .connectionDropped: .noResponse
        case .invalidRequest, .other: .other
        }
    }
}
