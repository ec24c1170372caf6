public import Foundation
import Synchronization

/// The one clock of the code base, in seconds since 1970: pacing and rate limits, review ages and state
/// times, signature freshness, offer signing and `serve`'s snapshot times all read it. `SystemClock` is
/// the real one; `VirtualClock` lets tests, the demo and benchmarks fix time or run hours of Apple's
/// rate limits instantly.
public protocol RetentionClock: Sendable {
    func now() -> Double
    /// Returns once `now() >= deadline`.
    func sleep(until deadline: Double) async throws
}

extension RetentionClock {
    /// The time as a `Date`, for Foundation's and OpenSSL's edges.
    public func date() -> Date { Date(timeIntervalSince1970: now()) }
    /// The current millisecond: the time every document and report records.
    public func time() -> UTCTime { UTCTime(date()) }
}

public struct SystemClock: RetentionClock {
    public init() {}
    public func now() -> Double { Date().timeIntervalSince1970 }
    public func sleep(until deadline: Double) async throws {
        let wait = deadline - now()
        // Capped (at about 30 years), because a deadline can come from a server's Retry-After and
        // converting an infinite or huge wait to UInt64 nanoseconds would trap.
        if wait > 0 { try await Task.sleep(nanoseconds: UInt64(min(wait, 1e9) * 1_000_000_000)) }
    }
}

/// A clock that jumps: sleeping moves it forward to the deadline at once. It never goes back,
/// so concurrent sleepers see time as the latest deadline any of them reached.
public final class VirtualClock: RetentionClock {
    private let current: Mutex<Double>

    public init(start: Double = 1_790_000_000) { current = Mutex(start) }

    /// A clock standing at `date` until it is moved.
    public convenience init(at date: Date) { self.init(start: date.timeIntervalSince1970) }

    public func now() -> Double { current.withLock { $0 } }

    public func sleep(until deadline: Double) async throws {
        current.withLock { $0 = max($0, deadline) }
    }

    /// Moves the clock forward by `seconds`.
    public func advance(by seconds: Double) {
        current.withLock { $0 += max(0, seconds) }
    }
}
