public import Foundation
import Dispatch
import Glibc

/// A small HTTP/1.1 server for loopback use: the tests' fixture server and the emulator's front.
///
/// It accepts on its own thread and serves each connection on its own thread (keep-alive included),
/// so a slow handler never holds up other connections. Requests carry `Content-Length` or chunked
/// bodies up to `maxBodySize`; responses always carry `Content-Length`. The handler runs on Swift's
/// concurrency pool, so a caller must not block that pool (with synchronous socket calls, say) while
/// it waits for this server's answer.
public final class HTTPServer: Sendable {
    /// Answers one request; `nil` closes the connection without answering (to simulate a network fault).
    public typealias Handler = @Sendable (HTTPServerRequest) async -> HTTPResponse?

    /// The largest request body accepted; larger ones are answered with 413.
    public static let maxBodySize = 16 * 1024 * 1024

    /// The port actually bound (the ephemeral one when 0 was asked for).
    public let port: UInt16
    /// `http://<host>:<port>`, with no trailing slash.
    public let baseURL: URL
    private let core: ServerCore

    /// Binds and starts listening. Only loopback addresses are accepted unless `allowNonLoopback` is
    /// set, because the server has no authentication of its own. `requestTimeout` is the seconds a
    /// client has to send a whole request once its first byte arrived.
    public init(host: String = "127.0.0.1", port: UInt16 = 0, allowNonLoopback: Bool = false,
                requestTimeout: Double = 30, handler: @escaping Handler) throws(HTTPError) {
        let address = try ListenAddress(host: host, port: port)
        guard allowNonLoopback || address.isLoopback else {
            throw HTTPError(.invalidRequest,
                            "Refusing to listen on \(host): it is not a loopback address. Use 127.0.0.1 or ::1, or allow non-loopback addresses explicitly.")
        }
        let listener = try address.listen()
        self.port = listener.port
        baseURL = URL(string: "http://\(address.urlHost):\(listener.port)")!
        core = ServerCore(listener: listener.descriptor, requestTimeout: requestTimeout, handler: handler)
        core.start()
    }

    deinit {
        core.stop()
    }

    /// Stops accepting and closes every open connection; requests in flight get no answer.
    public func stop() {
        core.stop()
    }
}

/// A parsed listen address: IPv4, IPv6 or `localhost`.
private struct ListenAddress {
    var storage = sockaddr_storage()
    var length: socklen_t
    var family: Int32
    var isLoopback: Bool
    var urlHost: String

    init(host: String, port: UInt16) throws(HTTPError) {
        let name = host == "localhost" ? "127.0.0.1" : host
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, name, &v4) == 1 {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr = v4
            withUnsafeMutableBytes(of: &storage) { target in
                withUnsafeBytes(of: address) { target.copyMemory(from: $0) }
            }
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
            family = AF_INET
            isLoopback = UInt32(bigEndian: v4.s_addr) >> 24 == 127
            urlHost = name
        } else if inet_pton(AF_INET6, name, &v6) == 1 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            address.sin6_addr = v6
            withUnsafeMutableBytes(of: &storage) { target in
                withUnsafeBytes(of: address) { target.copyMemory(from: $0) }
            }
            length = socklen_t(MemoryLayout<sockaddr_in6>.size)
            family = AF_INET6
            isLoopback = withUnsafeBytes(of: v6) { Array($0) == Array(repeating: 0, count: 15) + [1] }
            urlHost = "[\(name)]"
        } else {
            throw HTTPError(.invalidRequest, "'\(host)' is not an IP address to listen on; use 127.0.0.1.")
        }
    }

    func listen() throws(HTTPError) -> (descriptor: Int32, port: UInt16) {
        let descriptor = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw HTTPError(.other, "Could not create a socket: \(errnoText()).") }
        var on: Int32 = 1
        _ = setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        var address = storage
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard bound == 0, Glibc.listen(descriptor, 128) == 0 else {
            let reason = errnoText()
            close(descriptor)
            throw HTTPError(.other, "Could not listen on \(urlHost) port \(UInt16(bigEndian: port(of: storage))): \(reason).")
        }
        var actual = sockaddr_storage()
        var actualLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &actualLength) }
        }
        return (descriptor, UInt16(bigEndian: port(of: actual)))
    }

    private func port(of storage: sockaddr_storage) -> UInt16 {
        withUnsafeBytes(of: storage) { bytes in
            family == AF_INET
                ? bytes.load(fromByteOffset: MemoryLayout<sockaddr_in>.offset(of: \.sin_port)!, as: UInt16.self)
                : bytes.load(fromByteOffset: MemoryLayout<sockaddr_in6>.offset(of: \.sin6_port)!, as: UInt16.self)
        }
    }
}

private func errnoText() -> String {
    String(cString: strerror(errno))
}

/// The listener, the open connections and the handler, shared by the accept thread and the
/// connection threads (which keep it alive until they finish, independently of `HTTPServer`).
private final class ServerCore: @unchecked Sendable {
    static let maxConnections = 512
    static let idleTimeoutSeconds = 120

    private let listener: Int32
    private let requestTimeout: Double
    private let handler: HTTPServer.Handler
    private let lock = NSLock()
    private var stopped = false
    private var connections: Set<Int32> = []

    init(listener: Int32, requestTimeout: Double, handler: @escaping HTTPServer.Handler) {
        self.listener = listener
        self.requestTimeout = requestTimeout
        self.handler = handler
    }

    func start() {
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "retention-sync.http-server.accept"
        thread.start()
    }

    func stop() {
        lock.withLock {
            guard !stopped else { return }
            stopped = true
            // shutdown wakes the threads blocked in accept and recv; each closes its own descriptor.
            _ = shutdown(listener, Int32(SHUT_RDWR))
            for connection in connections {
                _ = shutdown(connection, Int32(SHUT_RDWR))
            }
        }
    }

    private func acceptLoop() {
        defer { close(listener) }
        while true {
            let connection = accept(listener, nil, nil)
            if connection < 0 {
                if lock.withLock({ stopped }) { return }
                if errno == EINTR || errno == ECONNABORTED { continue }
                // Out of descriptors or memory: wait a little rather than spin.
                usleep(10_000)
                continue
            }
            enum Admission { case serve, refuse, stop }
            let admission: Admission = lock.withLock {
                if stopped { return .stop }
                if connections.count >= Self.maxConnections { return .refuse }
                connections.insert(connection)
                return .serve
            }
            switch admission {
            case .stop:
                close(connection)
                return
            case .refuse:
                _ = Self.write(HTTPResponse(status: 503, body: Data("Too many connections.\n".utf8)), to: connection,
                               keepAlive: false, omitBody: false)
                close(connection)
            case .serve:
                configure(connection)
                let thread = Thread { [self] in serve(connection) }
                thread.name = "retention-sync.http-server.connection"
                thread.start()
            }
        }
    }

    private func configure(_ connection: Int32) {
        _ = fcntl(connection, F_SETFD, FD_CLOEXEC)
        var on: Int32 = 1
        _ = setsockopt(connection, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        var idle = timeval(tv_sec: Self.idleTimeoutSeconds, tv_usec: 0)
        _ = setsockopt(connection, SOL_SOCKET, SO_SNDTIMEO, &idle, socklen_t(MemoryLayout<timeval>.size))
    }

    private func serve(_ connection: Int32) {
        defer {
            lock.withLock { _ = connections.remove(connection) }
            close(connection)
        }
        var reader = RequestReader(descriptor: connection, idleTimeout: Double(Self.idleTimeoutSeconds),
                                   requestTimeout: requestTimeout)
        while !lock.withLock({ stopped }) {
            switch reader.next() {
            case .closed:
                return
            case .refused(let status, let message):
                _ = Self.write(HTTPResponse(status: status, headers: [("Content-Type", "text/plain; charset=utf-8")],
                                            body: Data((message + "\n").utf8)),
                               to: connection, keepAlive: false, omitBody: false)
                return
            case .request(let request, let keepAlive):
                guard let response = answer(request) else { return }
                guard Self.write(response, to: connection, keepAlive: keepAlive, omitBody: request.method == "HEAD"),
                      keepAlive else { return }
            }
        }
    }

    /// Runs the async handler and waits for it; this is a dedicated connection thread, not one of
    /// Swift's pool threads, so blocking here starves nothing.
    private func answer(_ request: HTTPServerRequest) -> HTTPResponse? {
        let box = ResponseBox()
        let done = DispatchSemaphore(value: 0)
        let handler = handler
        Task {
            box.response = await handler(request)
            done.signal()
        }
        done.wait()
        return box.response
    }

    static func write(_ response: HTTPResponse, to connection: Int32, keepAlive: Bool, omitBody: Bool) -> Bool {
        let managed: Set<String> = ["content-length", "transfer-encoding", "connection"]
        var head = "HTTP/1.1 \(response.status) \(reasonPhrase(response.status))\r\n"
        for header in response.headers where !managed.contains(header.name.lowercased())
            && CurlTransfer.isValidHeader(name: header.name, value: header.value) {
            head += "\(header.name): \(header.value)\r\n"
        }
        head += "Content-Length: \(response.body.count)\r\n"
        if !keepAlive { head += "Connection: close\r\n" }
        head += "\r\n"
        var bytes = Data(head.utf8)
        if !omitBody { bytes.append(response.body) }
        return sendAll(bytes, to: connection)
    }

    static func sendAll(_ data: Data, to connection: Int32) -> Bool {
        data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let sent = send(connection, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
                if sent < 0 && errno == EINTR { continue }
                if sent <= 0 { return false }
                offset += sent
            }
            return true
        }
    }

    static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 100: "Continue"
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 204: "No Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 409: "Conflict"
        case 413: "Content Too Large"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        default: "Status \(status)"
        }
    }
}

private final class ResponseBox: @unchecked Sendable {
    var response: HTTPResponse?
}

/// Reads requests one after another from a connection's byte stream.
private struct RequestReader {
    enum Outcome {
        case request(HTTPServerRequest, keepAlive: Bool)
        /// The request cannot be served; answer with this status and close.
        case refused(status: Int, message: String)
        case closed
    }

    static let maxHeaderSize = 64 * 1024

    let descriptor: Int32
    /// Seconds a connection may wait between requests with nothing arriving.
    let idleTimeout: Double
    /// Seconds from a request's first byte to its last: the idle timeout alone would let a client
    /// that sends a byte now and then hold a connection thread (and a connection slot) forever.
    let requestTimeout: Double
    private var buffer: [UInt8] = []
    private var position = 0
    /// When the request being read must be complete; nil while waiting for the next one.
    private var deadline: ContinuousClock.Instant?

    init(descriptor: Int32, idleTimeout: Double, requestTimeout: Double) {
        self.descriptor = descriptor
        self.idleTimeout = idleTimeout
        self.requestTimeout = requestTimeout
    }

    mutating func next() -> Outcome {
        if position > 0 {
            buffer.removeFirst(position)
            position = 0
        }
        deadline = buffer.isEmpty ? nil : .now + .seconds(requestTimeout)
        // A client may send empty lines between requests.
        while true {
            if position + 1 < buffer.count, buffer[position] == 13, buffer[position + 1] == 10 {
                position += 2
            } else if position == buffer.count || position + 1 == buffer.count && buffer[position] == 13 {
                // Skipped lines are dropped at once, so a stream of empty lines cannot grow the buffer.
                buffer.removeFirst(position)
                position = 0
                guard fill() else { return .closed }
            } else {
                break
            }
        }
        guard let headEnd = find([13, 10, 13, 10], limit: Self.maxHeaderSize) else {
            return buffer.count - position > Self.maxHeaderSize
                ? .refused(status: 431, message: "The request headers are larger than \(Self.maxHeaderSize) bytes.")
                : .closed
        }
        let head = String(decoding: buffer[position..<headEnd], as: UTF8.self)
        position = headEnd + 4
        var lines = head.components(separatedBy: "\r\n")
        let requestLine = lines.removeFirst().split(separator: " ", omittingEmptySubsequences: true)
        guard requestLine.count == 3, requestLine[2].hasPrefix("HTTP/1.") else {
            return .refused(status: 400, message: "The request line is not HTTP/1.x.")
        }
        var headers: [(name: String, value: String)] = []
        for line in lines {
            if let first = line.first, first == " " || first == "\t", !headers.isEmpty {
                headers[headers.count - 1].value += " " + line.trimmingCharacters(in: .whitespaces)
                continue
            }
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex,
                  !line[..<colon].contains(where: { $0 == " " || $0 == "\t" }) else {
                return .refused(status: 400, message: "A request header line is malformed.")
            }
            headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        var request = HTTPServerRequest(method: String(requestLine[0]), target: String(requestLine[1]), headers: headers)
        let connectionHeader = request.header("Connection")?.lowercased() ?? ""
        let keepAlive = requestLine[2] == "HTTP/1.1" ? !connectionHeader.contains("close") : connectionHeader.contains("keep-alive")
        let expectsContinue = request.header("Expect")?.lowercased() == "100-continue"

        if let encoding = request.header("Transfer-Encoding")?.lowercased() {
            guard encoding.hasSuffix("chunked") else {
                return .refused(status: 501, message: "Transfer-Encoding '\(encoding)' is not supported.")
            }
            if expectsContinue && position == buffer.count { sendContinue() }
            switch readChunkedBody() {
            case .success(let body): request.body = body
            case .failure(let refusal): return refusal.outcome
            }
        } else if let lengthText = request.header("Content-Length") {
            guard let length = Int(lengthText), length >= 0 else {
                return .refused(status: 400, message: "Content-Length '\(lengthText)' is not a number of bytes.")
            }
            guard length <= HTTPServer.maxBodySize else {
                return .refused(status: 413, message: "The request body is larger than \(HTTPServer.maxBodySize) bytes.")
            }
            if expectsContinue && length > 0 && position == buffer.count { sendContinue() }
            guard let body = read(count: length) else { return .closed }
            request.body = Data(body)
        }
        return .request(request, keepAlive: keepAlive)
    }

    private struct Refusal: Error {
        var outcome: Outcome
    }

    private mutating func readChunkedBody() -> Result<Data, Refusal> {
        let start = position
        var body = Data()
        // Chunk lines and trailers are not body, so the body limit does not bound them: without a
        // limit of their own, one-byte chunks with long extensions or endless trailer lines would
        // grow the buffer without end.
        var framingTooLarge: Refusal? {
            position - start - body.count <= HTTPServer.maxBodySize ? nil
                : Refusal(outcome: .refused(status: 413, message: "The chunk lines and trailers are larger than \(HTTPServer.maxBodySize) bytes."))
        }
        while true {
            if let framingTooLarge { return .failure(framingTooLarge) }
            guard let lineEnd = find([13, 10], limit: 4096) else {
                return .failure(Refusal(outcome: .closed))
            }
            let sizeText = String(decoding: buffer[position..<lineEnd], as: UTF8.self)
                .split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            position = lineEnd + 2
            guard let size = Int(sizeText, radix: 16), size >= 0 else {
                return .failure(Refusal(outcome: .refused(status: 400, message: "A chunk size is malformed.")))
            }
            if size == 0 {
                // Trailer fields are read and ignored, up to the empty line that ends the message.
                while true {
                    if let framingTooLarge { return .failure(framingTooLarge) }
                    guard let trailerEnd = find([13, 10], limit: 4096) else { return .failure(Refusal(outcome: .closed)) }
                    let isEmpty = trailerEnd == position
                    position = trailerEnd + 2
                    if isEmpty { return .success(body) }
                }
            }
            // Compared by subtraction: a chunk size near Int.max must not overflow the sum.
            guard size <= HTTPServer.maxBodySize - body.count else {
                return .failure(Refusal(outcome: .refused(status: 413, message: "The request body is larger than \(HTTPServer.maxBodySize) bytes.")))
            }
            guard let chunk = read(count: size + 2) else { return .failure(Refusal(outcome: .closed)) }
            body.append(contentsOf: chunk.dropLast(2))
        }
    }

    private func sendContinue() {
        _ = ServerCore.sendAll(Data("HTTP/1.1 100 Continue\r\n\r\n".utf8), to: descriptor)
    }

    /// The index where `pattern` starts, at or after `position`, reading more as needed; nil if the
    /// connection ends or more than `limit` bytes pass without it.
    private mutating func find(_ pattern: [UInt8], limit: Int) -> Int? {
        var from = position
        while true {
            if buffer.count - from >= pattern.count {
                var index = from
                while index + pattern.count <= buffer.count {
                    if buffer[index] == pattern[0] && buffer[index..<index + pattern.count].elementsEqual(pattern) {
                        return index
                    }
                    index += 1
                }
                from = buffer.count - pattern.count + 1
            }
            guard buffer.count - position <= limit, fill() else { return nil }
        }
    }

    private mutating func read(count: Int) -> ArraySlice<UInt8>? {
        while buffer.count - position < count {
            guard fill() else { return nil }
        }
        defer { position += count }
        return buffer[position..<position + count]
    }

    /// Reads what has arrived; false when the connection ended or a timeout passed.
    private mutating func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            var wait = idleTimeout
            if let deadline {
                let remaining = deadline - .now
                guard remaining > .zero else { return false }
                let components = remaining.components
                wait = min(wait, Double(components.seconds) + Double(components.attoseconds) / 1e18)
            }
            var timeout = timeval(tv_sec: Int(wait), tv_usec: max(1, Int((wait - wait.rounded(.down)) * 1e6)))
            _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            let received = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if received < 0 && errno == EINTR { continue }
            guard received > 0 else { return false }
            buffer.append(contentsOf: chunk[0..<received])
            if deadline == nil { deadline = .now + .seconds(requestTimeout) }
            return true
        }
    }
}
