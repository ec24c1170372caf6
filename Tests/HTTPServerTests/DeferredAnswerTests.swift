import Foundation
import HTTPCore
import HTTPServer
import Synchronization
import Testing
import TestSupport

/// Responders handed out by a deferring handler, for the test to answer from its own thread.
private final class Parked: Sendable {
    private let waiting = Mutex<[(path: String, responder: HTTPResponder)]>([])
    private let arrived = DispatchSemaphore(value: 0)

    func park(_ path: String, _ responder: HTTPResponder) {
        waiting.withLock { $0.append((path, responder)) }
        arrived.signal()
    }

    /// Waits (on the calling thread) until `count` requests have been parked; false after 900 s.
    func awaitParked(_ count: Int) -> Bool {
        for _ in 0..<count where arrived.wait(timeout: .now() + 900) == .timedOut { return false }
        return true
    }

    func take(_ path: String) -> HTTPResponder? {
        waiting.withLock { list in
            guard let index = list.firstIndex(where: { $0.path == path }) else { return nil }
            return list.remove(at: index).responder
        }
    }
}

/// One request sent and its answer read to the end on a thread of its own, so a busy concurrency pool
/// (the rest of the suite) cannot hold the client back while the server waits for it.
private final class ClientThread: Sendable {
    private let answer = Mutex<String?>(nil)
    private let done = DispatchSemaphore(value: 0)

    init(port: UInt16, _ text: String) {
        Thread { [self] in
            let connection = try? LoopbackConnection(port: port, timeout: 900)
            _ = connection?.send(text)
            let received = connection?.readToEnd() ?? ""
            connection?.close()
            answer.withLock { $0 = received }
            done.signal()
        }.start()
    }

    /// The answer (read to the connection's end); "" after 900 s.
    func result() -> String {
        guard done.wait(timeout: .now() + 900) == .success else { return "" }
        return answer.withLock { $0 } ?? ""
    }
}

/// A server whose handler answers `/now` at once and parks every other request.
private func deferringServer(_ model: ServerModel, parked: Parked, requestTimeout: Double = 900) throws -> HTTPServer {
    try HTTPServer(configuration: model.configuration(requestTimeout: requestTimeout), deferringHandler: { request, later in
        if request.path == "/now" { return .now(HTTPResponse(status: 200, body: Data("now".utf8))) }
        parked.park(request.path, later())
        return .later
    })
}

@Suite("A handler that answers later")
struct DeferredAnswerTests {
    @Test("an answer given later from another thread reaches the client, and other connections are served meanwhile",
          arguments: ServerModel.allCases)
    func answersLater(model: ServerModel) async throws {
        let parked = Parked()
        let server = try deferringServer(model, parked: parked)
        defer { server.stop() }
        let slow = ClientThread(port: server.port, "GET /wait HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(try await onOwnThread { parked.awaitParked(1) })
        // While /wait is parked, another connection is answered: the loop is not held.
        let other = try await onOwnThread { ClientThread(port: server.port, "GET /now HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").result() }
        #expect(other.hasPrefix("HTTP/1.1 200 ") && other.hasSuffix("now"))
        let responder = try #require(parked.take("/wait"))
        #expect(responder.respond(HTTPResponse(status: 201, body: Data("later".utf8))))
        #expect(!responder.respond(HTTPResponse(status: 500)), "a second answer is ignored")
        let answer = try await onOwnThread { slow.result() }
        #expect(answer.hasPrefix("HTTP/1.1 201 "))
        #expect(answer.hasSuffix("later"))
    }

    @Test("requests sent behind a deferred one on the same connection are answered after it, in order",
          arguments: ServerModel.allCases)
    func pipelinedKeepOrder(model: ServerModel) async throws {
        let parked = Parked()
        let server = try deferringServer(model, parked: parked)
        defer { server.stop() }
        let connection = try LoopbackConnection(port: server.port, timeout: 900)
        defer { connection.close() }
        _ = connection.send("GET /first HTTP/1.1\r\nHost: x\r\n\r\nGET /now HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(try await onOwnThread { parked.awaitParked(1) })
        try #require(parked.take("/first")).respond(HTTPResponse(status: 200, body: Data("first".utf8)))
        let both = try await onOwnThread { connection.readToEnd() }
        let first = try #require(both.range(of: "first")), second = try #require(both.range(of: "now"))
        #expect(first.lowerBound < second.lowerBound)
        #expect(both.components(separatedBy: "HTTP/1.1 200 ").count == 3)
    }

    @Test("a responder dropped without answering closes its connection instead of leaving it waiting",
          arguments: ServerModel.allCases)
    func droppedResponderCloses(model: ServerModel) async throws {
        let server = try HTTPServer(configuration: model.configuration(), deferringHandler: { _, later in
            _ = later()
            return .later
        })
        defer { server.stop() }
        let answer = try await onOwnThread { ClientThread(port: server.port, "GET /lost HTTP/1.1\r\nHost: x\r\n\r\n").result() }
        #expect(answer.isEmpty)
    }

    @Test("a responder taken but not used (the answer was given at once) does not close a later deferred request on the connection",
          arguments: ServerModel.allCases)
    func unusedResponderIsHarmless(model: ServerModel) async throws {
        let parked = Parked()
        let server = try HTTPServer(configuration: model.configuration(requestTimeout: 900), deferringHandler: { request, later in
            let responder = later()
            if request.path == "/now" { return .now(HTTPResponse(status: 200, body: Data("now".utf8))) }
            parked.park(request.path, responder)
            return .later
        })
        defer { server.stop() }
        let connection = try LoopbackConnection(port: server.port, timeout: 900)
        defer { connection.close() }
        _ = connection.send("GET /now HTTP/1.1\r\nHost: x\r\n\r\nGET /second HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(try await onOwnThread { parked.awaitParked(1) })
        // The first request's responder is gone by now; its "close" must not reach the second request.
        usleep(50_000)
        try #require(parked.take("/second")).respond(HTTPResponse(status: 200, body: Data("second".utf8)))
        let both = try await onOwnThread { connection.readToEnd() }
        #expect(both.hasSuffix("second"))
        #expect(both.components(separatedBy: "HTTP/1.1 200 ").count == 3)
    }

    @Test("a client that hangs up while its answer is deferred is let go once the answer comes", arguments: ServerModel.allCases)
    func hangUpWhileDeferred(model: ServerModel) async throws {
        let parked = Parked()
        let server = try deferringServer(model, parked: parked)
        defer { server.stop() }
        let connection = try LoopbackConnection(port: server.port, timeout: 900)
        _ = connection.send("GET /gone HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try await onOwnThread { parked.awaitParked(1) })
        connection.close()
        #expect(try #require(parked.take("/gone")).respond(HTTPResponse(status: 200)))
        let closed = try await onOwnThread { () -> Bool in
            for _ in 0..<2_000 where server.openConnections > 0 { usleep(10_000) }
            return server.openConnections == 0
        }
        #expect(closed)
        let after = try await onOwnThread { ClientThread(port: server.port, "GET /now HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").result() }
        #expect(after.hasSuffix("now"))
    }

    @Test("draining waits for a deferred answer and sends it with Connection: close", arguments: ServerModel.allCases)
    func drainWaitsForDeferred(model: ServerModel) async throws {
        let parked = Parked()
        let server = try deferringServer(model, parked: parked)
        let slow = ClientThread(port: server.port, "GET /wait HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try await onOwnThread { parked.awaitParked(1) })
        async let drained = onOwnThread { server.drain(timeout: 900) }
        let sawDraining = try await onOwnThread { () -> Bool in
            for _ in 0..<6_000 where !server.isDraining { usleep(5_000) }
            return server.isDraining
        }
        #expect(sawDraining)
        try #require(parked.take("/wait")).respond(HTTPResponse(status: 200, body: Data("done".utf8)))
        let answer = try await onOwnThread { slow.result() }
        #expect(answer.hasPrefix("HTTP/1.1 200 "))
        #expect(answer.contains("Connection: close"))
        #expect(try await drained)
    }
}
