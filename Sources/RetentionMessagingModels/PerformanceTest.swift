/// The body of `POST /performanceTest` (sandbox only).
public struct PerformanceTestRequest: Codable, Sendable, Hashable {
    public var originalTransactionId: String
    public init(originalTransactionId: String) { self.originalTransactionId = originalTransactionId }
}

/// How Apple runs a performance test against the realtime URL.
public struct PerformanceTestConfig: Codable, Sendable, Hashable {
    public var maxConcurrentRequests: Int?
    public var totalRequests: Int?
    /// Milliseconds.
    public var totalDuration: Int64?
    /// Milliseconds.
    public var responseTimeThreshold: Int64?
    public var successRateThreshold: Double?

    public init(maxConcurrentRequests: Int? = nil, totalRequests: Int? = nil, totalDuration: Int64? = nil,
                responseTimeThreshold: Int64? = nil, successRateThreshold: Double? = nil) {
        self.maxConcurrentRequests = maxConcurrentRequests
        self.totalRequests = totalRequests
        self.totalDuration = totalDuration
        self.responseTimeThreshold = responseTimeThreshold
        self.successRateThreshold = successRateThreshold
    }
}

/// The answer of `POST /performanceTest`.
public struct PerformanceTestResponse: Codable, Sendable, Hashable {
    public var config: PerformanceTestConfig?
    public var requestId: String
    public init(config: PerformanceTestConfig?, requestId: String) {
        self.config = config
        self.requestId = requestId
    }
}

/// `result` of a performance test: `PENDING`, `PASS` or `FAIL`.
public struct PerformanceTestStatus: ForwardCompatibleEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let pending = PerformanceTestStatus(rawValue: "PENDING")
    public static let pass = PerformanceTestStatus(rawValue: "PASS")
    public static let fail = PerformanceTestStatus(rawValue: "FAIL")
}

/// Response-time percentiles of a performance test, in milliseconds.
public struct PerformanceTestResponseTimes: Codable, Sendable, Hashable {
    public var average: Int64?
    public var p50: Int64?
    public var p90: Int64?
    public var p95: Int64?
    public var p99: Int64?
    public init(average: Int64? = nil, p50: Int64? = nil, p90: Int64? = nil, p95: Int64? = nil, p99: Int64? = nil) {
        self.average = average
        self.p50 = p50
        self.p90 = p90
        self.p95 = p95
        self.p99 = p99
    }
}

/// The answer of `GET /performanceTest/result/{requestId}`.
public struct PerformanceTestResultResponse: Codable, Sendable, Hashable {
    public var config: PerformanceTestConfig?
    public var target: String?
    public var result: PerformanceTestStatus?
    public var successRate: Double?
    public var numPending: Int?
    public var responseTimes: PerformanceTestResponseTimes?
    /// Failure reasons and how often each happened.
    public var failures: [String: Int]?

    public init(config: PerformanceTestConfig? = nil, target: String? = nil, result: PerformanceTestStatus? = nil,
                successRate: Double? = nil, numPending: Int? = nil, responseTimes: PerformanceTestResponseTimes? = nil,
                failures: [String: Int]? = nil) {
        self.config = config
        self.target = target
        self.result = result
        self.successRate = successRate
        self.numPending = numPending
        self.responseTimes = responseTimes
        self.failures = failures
    }
}
