import Basics
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
        let threads = Locked<[String?]>()
        let server = try HTTPServer { _ in
            threads.append(currentThreadName())
            try? await Task.sleep(for: .milliseconds(5))
            threads.append(currentThreadName())
            return HTTPResponse(status: 200, body: Data("pong".utf8))
        }
        defer { server.stop() }
        let answer = try await LoopbackConnection.exchange(port: server.port, "GET /ping HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(answer.hasPrefix("HTTP/1.1 200"))
        #expect(threads.value == ["rs-http-conn", "rs-http-conn"])
    }
}

/// The calling thread's name, read synchronously (Thread.current is unavailable in async code).
private func currentThreadName() -> String? { Thread.current.name }


@Suite("Thread names")
struct ThreadNameTests {
    /// Foundation's setter reaches the system only once `start()` has recorded the thread, which
    /// raced with the thread naming itself: a connection thread then kept the name of the pool
    /// thread that had created the server, and the test above failed about once in 150 runs.
    @Test("a thread names itself at once, as the system shows it, cut to 15 bytes")
    func threadNamesItself() async throws {
        let names = try await onOwnThread { () -> [String?] in
            ThreadName.setCurrent("rs-short")
            let short = Thread.current.name
            ThreadName.setCurrent("rs-a-name-longer-than-fifteen-bytes")
            return [short, Thread.current.name]
        }
        #expect(names == ["rs-short", "rs-a-name-longe"])
    }
}
