import Basics
import Foundation

/// Runs blocking work (waiting for a child process, reading its output) on a thread of its own.
///
/// Swift's concurrency pool has one thread per core — two on the CI machines — and loopback
/// servers in the same test process need those threads to answer. A test that blocks a pool
/// thread for seconds starves them, and unrelated requests time out; so blocking waits go here.
public func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            ThreadName.setCurrent("rs-test-blocking")
            do { continuation.resume(returning: try work()) } catch { continuation.resume(throwing: error) }
        }
        thread.start()
    }
}
