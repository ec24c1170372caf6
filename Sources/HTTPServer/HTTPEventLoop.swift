#if os(Linux)
import Basics
import CEventLoop
import Foundation
import Glibc
import HTTPCore
import Synchronization
import TLS

/// One thread that serves many connections: it waits on epoll for the sockets that can move, reads
/// what has arrived, answers each complete request on this thread, and writes without blocking.
/// Under load one wake-up serves many requests, where a thread per connection pays a sleep and a
/// wake-up for each; a handful of these threads (one per core) replace hundreds of connection
/// threads. Handlers must not block: a slow handler holds up every connection of its loop. One that
/// must wait defers its answer: the connection is parked (nothing more is read from it) until the
/// answer arrives from another thread through the loop's mailbox.
final class HTTPEventLoop: @unchecked Sendable {
    private let core: ServerCore
    private let epoll: Int32
    private let wake: Int32
    private let incoming = Mutex<[(Int32, ConnectionActivity)]>([])
    /// Deferred answers delivered from other threads, taken by the loop when it wakes.
    private let answered = Mutex<[DeferredAnswer]>([])
    private struct DeferredAnswer {
        var descriptor: Int32
        var serial: UInt64
        /// Which of the connection's responders gave it: one made but not used answers nothing.
        var ticket: UInt64
        var response: HTTPResponse?
    }
    // Owned by the loop's thread alone.
    private var connections: [Int32: LoopConnection] = [:]
    private var nextSerial: UInt64 = 0
    private var scratch = [UInt8](repeating: 0, count: 64 * 1024)
    private var nextSweep = ContinuousClock.now

    init(core: ServerCore) throws(HTTPError) {
        self.core = core
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        wake = eventfd(0, Int32(EFD_CLOEXEC) | Int32(EFD_NONBLOCK))
        guard epoll >= 0, wake >= 0 else {
            throw HTTPError(.other, "cannot create an event loop: \(String(cString: strerror(errno)))")
        }
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.fd = wake
        _ = epoll_ctl(epoll, EPOLL_CTL_ADD, wake, &event)
    }

    deinit {
        close(epoll)
        close(wake)
    }

    func start(name: String) {
        let thread = Thread { [self] in
            ThreadName.setCurrent(name)
            run()
        }
        thread.stackSize = 1024 * 1024
        thread.start()
    }

    /// Gives the loop a new connection (from the accepting thread).
    func adopt(_ descriptor: Int32, activity: ConnectionActivity) {
        incoming.withLock { $0.append((descriptor, activity)) }
        nudge()
    }

    /// Wakes the loop so it looks at the server's state (stopping, draining).
    func nudge() {
        var one: UInt64 = 1
        _ = write(wake, &one, 8)
    }

    private func run() {
        var events = [epoll_event](repeating: epoll_event(), count: 128)
        while true {
            let phase = core.phase
            if phase == .stopped {
                for connection in Array(connections.values) { shut(connection) }
                for (descriptor, _) in incoming.withLock({ list in defer { list.removeAll() }; return list }) {
                    core.closed(descriptor)
                    close(descriptor)
                }
                return
            }
            if phase == .draining {
                // Bytes already waiting in a socket are a request in flight: read them first, so
                // only connections with nothing sent are closed as idle.
                for connection in Array(connections.values) where connection.isIdle {
                    service(connection, woken: .now)
                    if connection.isIdle { shut(connection) }
                }
            }
            let count = events.withUnsafeMutableBufferPointer { epoll_wait(epoll, $0.baseAddress, Int32($0.count), 250) }
            // What arrived by now has been waiting since now at the latest, however long this batch takes.
            let woken = ContinuousClock.now
            for index in 0..<max(Int(count), 0) {
                let descriptor = events[index].data.fd
                if descriptor == wake {
                    var value: UInt64 = 0
                    _ = read(wake, &value, 8)
                    for (adopted, activity) in incoming.withLock({ list in defer { list.removeAll() }; return list }) {
                        register(adopted, activity: activity, woken: woken)
                    }
                    for answer in answered.withLock({ list in defer { list.removeAll() }; return list }) {
                        complete(answer)
                    }
                } else if let connection = connections[descriptor] {
                    // A parked connection watches nothing, yet epoll always reports a hang-up or an
                    // error: the answer can no longer be delivered, so the connection goes now.
                    if connection.awaiting != nil, events[index].events & (EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0 {
                        shut(connection)
                        continue
                    }
                    service(connection, woken: woken)
                }
            }
            sweepTimeouts()
        }
    }

    private func register(_ descriptor: Int32, activity: ConnectionActivity, woken: ContinuousClock.Instant) {
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        let configuration = core.configuration
        nextSerial += 1
        let connection = LoopConnection(descriptor: descriptor, serial: nextSerial, activity: activity, parser: HTTPRequestParser(
            maxHeaderSize: configuration.maxHeaderSize, maxBodySize: configuration.maxBodySize))
        connection.headDeadline = .now + .seconds(configuration.headTimeout)
        if let context = core.currentTLS {
            guard let session = try? context.session(descriptor: descriptor) else {
                core.closed(descriptor)
                close(descriptor)
                return
            }
            session.useNonBlockingSocket()
            connection.tls = session
            connection.handshaking = true
        }
        connection.deadline = connection.headDeadline!
        var event = epoll_event()
        event.events = EPOLLIN.rawValue | EPOLLRDHUP.rawValue
        event.data.fd = descriptor
        guard epoll_ctl(epoll, EPOLL_CTL_ADD, descriptor, &event) == 0 else {
            core.closed(descriptor)
            close(descriptor)
            return
        }
        connections[descriptor] = connection
        service(connection, woken: woken)
    }

    /// Moves one connection as far as it can go without waiting. While it does, the accept thread
    /// cannot evict it; an evicted connection is closed here instead of read.
    private func service(_ connection: LoopConnection, woken: ContinuousClock.Instant) {
        guard connection.activity.begin() else { return shut(connection) }
        advance(connection, woken: woken)
        if connection.isEvictable { connection.activity.idle() }
    }

    /// When an idle connection is closed: a new one still owes its first request head.
    private func idleDeadline(_ connection: LoopConnection) -> ContinuousClock.Instant {
        connection.headDeadline ?? .now + .seconds(core.configuration.idleTimeout)
    }

    private func advance(_ connection: LoopConnection, woken: ContinuousClock.Instant) {
        if connection.handshaking, let tls = connection.tls {
            switch tls.handshakeStep() {
            case .done:
                connection.handshaking = false
                connection.deadline = idleDeadline(connection)
            case .wantRead:
                return watch(connection, .read)
            case .wantWrite:
                return watch(connection, .write)
            case .closed:
                return shut(connection)
            }
        }
        let configuration = core.configuration
        let readLimit = configuration.maxHeaderSize + configuration.maxBodySize + 64 * 1024
        var readWantsWrite = false
        // Nothing more is read while answers wait to be written: a client that sends requests but
        // never reads its answers cannot make the server hold more than one socket buffer of them.
        reading: while connection.output.isEmpty && connection.awaiting == nil && !connection.peerClosed
                        && connection.parser.bufferedCount < readLimit {
            switch receive(connection) {
            case .moved(let count):
                scratch.withUnsafeBytes { connection.parser.append(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
                // A plain socket that gave less than it was asked for had nothing more: asking again
                // would only hear EAGAIN, a system call per request. Epoll is level-triggered, so
                // bytes (or an end) that arrive later wake the loop again. TLS may hold decrypted
                // bytes the socket no longer shows, so it reads on until it would block.
                if connection.tls == nil && count < scratch.count { break reading }
            case .wouldBlock(let writable):
                readWantsWrite = writable
                break reading
            case .closed:
                connection.peerClosed = true
            }
        }
        guard answerBuffered(connection, woken: woken) else { return }
        guard flush(connection) else { return }
        if connection.awaiting != nil {
            // Nothing more is read until the answer comes, so requests sent behind it keep their order.
            return watch(connection, connection.output.isEmpty ? .nothing : .write)
        }
        if connection.output.isEmpty {
            if connection.closeAfterFlush || connection.peerClosed || (core.phase != .serving && !connection.inRequest) {
                return shut(connection)
            }
            if !connection.inRequest { connection.deadline = idleDeadline(connection) }
        }
        watch(connection, !connection.output.isEmpty || readWantsWrite ? .write : .read)
    }

    /// Answers the complete requests read so far, up to one whose answer is deferred; false when
    /// the connection was closed instead.
    private func answerBuffered(_ connection: LoopConnection, woken: ContinuousClock.Instant) -> Bool {
        let configuration = core.configuration
        answering: while !connection.closeAfterFlush && connection.awaiting == nil {
            switch connection.parser.next() {
            case .request(var request, let keepAlive):
                request.receivedAt = woken
                connection.headDeadline = nil
                let awaited = LoopConnection.Awaited(keepAlive: keepAlive, omitBody: request.method == "HEAD")
                switch core.answer(request, later: { responder(for: connection) }) {
                case .now(let response?):
                    append(response, to: connection, as: awaited)
                case .now(nil):
                    shut(connection)
                    return false
                case .later:
                    // Until the answer comes, the connection is in a request: not idle for a drain
                    // or an eviction, and closed if the answer takes longer than the request timeout.
                    connection.awaiting = awaited
                    connection.awaiting?.ticket = connection.tickets
                    connection.inRequest = true
                    connection.requestStarted = .now
                    connection.deadline = .now + .seconds(configuration.requestTimeout)
                    break answering
                }
            case .needMore(let sendContinue):
                if sendContinue { connection.output += Array("HTTP/1.1 100 Continue\r\n\r\n".utf8) }
                if !connection.inRequest && connection.parser.isInsideRequest {
                    connection.inRequest = true
                    connection.requestStarted = .now
                    // A new connection keeps its head deadline; later requests get the request timeout.
                    connection.deadline = connection.headDeadline ?? .now + .seconds(configuration.requestTimeout)
                }
                if connection.headDeadline != nil, connection.inRequest, !connection.parser.isReadingHead {
                    connection.headDeadline = nil
                    connection.deadline = connection.requestStarted + .seconds(configuration.requestTimeout)
                }
                break answering
            case .refused(let status, let message):
                connection.output += ServerCore.encode(
                    HTTPResponse(status: status, headers: [("Content-Type", "text/plain; charset=utf-8")], body: Data((message + "\n").utf8)),
                    keepAlive: false, omitBody: false)
                connection.closeAfterFlush = true
            case .unreadable:
                shut(connection)
                return false
            }
        }
        return true
    }

    private func append(_ response: HTTPResponse, to connection: LoopConnection, as awaited: LoopConnection.Awaited) {
        let keep = awaited.keepAlive && core.phase == .serving
        connection.output += ServerCore.encode(response, keepAlive: keep, omitBody: awaited.omitBody)
        connection.inRequest = false
        if !keep { connection.closeAfterFlush = true }
    }

    /// Answers the connection's deferred request from any thread, through the loop's mailbox.
    private func responder(for connection: LoopConnection) -> HTTPResponder {
        connection.tickets += 1
        let descriptor = connection.descriptor, serial = connection.serial, ticket = connection.tickets
        return HTTPResponder { [self] response in
            answered.withLock { $0.append(DeferredAnswer(descriptor: descriptor, serial: serial, ticket: ticket, response: response)) }
            nudge()
        }
    }

    /// Writes a deferred answer and takes the connection up where it stopped. An answer for a
    /// connection that has closed meanwhile (its number perhaps reused: the serial tells) is dropped.
    private func complete(_ answer: DeferredAnswer) {
        guard let connection = connections[answer.descriptor], connection.serial == answer.serial,
              let awaited = connection.awaiting, awaited.ticket == answer.ticket else { return }
        connection.awaiting = nil
        guard let response = answer.response else { return shut(connection) }
        append(response, to: connection, as: awaited)
        service(connection, woken: .now)
    }

    /// Writes what the socket takes now; false when the connection was closed.
    private func flush(_ connection: LoopConnection) -> Bool {
        var sent = 0
        defer {
            if sent > 0 { connection.output.removeFirst(sent) }
        }
        while sent < connection.output.count {
            let step = connection.output.withUnsafeBytes { bytes in
                send(connection, UnsafeRawBufferPointer(rebasing: bytes[sent...]))
            }
            switch step {
            case .moved(let count):
                sent += count
            case .wouldBlock:
                if connection.interest != .write {
                    connection.deadline = .now + .seconds(core.configuration.writeTimeout)
                }
                return true
            case .closed:
                shut(connection)
                return false
            }
        }
        return true
    }

    /// Waits for the socket to take more (answers pending, or TLS needs to write) or else for it to
    /// have more to read; never both, so a client that does not read cannot keep the loop spinning.
    /// A connection parked for a deferred answer with nothing to write waits for neither.
    private func watch(_ connection: LoopConnection, _ interest: LoopConnection.Interest) {
        guard interest != connection.interest else { return }
        connection.interest = interest
        var event = epoll_event()
        event.events = switch interest {
        case .read: EPOLLIN.rawValue | EPOLLRDHUP.rawValue
        case .write: EPOLLOUT.rawValue
        case .nothing: 0
        }
        event.data.fd = connection.descriptor
        _ = epoll_ctl(epoll, EPOLL_CTL_MOD, connection.descriptor, &event)
    }

    private func shut(_ connection: LoopConnection) {
        guard connections.removeValue(forKey: connection.descriptor) != nil else { return }
        _ = epoll_ctl(epoll, EPOLL_CTL_DEL, connection.descriptor, nil)
        connection.tls?.close()
        core.closed(connection.descriptor)
        close(connection.descriptor)
    }

    /// Closes connections past their deadline: idle too long, a request too slow, a write stuck.
    private func sweepTimeouts() {
        let now = ContinuousClock.now
        guard now >= nextSweep else { return }
        nextSweep = now + .milliseconds(100)
        for connection in Array(connections.values) where connection.deadline < now {
            let reason: CloseReason = connection.headDeadline != nil ? .headTimeout
                : (connection.isIdle ? .idle : .requestTimeout)
            core.count(reason)
            shut(connection)
        }
    }

    private enum IOStep {
        case moved(Int)
        case wouldBlock(writable: Bool)
        case closed
    }

    private func receive(_ connection: LoopConnection) -> IOStep {
        scratch.withUnsafeMutableBytes { buffer in
            if let tls = connection.tls { return Self.step(tls.readStep(into: buffer)) }
            while true {
                let received = recv(connection.descriptor, buffer.baseAddress, buffer.count, 0)
                if received > 0 { return .moved(received) }
                if received < 0 && errno == EINTR { continue }
                if received < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return .wouldBlock(writable: false) }
                return .closed
            }
        }
    }

    private func send(_ connection: LoopConnection, _ bytes: UnsafeRawBufferPointer) -> IOStep {
        if let tls = connection.tls { return Self.step(tls.writeStep(bytes)) }
        while true {
            let sent = SocketPlatform.send(connection.descriptor, bytes.baseAddress, bytes.count)
            if sent > 0 { return .moved(sent) }
            if sent < 0 && errno == EINTR { continue }
            if sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return .wouldBlock(writable: true) }
            return .closed
        }
    }

    private static func step(_ step: TLSStep) -> IOStep {
        switch step {
        case .done(let count): count > 0 ? .moved(count) : .wouldBlock(writable: false)
        case .wantRead: .wouldBlock(writable: false)
        case .wantWrite: .wouldBlock(writable: true)
        case .closed: .closed
        }
    }
}

/// One connection of an event loop, touched only by that loop's thread.
final class LoopConnection {
    let descriptor: Int32
    /// Tells this connection from a later one given the same descriptor.
    let serial: UInt64
    let activity: ConnectionActivity
    var parser: HTTPRequestParser
    /// Until the first request's head is complete: when a new connection is closed for sending none.
    var headDeadline: ContinuousClock.Instant?
    var requestStarted = ContinuousClock.now
    var tls: TLSSession?
    var handshaking = false
    /// Answers (and `100 Continue`) not yet taken by the socket.
    var output: [UInt8] = []
    var closeAfterFlush = false
    var peerClosed = false
    /// Between a request's first byte and its answer.
    var inRequest = false
    /// What epoll watches the socket for.
    var interest = Interest.read
    enum Interest { case read, write, nothing }
    /// A request whose answer a deferring handler gives later, and how to write that answer.
    var awaiting: Awaited?
    struct Awaited {
        var keepAlive: Bool
        var omitBody: Bool
        /// The responder whose answer this is: the last one the handler took.
        var ticket: UInt64 = 0
    }
    /// Responders made for this connection's requests so far.
    var tickets: UInt64 = 0
    /// When the connection is closed unless it moves: the idle, request or write timeout.
    var deadline = ContinuousClock.now

    init(descriptor: Int32, serial: UInt64, activity: ConnectionActivity, parser: HTTPRequestParser) {
        self.descriptor = descriptor
        self.serial = serial
        self.activity = activity
        self.parser = parser
    }

    /// Nothing in flight: no request being read, nothing left to write.
    var isIdle: Bool { !inRequest && output.isEmpty && !handshaking }
    /// May be closed to admit a newcomer at the cap: no request bytes, nothing to write (a TLS
    /// handshake that has not produced a request yet counts as nothing).
    var isEvictable: Bool { !inRequest && output.isEmpty }
}
#else
/// Event loops wait on epoll, which only Linux has; elsewhere none is made and every connection
/// gets a thread of its own.
final class HTTPEventLoop: Sendable {
    func nudge() {}
    func adopt(_ descriptor: Int32, activity: ConnectionActivity) {}
}
#endif
