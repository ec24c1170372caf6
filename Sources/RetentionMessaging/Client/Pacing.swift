public import RetentionMessagingModels
/// The two classes Apple budgets separately: `PUT /default/...` and every other endpoint.
public typealias EndpointClass = RateLimits.EndpointClass

/// How fast the client sends: a budget per endpoint class and a limit on requests in flight.
///
/// Apple publishes "requests per second, enforced hourly", so each class is a token bucket that
/// holds an hour's budget and refills at the per-second rate: a burst that fits within the hour
/// goes out at once, and a longer run settles to the published rate.
public struct Pacing: Sendable, Hashable {
    /// Production requests per second for `PUT /default/...`; nil means no budget.
    public var configureDefaultPerSecond: Double?
    /// Production requests per second for every other endpoint; nil means no budget.
    public var otherPerSecond: Double?
    /// The fraction of the production rates that applies in sandbox (Apple: 10%).
    public var sandboxFactor: Double
    /// Seconds of budget a bucket holds when full (Apple enforces hourly: 3600).
    public var window: Double
    /// Requests in flight at the same time.
    public var maxConcurrentRequests: Int

    public init(configureDefaultPerSecond: Double?, otherPerSecond: Double?, sandboxFactor: Double = 0.1,
                window: Double = 3600, maxConcurrentRequests: Int = 4) {
        self.configureDefaultPerSecond = configureDefaultPerSecond
        self.otherPerSecond = otherPerSecond
        self.sandboxFactor = sandboxFactor
        self.window = window
        self.maxConcurrentRequests = max(1, maxConcurrentRequests)
    }

    /// Apple's published limits: production 10/s for configure-default and 1/s for the rest,
    /// sandbox 10% of that, enforced hourly.
    public static let apple = Pacing(configureDefaultPerSecond: RateLimits.apple.configureDefaultPerSecond,
                                     otherPerSecond: RateLimits.apple.otherPerSecond,
                                     sandboxFactor: RateLimits.apple.sandboxFactor, window: RateLimits.apple.window)

    /// No client-side budget (the server's 429 and `Retry-After` still apply).
    public static let unlimited = Pacing(configureDefaultPerSecond: nil, otherPerSecond: nil)

    /// The same budget in both environments, counted per hour (for the emulator's custom limits).
    public static func perHour(other: Int, configureDefault: Int, maxConcurrentRequests: Int = 4) -> Pacing {
        Pacing(configureDefaultPerSecond: Double(configureDefault) / 3600, otherPerSecond: Double(other) / 3600,
               sandboxFactor: 1, window: 3600, maxConcurrentRequests: maxConcurrentRequests)
    }

    /// Requests per second for `endpointClass` in `environment`; nil when unlimited.
    public func rate(for endpointClass: EndpointClass, in environment: Environment) -> Double? {
        let production = switch endpointClass {
        case .configureDefault: configureDefaultPerSecond
        // Paced whenever the Retention Messaging endpoints are, at the App Store Server API's own rate.
        case .notificationHistory: otherPerSecond == nil ? nil : NotificationHistoryFacts.productionRatePerSecond
        case .other: otherPerSecond
        }
        guard let production, production > 0 else { return nil }
        return environment == .sandbox ? production * sandboxFactor : production
    }
}

/// When to try again after a failure that may be temporary.
public struct RetryPolicy: Sendable, Hashable {
    /// Attempts per call for transient failures (5xx, dropped connections, timeouts), first included.
    public var maxAttempts: Int
    /// Seconds before the first retry; each later one doubles, with jitter.
    public var baseDelay: Double
    /// The longest wait between two attempts, in seconds.
    public var maxDelay: Double
    /// How many 429 answers a call waits out (sleeping until `Retry-After`) before giving up.
    /// These do not count against `maxAttempts`: the server refused the request, so nothing landed.
    public var maxRateLimitWaits: Int

    public init(maxAttempts: Int, baseDelay: Double, maxDelay: Double, maxRateLimitWaits: Int = 20) {
        self.maxAttempts = max(1, maxAttempts)
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.maxRateLimitWaits = max(0, maxRateLimitWaits)
    }

    public static let `default` = RetryPolicy(maxAttempts: 4, baseDelay: 1, maxDelay: 30)
    public static let none = RetryPolicy(maxAttempts: 1, baseDelay: 0, maxDelay: 0, maxRateLimitWaits: 0)

    /// The wait before retry number `retry` (1 for the first retry): exponential, capped, and
    /// jittered into its upper half so that concurrent callers spread out.
    public func delay(beforeRetry retry: Int, jitter: Double) -> Double {
        let exponential = baseDelay * Double(1 << min(max(retry - 1, 0), 20))
        return min(maxDelay, exponential) * (0.5 + 0.5 * min(max(jitter, 0), 1))
    }
}

/// A token bucket over a `RetentionClock`'s seconds: `capacity` tokens, refilled at `rate` per
/// second, starting full. The client reserves (may wait); the emulator takes (or refuses).
public struct TokenBucket: Sendable, Hashable {
    public let capacity: Double
    public let rate: Double
    public private(set) var tokens: Double
    private var updated: Double

    /// Rounding slack, so that a waiter woken exactly at its deadline finds its token.
    static let slack = 1e-6

    public init(capacity: Double, rate: Double, now: Double) {
        self.capacity = max(1, capacity)
        self.rate = rate
        tokens = self.capacity
        updated = now
    }

    private mutating func refill(now: Double) {
        if now > updated {
            tokens = min(capacity, tokens + (now - updated) * rate)
            updated = now
        }
    }

    /// Takes a token now, going into debt if needed; returns the seconds to wait before using it.
    /// Reservations queue up in the order they are made.
    public mutating func reserve(now: Double) -> Double {
        refill(now: now)
        tokens -= 1
        return tokens >= -Self.slack ? 0 : -tokens / rate
    }

    /// Empties the bucket so that the next reservation waits until `deadline`: a server's 429 with
    /// `Retry-After` says the budget is spent, whatever this bucket (which starts full in every
    /// process) believed, so later requests go out at the published rate instead of in a burst.
    public mutating func drain(until deadline: Double, now: Double) {
        refill(now: now)
        tokens = min(tokens, 1 - max(0, deadline - now) * rate)
    }

    /// Takes a token if one is there and returns nil; otherwise takes nothing and returns the
    /// seconds until one will be.
    public mutating func take(now: Double) -> Double? {
        refill(now: now)
        if tokens >= 1 - Self.slack {
            tokens = max(0, tokens - 1)
            return nil
        }
        return (1 - tokens) / rate
    }
}
