/// Rate limits as Apple states them: requests per second per endpoint class in production, a fraction
/// of that in sandbox, enforced per `window` seconds. `apple` is the one table of Apple's published
/// figures, read by the client's pacing, the plan's estimate, the emulator and the outcome job.
public struct RateLimits: Sendable, Hashable {
    /// The classes Apple budgets separately: `PUT /default/...` and every other endpoint.
    public enum EndpointClass: String, Sendable, Hashable, Codable, CaseIterable {
        case configureDefault
        case other
        /// The App Store Server API's Get Notification History (50/s in production), on the same hosts and key.
        case notificationHistory
        /// The App Store Server API's Get All Subscription Statuses (50/s in production): serve's live lookup.
        case subscriptionStatus
    }

    public var configureDefaultPerSecond: Double
    public var otherPerSecond: Double
    public var notificationHistoryPerSecond: Double
    public var subscriptionStatusPerSecond: Double
    /// The share of the production rates that applies in sandbox.
    public var sandboxFactor: Double
    /// Seconds over which Apple enforces the rates.
    public var window: Double

    public init(configureDefaultPerSecond: Double, otherPerSecond: Double, notificationHistoryPerSecond: Double,
                sandboxFactor: Double, window: Double, subscriptionStatusPerSecond: Double = 50) {
        self.subscriptionStatusPerSecond = subscriptionStatusPerSecond
        self.configureDefaultPerSecond = configureDefaultPerSecond
        self.otherPerSecond = otherPerSecond
        self.notificationHistoryPerSecond = notificationHistoryPerSecond
        self.sandboxFactor = sandboxFactor
        self.window = window
    }

    /// Apple's: production 10/s for configure-default, 1/s for the other Retention Messaging endpoints
    /// and 50/s for Get Notification History and Get All Subscription Statuses; sandbox 10% of that;
    /// enforced hourly.
    public static let apple = RateLimits(configureDefaultPerSecond: 10, otherPerSecond: 1, notificationHistoryPerSecond: 50,
                                         sandboxFactor: 0.1, window: 3600)

    /// The same budget per hour in both environments (the emulator's custom limits); Get Notification
    /// History and Get All Subscription Statuses keep Apple's rates.
    public static func perHour(other: Int, configureDefault: Int) -> RateLimits {
        RateLimits(configureDefaultPerSecond: Double(configureDefault) / 3600, otherPerSecond: Double(other) / 3600,
                   notificationHistoryPerSecond: apple.notificationHistoryPerSecond, sandboxFactor: 1, window: 3600)
    }

    public func perSecond(_ endpointClass: EndpointClass, in environment: Environment) -> Double {
        let production = switch endpointClass {
        case .configureDefault: configureDefaultPerSecond
        case .other: otherPerSecond
        case .notificationHistory: notificationHistoryPerSecond
        case .subscriptionStatus: subscriptionStatusPerSecond
        }
        return environment == .sandbox ? production * sandboxFactor : production
    }

    /// Requests allowed per window, rounded to whole requests.
    public func perWindow(_ endpointClass: EndpointClass, in environment: Environment) -> Int {
        Int((perSecond(endpointClass, in: environment) * window).rounded())
    }
}
