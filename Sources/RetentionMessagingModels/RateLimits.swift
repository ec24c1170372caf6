/// Apple's published rate limits, the one table the client's pacing, the plan's estimate and the
/// emulator read: requests per second per endpoint class in production, a fraction of that in
/// sandbox, enforced per `window` seconds.
public struct RateLimits: Sendable, Hashable {
    /// The classes Apple budgets separately: `PUT /default/...` and every other endpoint.
    public enum EndpointClass: String, Sendable, Hashable, Codable, CaseIterable {
        case configureDefault
        case other
        /// The App Store Server API's Get Notification History (50/s in production), on the same hosts and key.
        case notificationHistory
    }

    public var configureDefaultPerSecond: Double
    public var otherPerSecond: Double
    /// The share of the production rates that applies in sandbox.
    public var sandboxFactor: Double
    /// Seconds over which Apple enforces the rates.
    public var window: Double

    public init(configureDefaultPerSecond: Double, otherPerSecond: Double, sandboxFactor: Double, window: Double) {
        self.configureDefaultPerSecond = configureDefaultPerSecond
        self.otherPerSecond = otherPerSecond
        self.sandboxFactor = sandboxFactor
        self.window = window
    }

    /// Production 10/s for configure-default and 1/s for the rest, sandbox 10% of that, enforced hourly.
    public static let apple = RateLimits(configureDefaultPerSecond: 10, otherPerSecond: 1, sandboxFactor: 0.1, window: 3600)

    public func perSecond(_ endpointClass: EndpointClass, in environment: Environment) -> Double {
        let production = switch endpointClass {
        case .configureDefault: configureDefaultPerSecond
        case .other: otherPerSecond
        case .notificationHistory: NotificationHistoryFacts.productionRatePerSecond
        }
        return environment == .sandbox ? production * sandboxFactor : production
    }

    /// Requests allowed per window, rounded to whole requests.
    public func perWindow(_ endpointClass: EndpointClass, in environment: Environment) -> Int {
        Int((perSecond(endpointClass, in: environment) * window).rounded())
    }
}
