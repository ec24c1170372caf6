import Basics
internal import CCurl
public import Foundation
public import HTTPCore
import Synchronization

/// The production `HTTPTransport`: libcurl with TLS verification always on, HTTP/2 where the server
/// offers it, proxies from the standard environment variables, and per-request timeouts.
///
/// `curl_easy_perform` blocks, so transfers run on a small pool of dedicated threads (never on Swift's
/// shared concurrency pool). Each worker keeps one easy handle, so connections are reused.
public final class CurlHTTPClient: HTTPTransport {
    public struct Configuration: Sendable {
        /// Seconds allowed to establish a connection, unless the request says otherwise.
        public var connectTimeout: Double
        /// Seconds allowed for a whole exchange, unless the request says otherwise.
        public var timeout: Double
        /// A PEM file of trusted certificate authorities, replacing the system's.
        public var caBundlePath: String?
        /// How many transfers may run at the same time; further requests wait their turn.
        public var maxConcurrentTransfers: Int
        /// Where proxy settings are read from (`https_proxy`, `HTTPS_PROXY`, `http_proxy`,
        /// `all_proxy`, `no_proxy`, `NO_PROXY`); libcurl's own look-up in the process environment is
        /// switched off so that this dictionary is the only source.
        public var environment: [String: String]
        public var userAgent: String

        public init(connectTimeout: Double = 10, timeout: Double = 60, caBundlePath: String? = nil,
                    maxConcurrentTransfers: Int = 8,
                    environment: [String: String] = ProcessInfo.processInfo.environment,
                    userAgent: String = "retention-sync") {
            self.connectTimeout = connectTimeout
            self.timeout = timeout
            self.caBundlePath = caBundlePath
            self.maxConcurrentTransfers = maxConcurrentTransfers
            self.environment = environment
            self.userAgent = userAgent
        }
    }

    public let configuration: Configuration
    private let queue: TransferQueue

    public init(configuration: Configuration = .init()) {
        self.configuration = configuration
        queue = TransferQueue(configuration: configuration)
    }

    deinit {
        queue.close()
    }

    public func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
        let cancellation = CancellationFlag()
        let result: Result<HTTPResponse, HTTPError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                queue.submit(TransferJob(request: request, cancellation: cancellation) { continuation.resume(returning: $0) })
            }
        } onCancel: {
            cancellation.cancel()
        }
        return try result.get()
    }

    /// Waits on the calling thread while a transfer thread performs the request: no task, no
    /// thread of Swift's pool.
    @available(*, noasync, message: "blocks the calling thread; from async code, await send(_:)")
    public func sendWaiting(_ request: HTTPRequest) -> Result<HTTPResponse, HTTPError> {
        let answer = WaitingAnswer()
        queue.submit(TransferJob(request: request, cancellation: CancellationFlag()) { answer.give($0) })
        return answer.wait()
    }
}

/// Set when the awaiting task is cancelled; the transfer's progress callback aborts on it.
final class CancellationFlag: Sendable {
    private let cancelled = Atomic(false)

    func cancel() {
        cancelled.store(true, ordering: .releasing)
    }

    var isCancelled: Bool {
        cancelled.load(ordering: .acquiring)
    }
}

struct TransferJob: Sendable {
    var request: HTTPRequest
    var cancellation: CancellationFlag
    /// Called once, on the transfer thread, with the answer.
    var answer: @Sendable (Result<HTTPResponse, HTTPError>) -> Void
}

/// A first-in, first-out queue of transfers served by up to `maxConcurrentTransfers` worker threads,
/// started on demand. Closing it lets the workers finish what is queued and exit.
final class TransferQueue: @unchecked Sendable {
    private let condition = NSCondition()
    private var pending: [TransferJob] = []
    private var idleWorkers = 0
    private var workers = 0
    private var closed = false
    private let configuration: CurlHTTPClient.Configuration

    init(configuration: CurlHTTPClient.Configuration) {
        self.configuration = configuration
    }

    func submit(_ job: TransferJob) {
        condition.lock()
        pending.append(job)
        if pending.count > idleWorkers && workers < max(1, configuration.maxConcurrentTransfers) {
            workers += 1
            let thread = Thread { [self] in
                ThreadName.setCurrent("rs-curl")
                work()
            }
            thread.start()
        }
        condition.signal()
        condition.unlock()
    }

    func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }

    private func next() -> TransferJob? {
        condition.lock()
        defer { condition.unlock() }
        while pending.isEmpty && !closed {
            idleWorkers += 1
            condition.wait()
            idleWorkers -= 1
        }
        guard !pending.isEmpty else {
            workers -= 1
            return nil
        }
        // Taken jobs leave the queue at once: a finished request (and its Authorization header)
        // must not stay reachable from the client. The queue is short, so removeFirst is cheap.
        return pending.removeFirst()
    }

    private func work() {
        let easy = CurlEasyHandle()
        while let job = next() {
            let result: Result<HTTPResponse, HTTPError>
            if let easy {
                result = CurlTransfer.perform(job.request, on: easy, configuration: configuration,
                                              cancellation: job.cancellation)
            } else {
                result = .failure(HTTPError(.other, "libcurl could not create a transfer handle."))
            }
            job.answer(result)
        }
    }
}
