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
