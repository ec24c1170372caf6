import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads requests one after another from a blocking connection, for the thread-per-connection server.
struct RequestReader {
    enum Outcome {
        case request(HTTPServerRequest, keepAlive: Bool)
        /// The request cannot be served; answer with this status and close.
        case refused(status: Int, message: String)
        /// The connection ended; with a reason when it was closed for a timeout.
        case closed(CloseReason?)
    }

    let io: ConnectionIO
    /// Seconds a connection may wait between requests with nothing arriving.
    let idleTimeout: Double
    /// Seconds from a request's first byte to its last.
    let requestTimeout: Double
    private var parser: HTTPRequestParser
    /// When the request being read must be complete; nil while waiting for the next one.
    private var deadline: ContinuousClock.Instant?
    private var chunk = [UInt8](repeating: 0, count: 16 * 1024)
    /// The receive timeout last set on the socket, so it is set again only when it changes.
    private var receiveTimeout: Double = -1

    /// Called when the first byte of a request arrives, so a drain lets the request finish; false
    /// when the connection is being evicted and must not start a request.
    private let requestStarted: () -> Bool
    /// Until the first request's head is complete: a new connection has `headTimeout` for it.
    private var headDeadline: ContinuousClock.Instant?

    init(io: ConnectionIO, configuration: HTTPServerConfiguration, requestStarted: @escaping () -> Bool = { true }) {
        self.io = io
        self.requestStarted = requestStarted
        parser = HTTPRequestParser(maxHeaderSize: configuration.maxHeaderSize, maxBodySize: configuration.maxBodySize)
        idleTimeout = configuration.idleTimeout
        requestTimeout = configuration.requestTimeout
        headDeadline = .now + .seconds(configuration.headTimeout)
    }

    mutating func next() -> Outcome {
        deadline = parser.bufferedCount == 0 ? nil : .now + .seconds(requestTimeout)
        if deadline != nil, !requestStarted() { return .closed(nil) }
        while true {
            switch parser.next() {
            case .request(let request, let keepAlive):
                headDeadline = nil
                return .request(request, keepAlive: keepAlive)
            case .refused(let status, let message):
                return .refused(status: status, message: message)
            case .unreadable:
                return .closed(nil)
            case .needMore(let sendContinue):
                if sendContinue { _ = io.send(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)) }
                if headDeadline != nil, !parser.isReadingHead { headDeadline = nil }
                switch fill() {
                case .filled: continue
                case .ended: return .closed(nil)
                case .timedOut(let reason): return .closed(reason)
                }
            }
        }
    }

    private enum Fill {
        case filled, ended
        case timedOut(CloseReason)
    }

    /// Reads what has arrived.
    private mutating func fill() -> Fill {
        var wait = idleTimeout
        let timeoutReason: CloseReason = headDeadline != nil ? .headTimeout : (deadline != nil ? .requestTimeout : .idle)
        for limit in [deadline, headDeadline] {
            guard let limit else { continue }
            let remaining = limit - .now
            guard remaining > .zero else { return .timedOut(timeoutReason) }
            let components = remaining.components
            wait = min(wait, Double(components.seconds) + Double(components.attoseconds) / 1e18)
        }
        // Setting the timeout costs a system call; a change under 50 ms does not matter.
        if abs(wait - receiveTimeout) > 0.05 {
            var timeout = timeval(seconds: wait)
            _ = setsockopt(io.descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            receiveTimeout = wait
        }
        let io = io
        let started = ContinuousClock.now
        let received = chunk.withUnsafeMutableBytes { io.receive(into: $0) }
        guard received > 0 else {
            // A receive timeout (not the peer closing) ends the wait that was allowed.
            let timedOut = (errno == EAGAIN || errno == EWOULDBLOCK) && ContinuousClock.now - started >= .seconds(wait * 0.9)
            return timedOut ? .timedOut(timeoutReason) : .ended
        }
        chunk.withUnsafeBytes { parser.append(UnsafeRawBufferPointer(rebasing: $0[0..<received])) }
        if deadline == nil {
            deadline = .now + .seconds(requestTimeout)
            guard requestStarted() else { return .ended }
        }
        return .filled
    }
}
