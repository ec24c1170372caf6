import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HTTPCore
import HTTPServer
import Testing
import TestSupport

/// Sends raw bytes on one TCP connection and reads until the server closes it, on its own thread.
func rawExchange(port: UInt16, _ text: String) async throws -> String {
    try await LoopbackConnection.exchange(port: port, text)
}

/// Sends `start`, then `more` up to `times` times with `pause` microseconds between, never finishing
/// the request; returns how many times `more` went out before the server closed the connection,
/// nil if it never did. Runs on its own thread: the server's handler needs the concurrency pool.
private func sendUntilClosed(port: UInt16, _ start: String, _ more: String, times: Int, pause: UInt32 = 0) async throws -> Int? {
    try await withCheckedThrowingContinuation { continuation in
        Thread {
            continuation.resume(with: Result {
                let connection = try LoopbackConnection(port: port)
                let descriptor = connection.descriptor
                for count in 0...times {
                    let bytes = Array((count == 0 ? start : more).utf8)
                    let sent = bytes.withUnsafeBytes { SocketPlatform.send(descriptor, $0.baseAddress, $0.count) }
                    var probe: UInt8 = 0
                    let peeked = recv(descriptor, &probe, 1, Int32(MSG_DONTWAIT))
                    let reset = peeked < 0 && errno != EAGAIN && errno != EWOULDBLOCK
                    if sent <= 0 || peeked == 0 || reset { return count }
                    usleep(pause)
                }
                return nil
            })
        }.start()
    }
}

@Suite("HTTPServer")
struct HTTPServerTests {
    @Test("listening on a non-loopback address is refused")
    func refusesNonLoopback() {
        #expect(throws: HTTPError.self) { try HTTPServer(host: "0.0.0.0", handler: echo) }
        do {
            _ = try HTTPServer(host: "0.0.0.0", handler: echo)
        } catch {
            #expect(error.kind == .invalidRequest)
            #expect(error.message.contains("loopback"))
        }
    }

    @Test("port 0 binds an ephemeral port and reports it in the base URL", arguments: ServerModel.allCases)
    func ephemeralPort(model: ServerModel) throws {
        let server = try HTTPServer(configuration: model.configuration(), handler: echo)
        #expect(server.port != 0)
        #expect(server.baseURL.absoluteString == "http://127.0.0.1:\(server.port)")
    }

    @Test("IPv6 loopback is accepted and bracketed in the base URL", arguments: ServerModel.allCases)
    func ipv6Loopback(model: ServerModel) throws {
        let server = try HTTPServer(host: "::1", configuration: model.configuration(), handler: echo)
        #expect(server.baseURL.absoluteString == "http://[::1]:\(server.port)")
    }

    @Test("keep-alive serves several requests on one connection, and a chunked body is decoded", arguments: ServerModel.allCases)
    func keepAliveAndChunked(model: ServerModel) async throws {
        let server = try HTTPServer(configuration: model.configuration(), handler: echo)
        let reply = try await rawExchange(port: server.port, """
            PUT /first HTTP/1.1\r
            Host: 127.0.0.1\r
            Content-Length: 5\r
            \r
            helloPOST /second HTTP/1.1\r
            Host: 127.0.0.1\r
            Transfer-Encoding: chunked\r
            Connection: close\r
            \r
            3\r
            abc\r
            4;ext=1\r
            defg\r
            0\r
            \r

            """)
        #expect(reply.components(separatedBy: "HTTP/1.1 200 OK\r\n").count == 3)
        #expect(reply.contains("X-Path: /first\r\n"))
        #expect(reply.contains("Content-Length: 5\r\n\r\nhello"))
        #expect(reply.contains("X-Path: /second\r\n"))
        #expect(reply.hasSuffix("Connection: close\r\n\r\nabcdefg"))
    }

    @Test("a client that pipelines 100 requests before reading gets all 100 large answers, in order", arguments: ServerModel.allCases)
    func pipelinedLargeAnswers(model: ServerModel) async throws {
        // 6.4 MB of answers is more than the socket buffers hold, so the server must wait for the
        // client to read before it writes (and reads) more.
        let server = try HTTPServer(configuration: model.configuration()) { request in
            HTTPResponse(status: 200, headers: [("X-Path", request.path)], body: Data(repeating: UInt8(ascii: "x"), count: 64 * 1024))
        }
        let requests = (0..<100).map { "GET /\($0) HTTP/1.1\r\nHost: x\r\n\($0 == 99 ? "Connection: close\r\n" : "")\r\n" }.joined()
        let reply = try await rawExchange(port: server.port, requests)
        let paths = reply.components(separatedBy: "X-Path: ").dropFirst().map { $0.prefix { $0 != "\r\n" } }
        #expect(paths == (0..<100).map { "/\($0)"[...] })
        #expect(reply.utf8.count > 100 * 64 * 1024)
    }

    @Test("a body over the size limit is answered with 413", arguments: ServerModel.allCases)
    func oversizedBody(model: ServerModel) async throws {
        let server = try HTTPServer(configuration: model.configuration(), handler: echo)
        let reply = try await rawExchange(port: server.port,
                                    "PUT /big HTTP/1.1\r\nHost: x\r\nContent-Length: \(HTTPServer.maxBodySize + 1)\r\n\r\n")
        #expect(reply.hasPrefix("HTTP/1.1 413 "))
    }

    @Test("a chunk size near Int.max after a first chunk is answered with 413, and the server keeps serving", arguments: ServerModel.allCases)
    func hugeChunkSize(model: ServerModel) async throws {
        let server = try HTTPServer(configuration: model.configuration(), handler: echo)
        let reply = try await rawExchange(port: server.port,
                                          "PUT /big HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n7fffffffffffffff\r\n")
        #expect(reply.hasPrefix("HTTP/1.1 413 "))
        let next = try await rawExchange(port: server.port, "GET /still HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(next.hasPrefix("HTTP/1.1 200 "))
    }

    @Test("a client that sends its request head a line at a time, forever, is disconnected", arguments: ServerModel.allCases)
    func slowClientIsCut(model: ServerModel) async throws {
        // A new connection's head must be complete within its head timeout: 1 s here, a tenth of the
        // 10 s the client dribbles for (the default 10 s would make the two race).
        var configuration = model.configuration(requestTimeout: 0.5)
        configuration.headTimeout = 1
        let server = try HTTPServer(configuration: configuration, handler: echo)
        let linesSentBeforeClose = try await sendUntilClosed(port: server.port, "GET / HTTP/1.1\r\n", "X-Slow: 1\r\n",
                                                             times: 200, pause: 50_000)
        #expect(linesSentBeforeClose != nil, "the server kept the connection open for 10 seconds of dribbled headers")
    }

    @Test("a chunked request that never stops sending trailer lines is cut off", arguments: ServerModel.allCases)
    func endlessTrailers(model: ServerModel) async throws {
        let server = try HTTPServer(configuration: model.configuration(), handler: echo)
        let trailers = String(repeating: "X-Trailer: " + String(repeating: "t", count: 4000) + "\r\n", count: 16)
        let blocksSentBeforeClose = try await sendUntilClosed(
            port: server.port, "PUT / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n", trailers,
            times: 4 * HTTPServer.maxBodySize / trailers.utf8.count)
        #expect(blocksSentBeforeClose != nil, "the server read four times the body limit of trailer lines")
    }

    @Test("a malformed request line is answered with 400", arguments: ServerModel.allCases)
    func malformedRequest(model: ServerModel) async throws {
        let server = try HTTPServer(configuration: model.configuration(), handler: echo)
        let reply = try await rawExchange(port: server.port, "NONSENSE\r\n\r\n")
        #expect(reply.hasPrefix("HTTP/1.1 400 "))
    }

    @Test("a HEAD answer carries the length but no body", arguments: ServerModel.allCases)
    func headRequest(model: ServerModel) async throws {
        let server = try HTTPServer(configuration: model.configuration()) { _ in HTTPResponse(status: 200, body: Data("twelve bytes".utf8)) }
        let reply = try await rawExchange(port: server.port, "HEAD / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(reply.hasSuffix("Content-Length: 12\r\nConnection: close\r\n\r\n"))
    }
}
