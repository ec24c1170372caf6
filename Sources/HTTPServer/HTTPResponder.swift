public import HTTPCore
import Synchronization

/// What a deferring handler does with a request: answer it now, or later through its responder.
public enum HTTPAnswer: Sendable {
    /// This response (nil closes the connection without answering).
    case now(HTTPResponse?)
    /// The handler took the request's `HTTPResponder` and answers through it, from any thread.
    case later
}

/// Answers one deferred request, once, from any thread: the first `respond` counts, later ones do
/// nothing. A responder dropped without answering closes the connection, so a forgotten request
/// never holds its connection until the request timeout.
public final class HTTPResponder: Sendable {
    private let delivered = Atomic<Bool>(false)
    private let deliver: @Sendable (HTTPResponse?) -> Void

    /// A responder that hands the answer to `deliver` (a server's own, or a caller that waits for it).
    public init(_ deliver: @escaping @Sendable (HTTPResponse?) -> Void) {
        self.deliver = deliver
    }

    deinit {
        if !delivered.load(ordering: .acquiring) { deliver(nil) }
    }

    /// Answers the request (nil closes the connection without answering); false when it was answered already.
    @discardableResult
    public func respond(_ response: HTTPResponse?) -> Bool {
        guard !delivered.exchange(true, ordering: .acquiringAndReleasing) else { return false }
        deliver(response)
        return true
    }

    /// Whether the request has been answered (or closed) through this responder.
    public var hasResponded: Bool { delivered.load(ordering: .acquiring) }
}
