import Foundation
import HTTP
import Testing

/// A gate that blocks the threads that wait on it until it opens: used to occupy every thread of
/// Swift's concurrency pool, as a process that does blocking work on it would.
private final class Gate: @unchecked Sendable {
    private let condition = NSCondition()
    private var open = false
    private var waiting = 0

    func block() {
        condition.lock()
        waiting += 1
        condition.broadcast()
        while !open { condition.wait() }
        condition.unlock()
    }

    /// Waits (at most `seconds`) until `count` threads are blocked; true when they are.
    func waitForBlocked(_ count: Int, seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        condition.lock()
        defer { condition.unlock() }
        while waiting < count {
            if !condition.wait(until: deadline) { return waiting >= count }
        }
        return true
    }

    func release() {
        condition.lock()
        open = true
        condition.broadcast()
        condition.unlock()
    }
}

@Suite("HTTPServer with a busy concurrency pool")
struct StarvedPoolTests {
    @Test("an async handler still answers while every thread of Swift's concurrency pool is blocked")
    func answersWithBlockedPool() async throws {
        let server = try HTTPServer { request in
            try? await Task.sleep(for: .milliseconds(5))
            return HTTPResponse(status: 200, body: Data("pong \(request.target)".utf8))
        }
        defer { server.stop() }
        let gate = Gate()
        defer { gate.release() }
        // More blockers than the pool has threads: some stay queued, every pool thread is taken.
        // Everything until the gate opens runs on a thread of its own: this test's task needs the
        // pool to go on.
        let width = ProcessInfo.processInfo.activeProcessorCount
        for _ in 0..<(width + 2) { Task.detached { gate.block() } }
        let (blocked, answer) = try await blockingOnThread { () throws -> (Bool, String) in
            defer { gate.release() }
            guard gate.waitForBlocked(width, seconds: 10) else { return (false, "") }
            // Bounded by the socket's own 10 s receive timeout.
            return (true, try exchange(port: server.port, "GET /ping HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"))
        }
        try #require(blocked, "the pool's \(width) threads were not all blocked")
        #expect(answer.hasPrefix("HTTP/1.1 200"))
        #expect(answer.hasSuffix("pong /ping"))
    }
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
