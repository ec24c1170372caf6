public import RetentionMessagingModels

/// How the emulator runs Apple's sandbox performance test. Apple publishes none of these numbers
/// except a response-time limit of about 700 ms, so they are the emulator's own, returned in the
/// test's `config` as Apple returns its own.
///
/// Pass rule: every request has finished and `successes / totalRequests >= successRateThreshold`,
/// where a success is HTTP 200 within `responseTimeThreshold` whose body is a valid
/// RealtimeResponseBody (at most one field; a named message exists and is APPROVED in sandbox).
public struct PerformanceTestSettings: Sendable, Hashable {
    /// Requests in flight at once (default 10).
    public var maxConcurrentRequests: Int
    /// Requests per run (default 100).
    public var totalRequests: Int
    /// Milliseconds over which the requests are spread (default 20,000).
    public var totalDuration: Int64
    /// Milliseconds a request may take to count as a success (default 700, Apple's figure).
    public var responseTimeThreshold: Int64
    /// The fraction of requests that must succeed (default 0.95).
    public var successRateThreshold: Double

    /// Upper bounds that keep every run bounded in count and time.
    public static let maximumRequests = 10_000
    public static let maximumConcurrency = 256
    public static let maximumDuration: Int64 = 600_000
    public static let maximumResponseTime: Int64 = 30_000

    public init(maxConcurrentRequests: Int = 10, totalRequests: Int = 100, totalDuration: Int64 = 20_000,
                responseTimeThreshold: Int64 = 700, successRateThreshold: Double = 0.95) {
        self.maxConcurrentRequests = maxConcurrentRequests
        self.totalRequests = totalRequests
        self.totalDuration = totalDuration
        self.responseTimeThreshold = responseTimeThreshold
        self.successRateThreshold = successRateThreshold
    }

    public static let `default` = PerformanceTestSettings()

    /// Why these settings cannot run, or nil.
    public var problem: String? {
        if !(1...Self.maximumConcurrency).contains(maxConcurrentRequests) {
            return "maxConcurrentRequests must be 1–\(Self.maximumConcurrency), not \(maxConcurrentRequests)"
        }
        if !(1...Self.maximumRequests).contains(totalRequests) {
            return "totalRequests must be 1–\(Self.maximumRequests), not \(totalRequests)"
        }
        if !(0...Self.maximumDuration).contains(totalDuration) {
            return "totalDuration must be 0–\(Self.maximumDuration) ms, not \(totalDuration)"
        }
        if !(1...Self.maximumResponseTime).contains(responseTimeThreshold) {
            return "responseTimeThreshold must be 1–\(Self.maximumResponseTime) ms, not \(responseTimeThreshold)"
        }
        if !(successRateThreshold > 0 && successRateThreshold <= 1) {
            return "successRateThreshold must be more than 0 and at most 1, not \(successRateThreshold)"
        }
        return nil
    }

    /// The settings in Apple's `config` shape.
    public var config: PerformanceTestConfig {
        PerformanceTestConfig(maxConcurrentRequests: maxConcurrentRequests, totalRequests: totalRequests, totalDuration: totalDuration,
                              responseTimeThreshold: responseTimeThreshold, successRateThreshold: successRateThreshold)
    }
}
