import Foundation
import HTTPClient
import HTTPCore
import HTTPServer
import Testing
import TestSupport
import TLS

/// Runs the `openssl` command line tool; returns its exit status.
@discardableResult
func openssl(_ arguments: [String], in directory: URL) throws -> Int32 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["openssl"] + arguments
    process.currentDirectoryURL = directory
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    process.standardInput = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    return process.terminationStatus
}

/// A self-signed P-256 certificate for 127.0.0.1, made by the openssl tool in a new directory.
func makeServerCertificate(commonName: String = "127.0.0.1") throws -> (directory: URL, cert: String, key: String) {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tls-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let status = try openssl(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                              "-keyout", "key.pem", "-out", "cert.pem", "-days", "2", "-subj", "/CN=\(commonName)",
                              "-addext", "subjectAltName=IP:127.0.0.1"], in: directory)
    try #require(status == 0)
    return (directory, directory.appendingPathComponent("cert.pem").path, directory.appendingPathComponent("key.pem").path)
}

@Suite("HTTPServer facing the internet")
struct HTTPServerHardeningTests {
    @Test("two different Content-Length headers are answered with 400, identical ones are accepted", arguments: ServerModel.allCases)
    func conflictingContentLength(model: ServerModel) async throws {
        let server = try HTTPServer(configuration: model.configuration(), handler: echo)
        let conflicting = try await rawExchange(port: server.port,
            "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 5\r\n\r\nabcde")
        #expect(conflicting.hasPrefix("HTTP/1.1 400 "))
        let listed = try await rawExchange(port: server.port,
            "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 3, 5\r\n\r\nabcde")
        #expect(listed.hasPrefix("HTTP/1.1 400 "))
        let signed = try await rawExchange(port: server.port,
            "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: +3\r\nConnection: close\r\n\r\nabc")
        #expect(signed.hasPrefix("HTTP/1.1 400 "))
        let same = try await rawExchange(port: server.port,
            "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc")
        #expect(same.hasPrefix("HTTP/1.1 200 "))
        #expect(same.hasSuffix("\r\n\r\nabc"))
    }

    @Test("a body over a configured limit is refused with 413 before it is read", arguments: ServerModel.allCases)
    func configuredBodyLimit(model: ServerModel) async throws {
        let server = try HTTPServer(configuration: model.configuration(maxBodySize: 64 * 1024),
                                    synchronousHandler: { _ in HTTPResponse(status: 200) })
        let answer = try await rawExchange(port: server.port,
            "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: \(64 * 1024 + 1)\r\n\r\n")
        #expect(answer.hasPrefix("HTTP/1.1 413 "))
    }

    @Test("at the connection cap a newcomer is admitted by closing the connection idle longest", arguments: ServerModel.allCases)
    func connectionLimitEvictsIdle(model: ServerModel) async throws {
        // The idle timeout is far longer than any wait of a loaded suite: only eviction may close the holder.
        let server = try HTTPServer(configuration: model.configuration(maxConnections: 1, idleTimeout: 86_400),
                                    synchronousHandler: { _ in HTTPResponse(status: 200) })
        let holder = try HeldConnection(port: server.port)
        defer { holder.close() }
        // The held connection answers once, so it is surely admitted (and idle) before the second one arrives.
        #expect(try await onOwnThread { holder.exchange("GET / HTTP/1.1\r\nHost: x\r\n\r\n") }.hasPrefix("HTTP/1.1 200 "))
        // The answer can reach the client a moment before its server thread marks the connection idle.
        let deadline = ContinuousClock.now + .seconds(60)
        while server.statistics.idleConnections == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(server.statistics.idleConnections == 1)
        let admitted = try await rawExchange(port: server.port, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(admitted.hasPrefix("HTTP/1.1 200 "))
        #expect(try await onOwnThread { holder.readToEnd() }.isEmpty, "the idle connection was closed to make room")
        #expect(server.statistics.evicted == 1)
        #expect(server.statistics.refused == 0)
    }

    @Test("when every connection is busy, a newcomer is refused with 503 at once", arguments: ServerModel.allCases)
    func connectionLimitRefusesWhenBusy(model: ServerModel) async throws {
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let server = try HTTPServer(configuration: model.configuration(maxConnections: 1, idleTimeout: 120),
                                    synchronousHandler: { request in
            if request.path == "/slow" {
                started.signal()
                release.wait()
            }
            return HTTPResponse(status: 200)
        })
        // Its answer waits for this task to run again, which a starved concurrency pool (another test's
        // doing) can delay; the read allows for that.
        async let slow = LoopbackConnection.exchange(port: server.port, "GET /slow HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                                                     timeout: 120)
        await withCheckedContinuation { continuation in
            Thread { started.wait(); continuation.resume() }.start()
        }
        let refused = try await rawExchange(port: server.port, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(refused.hasPrefix("HTTP/1.1 503 "))
        #expect(server.statistics.refused == 1)
        #expect(server.statistics.evicted == 0)
        release.signal()
        let answer = try await slow
        #expect(answer.hasPrefix("HTTP/1.1 200 "), "\(answer)")
    }

    @Test("a connection that sends no request head within the head timeout is closed and counted", arguments: ServerModel.allCases)
    func headTimeout(model: ServerModel) async throws {
        var configuration = model.configuration(idleTimeout: 120)
        configuration.headTimeout = 0.3
        let server = try HTTPServer(configuration: configuration, synchronousHandler: { _ in HTTPResponse(status: 200) })
        let silent = try HeldConnection(port: server.port)
        defer { silent.close() }
        let partial = try HeldConnection(port: server.port)
        defer { partial.close() }
        partial.send("GET / HTTP/1.1\r\nHost:")
        #expect(try await onOwnThread { silent.readToEnd() }.isEmpty)
        #expect(try await onOwnThread { partial.readToEnd() }.isEmpty)
        #expect(server.statistics.closedHeadTimeout == 2)
        // A connection that sent its request in time is answered, then waits for the idle timeout instead.
        let answered = try HeldConnection(port: server.port)
        defer { answered.close() }
        #expect(try await onOwnThread { answered.exchange("GET / HTTP/1.1\r\nHost: x\r\n\r\n") }.hasPrefix("HTTP/1.1 200 "))
        // Silent connections opened after it are closed for their head timeout: by then the answered
        // connection's own head deadline, which began earlier, has passed. Two of them, one on each
        // event loop, so the loop that holds the answered connection has swept past that deadline.
        let later = try [HeldConnection(port: server.port), HeldConnection(port: server.port)]
        defer { later.forEach { $0.close() } }
        for connection in later { #expect(try await onOwnThread { connection.readToEnd() }.isEmpty) }
        #expect(server.statistics.closedHeadTimeout == 4)
        #expect(try await onOwnThread { answered.exchange("GET / HTTP/1.1\r\nHost: x\r\n\r\n") }.hasPrefix("HTTP/1.1 200 "))
    }

    @Test("draining answers the request in flight, closes idle connections and refuses new ones", arguments: ServerModel.allCases)
    func drainFinishesInFlight(model: ServerModel) async throws {
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let server = try HTTPServer(configuration: model.configuration(), synchronousHandler: { request in
            if request.path == "/slow" {
                started.signal()
                release.wait()
            }
            return HTTPResponse(status: 200, body: Data("done".utf8))
        })
        let idle = try HeldConnection(port: server.port)
        defer { idle.close() }
        #expect(try await onOwnThread { idle.exchange("GET /fast HTTP/1.1\r\nHost: x\r\n\r\n") }.hasPrefix("HTTP/1.1 200 "))
        // The answer waits for this task to run again; the read allows for a starved pool.
        async let slow = LoopbackConnection.exchange(port: server.port, "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n", timeout: 120)
        await withCheckedContinuation { continuation in
            Thread { started.wait(); continuation.resume() }.start()
        }
        async let drained = onOwnThread { server.drain(timeout: 30) }
        // The request in flight is let go once the server says it is draining, not after a guessed
        // pause; watched from a thread of its own, so a busy concurrency pool cannot delay it.
        let sawDraining = try await onOwnThread { () -> Bool in
            for _ in 0..<6_000 where !server.isDraining { usleep(5_000) }
            defer { release.signal() }
            return server.isDraining
        }
        #expect(sawDraining)
        let answer = try await slow
        #expect(answer.hasPrefix("HTTP/1.1 200 "))
        #expect(answer.contains("Connection: close"))
        #expect(answer.hasSuffix("done"))
        #expect(try await drained)
        #expect(try await onOwnThread { idle.readToEnd() }.isEmpty)
        await #expect(throws: LoopbackConnection.Refused.self) { try await rawExchange(port: server.port, "GET / HTTP/1.1\r\n\r\n") }
    }

    @Test("HTTPS with a certificate made by openssl serves TLS 1.2 and 1.3 and refuses TLS 1.1", arguments: ServerModel.allCases)
    func servesTLS(model: ServerModel) async throws {
        let made = try await onOwnThread { try makeServerCertificate() }
        defer { try? FileManager.default.removeItem(at: made.directory) }
        let context = try TLSContext(certificateFile: made.cert, keyFile: made.key)
        let server = try HTTPServer(configuration: model.configuration(tls: context), handler: echo)
        #expect(server.baseURL.absoluteString.hasPrefix("https://127.0.0.1:"))
        let client = CurlHTTPClient(configuration: .init(caBundlePath: made.cert))
        for _ in 0..<2 {
            let response = try await client.send(HTTPRequest(method: "POST", url: server.baseURL.appendingPathComponent("x"),
                                                             body: Data("over TLS".utf8)))
            #expect(response.status == 200)
            #expect(response.body == Data("over TLS".utf8))
        }
        let port = "127.0.0.1:\(server.port)"
        #expect(try await onOwnThread { try openssl(["s_client", "-connect", port, "-tls1_2", "-brief"], in: made.directory) } == 0)
        #expect(try await onOwnThread { try openssl(["s_client", "-connect", port, "-tls1_3", "-brief"], in: made.directory) } == 0)
        #expect(try await onOwnThread { try openssl(["s_client", "-connect", port, "-tls1_1", "-brief"], in: made.directory) } != 0)
    }

    @Test("a replaced TLS context serves the new certificate to new connections", arguments: ServerModel.allCases)
    func replacedCertificate(model: ServerModel) async throws {
        let first = try await onOwnThread { try makeServerCertificate(commonName: "first") }
        let second = try await onOwnThread { try makeServerCertificate(commonName: "second") }
        defer {
            try? FileManager.default.removeItem(at: first.directory)
            try? FileManager.default.removeItem(at: second.directory)
        }
        let server = try HTTPServer(configuration: model.configuration(
            tls: try TLSContext(certificateFile: first.cert, keyFile: first.key)), handler: echo)
        // Kept alive to the end: its last use is replaceTLS, and a server released early stops listening.
        defer { server.stop() }
        let url = server.baseURL.appendingPathComponent("x")
        _ = try await CurlHTTPClient(configuration: .init(caBundlePath: first.cert)).send(HTTPRequest(method: "GET", url: url))
        server.replaceTLS(try TLSContext(certificateFile: second.cert, keyFile: second.key))
        let response = try await CurlHTTPClient(configuration: .init(caBundlePath: second.cert)).send(HTTPRequest(method: "GET", url: url))
        #expect(response.status == 200)
        await #expect(throws: HTTPError.self) {
            try await CurlHTTPClient(configuration: .init(caBundlePath: first.cert)).send(HTTPRequest(method: "GET", url: url))
        }
    }

    @Test("a TLS key that does not match its certificate is refused, naming the file")
    func mismatchedKey() async throws {
        let first = try await onOwnThread { try makeServerCertificate() }
        let second = try await onOwnThread { try makeServerCertificate() }
        defer {
            try? FileManager.default.removeItem(at: first.directory)
            try? FileManager.default.removeItem(at: second.directory)
        }
        #expect { try TLSContext(certificateFile: first.cert, keyFile: second.key) } throws: { error in
            (error as? TLSError)?.description.contains(second.key) == true
        }
    }
}

/// A blocking keep-alive connection driven from the test.
typealias HeldConnection = LoopbackConnection

/// The two ways an `HTTPServer` serves connections; the server's behaviour tests run against both.
enum ServerModel: String, CaseIterable, Sendable, CustomStringConvertible {
    case threadPerConnection = "a thread per connection"
    case eventLoops = "two event loops"

    var description: String { rawValue }

    func configuration(maxBodySize: Int = 16 * 1024 * 1024, maxHeaderSize: Int = 64 * 1024, maxConnections: Int = 512,
                       idleTimeout: Double = 120, requestTimeout: Double = 30, tls: TLSContext? = nil) -> HTTPServerConfiguration {
        HTTPServerConfiguration(maxBodySize: maxBodySize, maxHeaderSize: maxHeaderSize, maxConnections: maxConnections,
                                idleTimeout: idleTimeout, requestTimeout: requestTimeout, tls: tls,
                                eventLoops: self == .eventLoops ? 2 : 0)
    }
}
