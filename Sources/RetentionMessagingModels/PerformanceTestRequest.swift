/// The body of `POST /performanceTest` (sandbox only).
public struct PerformanceTestRequest: Codable, Sendable, Hashable {
    public var originalTransactionId: String
    public init(originalTransactionId: String) { self.originalTransactionId = originalTransactionId }
}
