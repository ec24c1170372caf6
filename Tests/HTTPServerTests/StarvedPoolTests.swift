import Foundation
#if canImport(Glibc)
import Glibc
#endif
import HTTPCore
import HTTPServer
import Testing
import TestSupport

@Suite("HTTPServer and Swift's concurrency pool")
struct StarvedPoolTests {
    /// Blocking every pool thread would also stall the other tests of this process, so this test
    /// checks the mechanism instead: the handler's code, before and after it suspends, runs on the
    /// connection's own thread — never on the pool that a busy process may have used up.
    @Test("an async handler runs on the connection's own thread, before and after it awaits")
    func handlerStaysOnConnectionThread() async throws {
        let threads = ThreadNames()
        let server = try HTTPServer { _ in
            threads.record(currentThreadName())
            try? await Task.sleep(for: .milliseconds(5))
            threads.record(currentThreadName())
            return HTTPResponse(status: 200, body: Data("pong".utf8))
        }
        defer { server.stop() }
        let answer = try await LoopbackConnection.exchange(port: server.port, "GET /ping HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(answer.hasPrefix("HTTP/1.1 200"))
        #expect(threads.names == ["rs-http-conn", "rs-http-conn"])
    }
}

/// The calling thread's name, read synchronously (Thread.current is unavailable in async code).
private func currentThreadName() -> String? { Thread.current.name }

private final class ThreadNames: @unchecked Sendable {
    private let lock = NSLock()
    private var recorded: [String?] = []
    func record(_ name: String?) { lock.withLock { recorded.append(name) } }
    var names: [String?] { lock.withLock { recorded } }
}

