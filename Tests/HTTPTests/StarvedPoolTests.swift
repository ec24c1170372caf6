import Foundation
#if canImport(Glibc)
import Glibc
#endif
import HTTP
import Testing

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
        let answer = try await blockingOnThread {
            try exchange(port: server.port, "GET /ping HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        }
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

private func blockingOnThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
        Thread {
            do { continuation.resume(returning: try work()) } catch { continuation.resume(throwing: error) }
        }.start()
    }
}

private func exchange(port: UInt16, _ text: String) throws -> String {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    try #require(descriptor >= 0)
    defer { close(descriptor) }
    var timeout = timeval(tv_sec: 10, tv_usec: 0)
    setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    try #require(connected == 0)
    let bytes = Array(text.utf8)
    _ = bytes.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    var received: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        if count <= 0 { break }
        received += chunk[0..<count]
    }
    return String(decoding: received, as: UTF8.self)
}
