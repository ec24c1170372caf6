/// `result` of a performance test: `PENDING`, `PASS` or `FAIL`.
public struct PerformanceTestStatus: ForwardCompatibleEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let pending = PerformanceTestStatus(rawValue: "PENDING")
    public static let pass = PerformanceTestStatus(rawValue: "PASS")
    public static let fail = PerformanceTestStatus(rawValue: "FAIL")
}
