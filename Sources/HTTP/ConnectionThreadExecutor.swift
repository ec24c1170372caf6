import Foundation

/// Runs an async handler's jobs on the connection thread that waits for its answer.
///
/// Swift's concurrency pool has one thread per core (two on a small CI machine). If the server's
/// async handlers ran there, a process that also blocks pool threads — a test waiting on a child
/// process, a caller doing synchronous I/O — would starve the server and its clients would time
/// out. With this executor as the handler task's preference, the handler (and whatever it awaits
/// that is not bound to an actor) runs on the connection's own thread, which would otherwise
/// just sit waiting.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
final class ConnectionThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var finished = false

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Ends `runUntilFinished`, once the jobs enqueued so far have run.
    func finish() {
        condition.lock()
        finished = true
        condition.signal()
        condition.unlock()
    }

    /// Runs enqueued jobs on the calling thread until `finish()`.
    func runUntilFinished() {
        while true {
            condition.lock()
            while jobs.isEmpty && !finished { condition.wait() }
            if jobs.isEmpty && finished {
                condition.unlock()
                return
            }
            let batch = jobs
            jobs.removeAll(keepingCapacity: true)
            condition.unlock()
            for job in batch { job.runSynchronously(on: asUnownedTaskExecutor()) }
        }
    }

    /// Runs `handler(request)` to completion on the calling thread.
    static func answer(_ request: HTTPServerRequest, with handler: @escaping HTTPServer.Handler) -> HTTPResponse? {
        let executor = ConnectionThreadExecutor()
        let box = ResponseBox()
        Task(executorPreference: executor) {
            box.response = await handler(request)
            executor.finish()
        }
        executor.runUntilFinished()
        return box.response
    }
}
