public import Basics
public import HTTPCore

/// Passes requests on, first moving a `VirtualClock` forward by `seconds` for each one it holds up:
/// what other requests' pacing waits do to a shared virtual clock while one request, already signed,
/// is on its way (its task descheduled), made to happen every time.
public final class HeldUpTransport: HTTPTransport {
    private let next: any HTTPTransport
    private let clock: VirtualClock
    private let seconds: Double
    private let limit: Int
    private let matches: @Sendable (HTTPRequest) -> Bool
    private let held = Locked(0)

    /// Holds up the first `limit` requests that `matches` selects (any request when nil).
    public init(_ next: any HTTPTransport, clock: VirtualClock, seconds: Double, limit: Int = 1,
                matching matches: (@Sendable (HTTPRequest) -> Bool)? = nil) {
        self.next = next
        self.clock = clock
        self.seconds = seconds
        self.limit = limit
        self.matches = matches ?? { _ in true }
    }

    /// How many requests were held up.
    public var heldRequests: Int { held.value }

    public func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
        let holds = matches(request) && held.withLock { count in
            guard count < limit else { return false }
            count += 1
            return true
        }
        if holds { clock.advance(by: seconds) }
        return try await next.send(request)
    }
}
