/// The answer of `POST /performanceTest`.
public struct PerformanceTestResponse: Codable, Sendable, Hashable {
    public var config: PerformanceTestConfig?
    public var requestId: String
    public init(config: PerformanceTestConfig?, requestId: String) {
        self.config = config
        self.requestId = requestId
    }
}
