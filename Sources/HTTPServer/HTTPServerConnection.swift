import Basics
import Foundation
import Dispatch
import HTTPCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization
import TLS

/// The bytes of one connection, plain or through TLS.
enum ConnectionIO {
    case plain(Int32)
    case tls(TLSSession, Int32)

    var descriptor: Int32 {
        switch self {
        case .plain(let descriptor), .tls(_, let descriptor): descriptor
        }
    }

    /// Bytes received; 0 when the connection ended, failed or timed out.
    func receive(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        switch self {
        case .plain(let descriptor):
            while true {
                let received = recv(descriptor, buffer.baseAddress, buffer.count, 0)
                if received < 0 && errno == EINTR { continue }
                return max(received, 0)
            }
        case .tls(let session, _):
            return session.read(into: buffer)
        }
    }

    func send(_ bytes: UnsafeRawBufferPointer) -> Bool {
        switch self {
        case .plain(let descriptor):
            var offset = 0
            while offset < bytes.count {
                let sent = SocketPlatform.send(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if sent < 0 && errno == EINTR { continue }
                if sent <= 0 { return false }
                offset += sent
            }
            return true
        case .tls(let session, _):
            return session.write(bytes)
        }
    }

    func send(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { send($0) }
    }
}

/// Whether a connection has something in flight, shared by the thread that serves it and the accept
/// thread, which at the connection cap closes the connection idle longest to admit a newcomer.
final class ConnectionActivity: Sendable {
    /// Positive: idle since this many monotonic nanoseconds; 0: busy; -1: being evicted.
    private let state: Atomic<Int64>

    init() { state = Atomic(Self.now()) }

    static func now() -> Int64 { Int64(bitPattern: DispatchTime.now().uptimeNanoseconds) | 1 }

    /// The serving thread takes the connection; false when the accept thread is evicting it.
    func begin() -> Bool {
        var current = state.load(ordering: .relaxed)
        while current != -1 {
            let (exchanged, original) = state.compareExchange(expected: current, desired: 0, ordering: .acquiringAndReleasing)
            if exchanged { return true }
            current = original
        }
        return false
    }

    /// Nothing in flight any more.
    func idle() {
        _ = state.compareExchange(expected: 0, desired: Self.now(), ordering: .acquiringAndReleasing)
    }

    /// Idle since when (nil when busy or already being evicted).
    var idleSince: Int64? {
        let value = state.load(ordering: .relaxed)
        return value > 0 ? value : nil
    }

    /// Claims an idle connection for eviction; false if it became busy meanwhile.
    func claim(idleSince: Int64) -> Bool {
        state.compareExchange(expected: idleSince, desired: -1, ordering: .acquiringAndReleasing).exchanged
    }

    var isEvicting: Bool { state.load(ordering: .relaxed) == -1 }
}

/// Why a serving thread closed a connection on its own, counted for `/metrics`.
enum CloseReason {
    case idle, headTimeout, requestTimeout
}

/// The listener, the open connections and the handler, shared by the accept thread and the
/// connection threads (which keep it alive until they finish, independently of `HTTPServer`).
final class ServerCore: @unchecked Sendable {
    enum Respond {
        case async(HTTPServer.Handler)
        case synchronous(HTTPServer.SynchronousHandler)
        case deferring(HTTPServer.DeferringHandler)
    }

    enum Phase: UInt8 {
        case serving, draining, stopped
    }

    private let listener: Int32
    /// How often the listener was shut down (once at most; see `Shared`).
    var listenerShutdownCount: Int { shared.withLock { $0.listenerShutdowns } }
    let configuration: HTTPServerConfiguration
    /// Serving, draining (answers carry `Connection: close`, no new request is read) or stopped;
    /// changed only inside `shared`'s lock, read anywhere without it.
    private let phaseValue = Atomic<UInt8>(Phase.serving.rawValue)
    private let respond: Respond
    private let tls: Mutex<TLSContext?>
    /// What the accept thread, the serving threads and `stop`/`drain` share, behind one lock.
    private struct Shared {
        /// The listening socket is shut down once (which wakes the accept thread), then closed by the
        /// accept thread: shutting it down again could cut a socket that has since been given its number.
        var listenerShutdowns = 0
        var listenerClosed = false
        /// The event loops that serve connections, when the configuration asks for them.
        var loops: [HTTPEventLoop] = []
        var nextLoop = 0
        var connections: [Int32: ConnectionActivity] = [:]
        /// Connections between the first byte of a request and the end of its answer.
        var busy: Set<Int32> = []
        /// Evicted connections that their thread has not closed yet; they no longer count toward the cap.
        var evicting = 0
    }
    private let shared = Mutex(Shared())
    private let closedIdle = Atomic<Int>(0)
    private let closedHeadTimeout = Atomic<Int>(0)
    private let closedRequestTimeout = Atomic<Int>(0)
    private let evictedCount = Atomic<Int>(0)
    private let refusedCount = Atomic<Int>(0)

    init(listener: Int32, configuration: HTTPServerConfiguration, respond: Respond) {
        self.listener = listener
        self.configuration = configuration
        self.respond = respond
        tls = Mutex(configuration.tls)
    }

    /// Whether the server takes new requests; read without a lock on every answer.
    var phase: Phase { Phase(rawValue: phaseValue.load(ordering: .acquiring)) ?? .stopped }

    var currentTLS: TLSContext? { tls.withLock { $0 } }

    /// An event loop closed one of its connections.
    func closed(_ connection: Int32) {
        shared.withLock { shared in
            if let activity = shared.connections.removeValue(forKey: connection), activity.isEvicting { shared.evicting -= 1 }
            shared.busy.remove(connection)
        }
    }

    /// A serving thread closes a connection that passed a timeout.
    func count(_ reason: CloseReason) {
        switch reason {
        case .idle: closedIdle.add(1, ordering: .relaxed)
        case .headTimeout: closedHeadTimeout.add(1, ordering: .relaxed)
        case .requestTimeout: closedRequestTimeout.add(1, ordering: .relaxed)
        }
    }

    var statistics: HTTPServerStatistics {
        let (open, idle) = shared.withLock { shared in
            (shared.connections.count, shared.connections.values.filter { $0.idleSince != nil }.count)
        }
        return HTTPServerStatistics(openConnections: open, idleConnections: idle, closedIdle: closedIdle.load(ordering: .relaxed),
                             closedHeadTimeout: closedHeadTimeout.load(ordering: .relaxed),
                             closedRequestTimeout: closedRequestTimeout.load(ordering: .relaxed),
                             evicted: evictedCount.load(ordering: .relaxed), refused: refusedCount.load(ordering: .relaxed))
    }

    /// At the cap: shuts down the connection idle longest, whose thread then closes it. Called
    /// inside the lock; false when every connection is busy.
    private func evictLongestIdle(_ shared: inout Shared) -> Bool {
        for _ in 0..<4 {
            var victim: (descriptor: Int32, activity: ConnectionActivity, since: Int64)?
            for (descriptor, activity) in shared.connections {
                if let since = activity.idleSince, since < victim?.since ?? .max { victim = (descriptor, activity, since) }
            }
            guard let victim else { return false }
            if victim.activity.claim(idleSince: victim.since) {
                _ = shutdown(victim.descriptor, Int32(SHUT_RDWR))
                shared.evicting += 1
                evictedCount.add(1, ordering: .relaxed)
                return true
            }
        }
        return false
    }

    func start() throws(HTTPError) {
        #if os(Linux)
        if configuration.eventLoops > 0 {
            var created: [HTTPEventLoop] = []
            for index in 0..<configuration.eventLoops {
                let loop = try HTTPEventLoop(core: self)
                loop.start(name: "rs-http-loop-\(index)")
                created.append(loop)
            }
            shared.withLock { $0.loops = created }
        }
        #endif
        let thread = Thread { [self] in
            ThreadName.setCurrent("rs-http-accept")
            acceptLoop()
        }
        thread.start()
    }

    var openConnections: Int { shared.withLock { $0.connections.count } }

    func replaceTLS(_ context: TLSContext) {
        tls.withLock { current in
            if current != nil { current = context }
        }
    }

    func stop() {
        shared.withLock { shared in
            guard phase != .stopped else { return }
            phaseValue.store(Phase.stopped.rawValue, ordering: .releasing)
            // shutdown wakes the threads blocked in accept and recv; each closes its own descriptor.
            shutListener(&shared)
            for connection in shared.connections.keys {
                _ = shutdown(connection, Int32(SHUT_RDWR))
            }
        }
        nudgeLoops()
        shared.withLock { $0.loops.removeAll() }
    }

    private func nudgeLoops() {
        for loop in shared.withLock({ $0.loops }) { loop.nudge() }
    }

    /// The loop for a new connection, in turn; nil when each connection gets its own thread.
    private func loopForNewConnection() -> HTTPEventLoop? {
        shared.withLock { shared in
            guard !shared.loops.isEmpty else { return nil }
            shared.nextLoop = (shared.nextLoop + 1) % shared.loops.count
            return shared.loops[shared.nextLoop]
        }
    }

    func drain(timeout: Double) -> Bool {
        shared.withLock { shared in
            guard phase == .serving else { return }
            phaseValue.store(Phase.draining.rawValue, ordering: .releasing)
            shutListener(&shared)
            // Idle connections close now; busy ones finish their request and close after answering.
            // Event loops know which of theirs are idle, and close them when nudged.
            if shared.loops.isEmpty {
                for connection in Set(shared.connections.keys).subtracting(shared.busy) {
                    _ = shutdown(connection, Int32(SHUT_RD))
                }
            }
        }
        nudgeLoops()
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        // A request still arriving after requestTimeout would be cut off anyway; stop reading it.
        var lateReaders: ContinuousClock.Instant? = .now + .milliseconds(Int(configuration.requestTimeout * 1000))
        var drained = false
        while ContinuousClock.now < deadline {
            if shared.withLock({ $0.connections.isEmpty }) {
                drained = true
                break
            }
            if let late = lateReaders, ContinuousClock.now >= late {
                shared.withLock { shared in
                    for connection in shared.connections.keys { _ = shutdown(connection, Int32(SHUT_RD)) }
                }
                lateReaders = nil
            }
            usleep(5_000)
        }
        stop()
        return drained
    }

    /// Wakes the accept thread; called inside the lock.
    private func shutListener(_ shared: inout Shared) {
        guard shared.listenerShutdowns == 0, !shared.listenerClosed else { return }
        _ = shutdown(listener, Int32(SHUT_RDWR))
        shared.listenerShutdowns += 1
    }

    private func acceptLoop() {
        defer {
            shared.withLock { shared in
                shared.listenerClosed = true
                close(listener)
            }
        }
        while true {
            let connection = accept(listener, nil, nil)
            if connection < 0 {
                if phase != .serving { return }
                if errno == EINTR || errno == ECONNABORTED { continue }
                // Out of descriptors or memory: wait a little rather than spin.
                usleep(10_000)
                continue
            }
            enum Admission { case serve(ConnectionActivity), refuse, stop }
            let admission: Admission = shared.withLock { shared in
                if phase != .serving { return .stop }
                if shared.connections.count - shared.evicting >= configuration.maxConnections, !evictLongestIdle(&shared) { return .refuse }
                let activity = ConnectionActivity()
                shared.connections[connection] = activity
                return .serve(activity)
            }
            switch admission {
            case .stop:
                close(connection)
                return
            case .refuse:
                refusedCount.add(1, ordering: .relaxed)
                if tls.withLock({ $0 }) == nil {
                    _ = write(HTTPResponse(status: 503, body: Data("Too many connections.\n".utf8)), to: .plain(connection),
                              keepAlive: false, omitBody: false)
                }
                close(connection)
            case .serve(let activity):
                configure(connection)
                if let loop = loopForNewConnection() {
                    loop.adopt(connection, activity: activity)
                    continue
                }
                let thread = Thread { [self] in
                    ThreadName.setCurrent(Self.connectionThreadName)
                    serve(connection, activity: activity)
                }
                thread.stackSize = 512 * 1024
                thread.start()
            }
        }
    }

    private func configure(_ connection: Int32) {
        SocketPlatform.configureConnection(connection)
        var timeout = timeval(seconds: configuration.writeTimeout)
        _ = setsockopt(connection, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// The system-level name of connection threads (at most 15 bytes, as Linux allows), which
    /// `top -H`, a debugger and the tests see.
    static let connectionThreadName = "rs-http-conn"


    private func serve(_ connection: Int32, activity: ConnectionActivity) {
        var session: TLSSession?
        defer {
            session?.close()
            closed(connection)
            close(connection)
        }
        let io: ConnectionIO
        if let context = tls.withLock({ $0 }) {
            var timeout = timeval(seconds: configuration.headTimeout)
            _ = setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            guard let started = try? context.session(descriptor: connection), started.accept() else {
                if !activity.isEvicting { count(.headTimeout) }
                return
            }
            session = started
            io = .tls(started, connection)
        } else {
            io = .plain(connection)
        }
        var reader = RequestReader(io: io, configuration: configuration, requestStarted: { [self] in
            guard activity.begin() else { return false }
            shared.withLock { _ = $0.busy.insert(connection) }
            return true
        })
        while phase != .stopped {
            switch reader.next() {
            case .closed(let reason):
                if let reason, !activity.isEvicting { count(reason) }
                return
            case .refused(let status, let message):
                _ = write(HTTPResponse(status: status, headers: [("Content-Type", "text/plain; charset=utf-8")],
                                       body: Data((message + "\n").utf8)),
                          to: io, keepAlive: false, omitBody: false)
                return
            case .request(let request, let keepAlive):
                guard let response = answer(request) else { return }
                let keep = keepAlive && phase == .serving
                guard write(response, to: io, keepAlive: keep, omitBody: request.method == "HEAD"), keep else { return }
                shared.withLock { _ = $0.busy.remove(connection) }
                activity.idle()
            }
        }
    }

    /// An event loop's answer: a deferring handler may answer later through the responder `later` makes.
    func answer(_ request: HTTPServerRequest, later: () -> HTTPResponder) -> HTTPAnswer {
        if case .deferring(let handler) = respond { return handler(request, later) }
        return .now(answer(request))
    }

    /// A connection thread's answer: it waits here for a deferred one, at most the request timeout.
    func answer(_ request: HTTPServerRequest) -> HTTPResponse? {
        switch respond {
        case .synchronous(let handler):
            return handler(request)
        case .deferring(let handler):
            let box = ResponseBox()
            let done = DispatchSemaphore(value: 0)
            let answer = handler(request) {
                HTTPResponder { response in
                    box.response = response
                    done.signal()
                }
            }
            switch answer {
            case .now(let response):
                return response
            case .later:
                guard done.wait(timeout: .now() + configuration.requestTimeout) == .success else { return nil }
                return box.response
            }
        case .async(let handler):
            if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *) {
                return CurrentThreadExecutor.run { await handler(request) }
            }
            // This is a dedicated connection thread, not one of Swift's pool threads, so blocking
            // here starves nothing (but the handler itself needs a pool thread).
            let box = ResponseBox()
            let done = DispatchSemaphore(value: 0)
            Task {
                box.response = await handler(request)
                done.signal()
            }
            done.wait()
            return box.response
        }
    }

    func write(_ response: HTTPResponse, to io: ConnectionIO, keepAlive: Bool, omitBody: Bool) -> Bool {
        io.send(Self.encode(response, keepAlive: keepAlive, omitBody: omitBody))
    }

    /// A response's bytes: its head with `Content-Length` (and `Connection: close`), then its body.
    static func encode(_ response: HTTPResponse, keepAlive: Bool, omitBody: Bool) -> [UInt8] {
        // Written as bytes into one buffer sized up front: every answer passes here.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(96 + response.headers.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 }
                              + (omitBody ? 0 : response.body.count))
        bytes.append(contentsOf: "HTTP/1.1 \(response.status) ".utf8)
        bytes.append(contentsOf: Self.reasonPhrase(response.status).utf8)
        bytes.append(contentsOf: [13, 10])
        for header in response.headers where !managedHeaders.contains(where: { HeaderName.matches(header.name, $0) })
            && HeaderName.isValid(name: header.name, value: header.value) {
            bytes.append(contentsOf: header.name.utf8)
            bytes.append(contentsOf: [58, 32])
            bytes.append(contentsOf: header.value.utf8)
            bytes.append(contentsOf: [13, 10])
        }
        bytes.append(contentsOf: "Content-Length: \(response.body.count)\r\n".utf8)
        if !keepAlive { bytes.append(contentsOf: "Connection: close\r\n".utf8) }
        bytes.append(contentsOf: [13, 10])
        if !omitBody { bytes.append(contentsOf: response.body) }
        return bytes
    }

    /// Headers the server writes itself; a handler's own are dropped.
    private static let managedHeaders = ["Content-Length", "Transfer-Encoding", "Connection"]

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
        case 408: "Request Timeout"
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

final class ResponseBox: @unchecked Sendable {
    var response: HTTPResponse?
}


