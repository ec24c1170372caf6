public import Foundation
public import HTTPCore
public import TLS
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Limits and settings of an `HTTPServer`; the defaults suit loopback use (tests, the emulator).
public struct HTTPServerConfiguration: Sendable {
    /// The largest request body accepted; larger ones are answered with 413.
    public var maxBodySize: Int
    /// The largest request head (request line and headers); larger ones are answered with 431.
    public var maxHeaderSize: Int
    /// Connections held at once. At the cap a newcomer is admitted by closing the connection that
    /// has been idle longest (nothing in flight); only when every connection is busy is it refused,
    /// at once, with 503.
    public var maxConnections: Int
    /// Seconds a kept-alive connection may wait for its next request.
    public var idleTimeout: Double
    /// Seconds from a request's first byte to its last (and for a TLS handshake): the idle timeout
    /// alone would let a client that sends a byte now and then hold a connection forever.
    public var requestTimeout: Double
    /// Seconds a response may take to be written before the connection is cut.
    public var writeTimeout: Double
    /// Listen on addresses other than loopback; only for servers that check who calls them.
    public var allowNonLoopback: Bool
    /// Serve HTTPS with these settings instead of plain HTTP.
    public var tls: TLSContext?
    /// Serve connections from this many event-loop threads (Linux), each answering many connections,
    /// instead of a thread per connection. Only for handlers that never block; 0 means a thread per
    /// connection, which suits handlers that wait (the emulator, test servers).
    public var eventLoops: Int
    /// Seconds a new connection has to send its first complete request head (a TLS handshake
    /// included): a socket that connects and sends nothing is closed this soon, not after
    /// `idleTimeout`, so such sockets cannot hold the connection slots that real clients need.
    public var headTimeout: Double

    public init(maxBodySize: Int = 16 * 1024 * 1024, maxHeaderSize: Int = 64 * 1024, maxConnections: Int = 512,
                idleTimeout: Double = 120, requestTimeout: Double = 30, writeTimeout: Double = 30,
                allowNonLoopback: Bool = false, tls: TLSContext? = nil, eventLoops: Int = 0, headTimeout: Double = 10) {
        self.headTimeout = headTimeout
        self.maxBodySize = maxBodySize
        self.maxHeaderSize = maxHeaderSize
        self.maxConnections = maxConnections
        self.idleTimeout = idleTimeout
        self.requestTimeout = requestTimeout
        self.writeTimeout = writeTimeout
        self.allowNonLoopback = allowNonLoopback
        self.tls = tls
        self.eventLoops = eventLoops
    }
}

/// An HTTP/1.1 server: the tests' fixture server, the emulator's front, and (with TLS, limits and
/// a non-loopback address) the realtime endpoint.
///
/// It accepts on its own thread and serves each connection on its own thread (keep-alive included),
/// so a slow handler never holds up other connections; `maxConnections` bounds those threads.
/// Requests carry `Content-Length` or chunked bodies up to `maxBodySize`; responses always carry
/// `Content-Length`. An async handler runs on the connection's thread too (a task executor
/// preference), so a process that blocks Swift's small concurrency pool does not starve this
/// server; only what the handler awaits on an actor needs that pool. A synchronous handler costs
/// no task at all.
public final class HTTPServer: Sendable {
    /// Answers one request; `nil` closes the connection without answering (to simulate a network fault).
    public typealias Handler = @Sendable (HTTPServerRequest) async -> HTTPResponse?
    /// Answers one request on the connection's own thread; it must not wait on Swift's concurrency pool.
    public typealias SynchronousHandler = @Sendable (HTTPServerRequest) -> HTTPResponse?
    /// Answers one request now, or takes its responder (calling the second argument, once) and
    /// answers later from another thread: a handler that must wait for something (a call to
    /// another server, with a deadline) does so without holding an event-loop thread. Runs on the
    /// connection's thread like a synchronous handler, and must not block either.
    public typealias DeferringHandler = @Sendable (HTTPServerRequest, () -> HTTPResponder) -> HTTPAnswer

    /// The default limit on a request body.
    public static let maxBodySize = HTTPServerConfiguration().maxBodySize

    /// The port actually bound (the ephemeral one when 0 was asked for).
    public let port: UInt16
    /// `http://<host>:<port>` (or `https://`), with no trailing slash.
    public let baseURL: URL
    private let core: ServerCore

    /// Binds and starts listening. Only loopback addresses are accepted unless `allowNonLoopback` is
    /// set, because the server has no authentication of its own. `requestTimeout` is the seconds a
    /// client has to send a whole request once its first byte arrived.
    public convenience init(host: String = "127.0.0.1", port: UInt16 = 0, allowNonLoopback: Bool = false,
                            requestTimeout: Double = 30, handler: @escaping Handler) throws(HTTPError) {
        try self.init(host: host, port: port,
                      configuration: HTTPServerConfiguration(requestTimeout: requestTimeout, allowNonLoopback: allowNonLoopback),
                      handler: handler)
    }

    public convenience init(host: String = "127.0.0.1", port: UInt16 = 0, configuration: HTTPServerConfiguration,
                            handler: @escaping Handler) throws(HTTPError) {
        try self.init(host: host, port: port, configuration: configuration, respond: .async(handler))
    }

    public convenience init(host: String = "127.0.0.1", port: UInt16 = 0, configuration: HTTPServerConfiguration,
                            synchronousHandler: @escaping SynchronousHandler) throws(HTTPError) {
        try self.init(host: host, port: port, configuration: configuration, respond: .synchronous(synchronousHandler))
    }

    public convenience init(host: String = "127.0.0.1", port: UInt16 = 0, configuration: HTTPServerConfiguration,
                            deferringHandler: @escaping DeferringHandler) throws(HTTPError) {
        try self.init(host: host, port: port, configuration: configuration, respond: .deferring(deferringHandler))
    }

    private init(host: String, port: UInt16, configuration: HTTPServerConfiguration, respond: ServerCore.Respond) throws(HTTPError) {
        let address = try BindAddress(host: host, port: port)
        guard configuration.allowNonLoopback || address.isLoopback else {
            throw HTTPError(.invalidRequest,
                            "Refusing to listen on \(host): it is not a loopback address. Use 127.0.0.1 or ::1, or allow non-loopback addresses explicitly.")
        }
        if configuration.tls != nil {
            // OpenSSL writes with write(2), which raises SIGPIPE on a closed connection.
            signal(SIGPIPE, SIG_IGN)
        }
        let listener = try address.listen()
        self.port = listener.port
        baseURL = URL(string: "\(configuration.tls == nil ? "http" : "https")://\(address.urlHost):\(listener.port)")!
        core = ServerCore(listener: listener.descriptor, configuration: configuration, respond: respond)
        try core.start()
    }

    deinit {
        core.stop()
    }

    /// Stops accepting and closes every open connection; requests in flight get no answer.
    public func stop() {
        core.stop()
    }

    /// Stops accepting, lets requests in flight finish and answers them with `Connection: close`,
    /// closes idle connections, then stops. True when every connection ended within `timeout` seconds.
    @discardableResult
    public func drain(timeout: Double) -> Bool {
        core.drain(timeout: timeout)
    }

    /// Serves new connections with these TLS settings (re-read certificate files, say); connections
    /// already open keep theirs. Ignored by a plain HTTP server.
    public func replaceTLS(_ context: TLSContext) {
        core.replaceTLS(context)
    }

    /// Connections open right now.
    public var openConnections: Int { core.openConnections }

    /// Connections open now, and how many were closed for each reason since the start.
    public var statistics: HTTPServerStatistics { core.statistics }

    /// True once `drain` has begun (and until the server stops): answers from then on carry
    /// `Connection: close`, and no new connection is accepted.
    public var isDraining: Bool { core.phase == .draining }

    /// How often the listening socket was shut down: once, however the server ends, because after
    /// that its number may already belong to another socket of the process.
    var listenerShutdowns: Int { core.listenerShutdownCount }
}

/// What the server did with its connections, for `/metrics`.
public struct HTTPServerStatistics: Sendable, Hashable {
    public var openConnections: Int
    /// Open connections with nothing in flight: the ones a newcomer at `maxConnections` may replace.
    public var idleConnections: Int
    /// Closed after `idleTimeout` with nothing in flight between requests.
    public var closedIdle: Int
    /// Closed because no complete request head arrived within `headTimeout` of connecting.
    public var closedHeadTimeout: Int
    /// Closed because a request (or an answer) did not move within its timeout.
    public var closedRequestTimeout: Int
    /// Closed, idle, to make room for a newcomer at `maxConnections`.
    public var evicted: Int
    /// Newcomers refused with 503 because every connection was busy.
    public var refused: Int

    public init(openConnections: Int = 0, idleConnections: Int = 0, closedIdle: Int = 0, closedHeadTimeout: Int = 0,
                closedRequestTimeout: Int = 0, evicted: Int = 0, refused: Int = 0) {
        self.openConnections = openConnections
        self.idleConnections = idleConnections
        self.closedIdle = closedIdle
        self.closedHeadTimeout = closedHeadTimeout
        self.closedRequestTimeout = closedRequestTimeout
        self.evicted = evicted
        self.refused = refused
    }
}
