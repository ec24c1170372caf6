import Foundation

/// Runs async work to completion on the calling thread, which would otherwise only wait for it.
///
/// Swift's concurrency pool has one thread per core (two on a small CI machine). Code that must
/// wait synchronously for async work — an HTTP server's connection thread, a polling thread —
/// would, with a plain `Task` and a semaphore, need a pool thread as well, and starve when the pool
/// is busy or blocked. With this executor as the task's preference, the work (and whatever it
/// awaits that is not bound to an actor) runs on the waiting thread itself.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
public final class CurrentThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var finished = false

    private init() {}

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func finish() {
        condition.lock()
        finished = true
        condition.signal()
        condition.unlock()
    }

    private func runUntilFinished() {
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

    /// Runs `work` on the calling thread and returns its result. Never call it from a task on
    /// the concurrency pool: it blocks the calling thread until `work` is done.
    @available(*, noasync, message: "blocks the calling thread until the work is done")
    public static func run<T: Sendable>(_ work: @escaping @Sendable () async -> T) -> T {
        let executor = CurrentThreadExecutor()
        let box = ResultBox<T>()
        Task(executorPreference: executor) {
            box.value = await work()
            executor.finish()
        }
        executor.runUntilFinished()
        return box.value!
    }
}

private final class ResultBox<T>: @unchecked Sendable {
    var value: T?
}
