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
        case closed
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

    /// Called when the first byte of a request arrives, so a drain lets the request finish.
    private let requestStarted: () -> Void

    init(io: ConnectionIO, configuration: HTTPServerConfiguration, requestStarted: @escaping () -> Void = {}) {
        self.io = io
        self.requestStarted = requestStarted
        parser = HTTPRequestParser(maxHeaderSize: configuration.maxHeaderSize, maxBodySize: configuration.maxBodySize)
        idleTimeout = configuration.idleTimeout
        requestTimeout = configuration.requestTimeout
    }

    mutating func next() -> Outcome {
        deadline = parser.bufferedCount == 0 ? nil : .now + .seconds(requestTimeout)
        if deadline != nil { requestStarted() }
        while true {
            switch parser.next() {
            case .request(let request, let keepAlive):
                return .request(request, keepAlive: keepAlive)
            case .refused(let status, let message):
                return .refused(status: status, message: message)
            case .unreadable:
                return .closed
            case .needMore(let sendContinue):
                if sendContinue { _ = io.send(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)) }
                guard fill() else { return .closed }
            }
        }
    }

    /// Reads what has arrived; false when the connection ended or a timeout passed.
    private mutating func fill() -> Bool {
        var wait = idleTimeout
        if let deadline {
            let remaining = deadline - .now
            guard remaining > .zero else { return false }
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
        let received = chunk.withUnsafeMutableBytes { io.receive(into: $0) }
        guard received > 0 else { return false }
        chunk.withUnsafeBytes { parser.append(UnsafeRawBufferPointer(rebasing: $0[0..<received])) }
        if deadline == nil {
            deadline = .now + .seconds(requestTimeout)
            requestStarted()
        }
        return true
    }
}
