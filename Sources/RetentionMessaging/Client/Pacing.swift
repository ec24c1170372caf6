public import RetentionMessagingModels
/// The two classes Apple budgets separately: `PUT /default/...` and every other endpoint.
public typealias EndpointClass = RateLimits.EndpointClass

/// How fast the client sends: a budget per endpoint class (Apple's rate limits, or none) and a limit
/// on requests in flight.
///
/// Apple publishes "requests per second, enforced hourly", so each class is a token bucket that
/// holds a window's budget and refills at the per-second rate: a burst that fits within the hour
/// goes out at once, and a longer run settles to the published rate.
public struct Pacing: Sendable, Hashable {
    /// The budgets; nil sends as fast as the server answers (its 429 and `Retry-After` still apply).
    public var limits: RateLimits?
    /// Requests in flight at the same time.
    public var maxConcurrentRequests: Int

    public init(limits: RateLimits?, maxConcurrentRequests: Int = 4) {
        self.limits = limits
        self.maxConcurrentRequests = max(1, maxConcurrentRequests)
    }

    /// Apple's published limits.
    public static let apple = Pacing(limits: .apple)

    /// No client-side budget.
    public static let unlimited = Pacing(limits: nil)

    /// The same budget in both environments, counted per hour (for the emulator's custom limits).
    public static func perHour(other: Int, configureDefault: Int, maxConcurrentRequests: Int = 4) -> Pacing {
        Pacing(limits: .perHour(other: other, configureDefault: configureDefault), maxConcurrentRequests: maxConcurrentRequests)
    }

    /// Requests per second for `endpointClass` in `environment`; nil when unlimited.
    public func rate(for endpointClass: EndpointClass, in environment: Environment) -> Double? {
        guard let rate = limits?.perSecond(endpointClass, in: environment), rate > 0 else { return nil }
        return rate
    }

    /// Seconds of budget a bucket holds when full.
    public var window: Double { limits?.window ?? RateLimits.apple.window }
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

    /// Takes a token now, going into debt if needed; returns the seconds from `now` to wait before
    /// using it. Reservations queue up in the order they are made — also when a caller's reading of
    /// the clock is older than one the bucket already saw (concurrent tasks read the clock before
    /// they reserve): its wait then counts from the bucket's time, never from before it.
    public mutating func reserve(now: Double) -> Double {
        refill(now: now)
        tokens -= 1
        return tokens >= -Self.slack ? 0 : max(0, updated - now) - tokens / rate
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
        return max(0, updated - now) + (1 - tokens) / rate
    }
}
