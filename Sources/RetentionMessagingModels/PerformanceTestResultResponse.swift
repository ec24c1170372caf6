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
