import Basics
import Foundation
import HTTPClient
import HTTPCore
public import RetentionMessagingModels
import RetentionMessaging
import Synchronization

/// A performance test accepted by `POST /performanceTest`, waiting to be launched.
struct PerformanceTestJob: Sendable {
    var requestId: String
    var target: URL
    var transaction: SandboxTransaction
    var settings: PerformanceTestSettings
    var signer: any RealtimeRequestSigner
    /// The app (bundle id key) whose sandbox the run belongs to.
    var app = ""
}

extension Emulator {
    /// Registers (or replaces) a sandbox test transaction of an app (nil: the first app), as
    /// `POST /emulator/transactions` does.
    public func registerTestTransaction(_ transaction: SandboxTransaction, bundleId: String? = nil) {
        core.withLock { core in core[core.app(bundleId), .sandbox].state.testTransactions[transaction.originalTransactionId] = transaction }
        persist()
    }

    /// Waits until the performance test `requestId` has finished (at once when it is unknown or done).
    public func waitForPerformanceTest(_ requestId: String) async {
        let task = core.withLock { $0.performanceTestTasks[requestId] }
        await task?.value
    }

    /// The latest result of a performance test, in Apple's shape.
    public func performanceTestResult(_ requestId: String) -> PerformanceTestResultResponse? {
        core.withLock { core in core.apps.values.lazy.compactMap { $0[.sandbox]?.state.performanceTestResults[requestId] }.first }
    }

    func launch(_ job: PerformanceTestJob) {
        let transport: any HTTPTransport = configuration.realtimeTransport ?? CurlHTTPClient(configuration: .init(
            connectTimeout: 5, timeout: 30, caBundlePath: configuration.realtimeCABundlePath,
            maxConcurrentTransfers: job.settings.maxConcurrentRequests, environment: [:], userAgent: "retention-sync-emulator"))
        let runner = PerformanceTestRunner(settings: job.settings, transport: transport, signer: job.signer)
        let appAppleId = configuration.appAppleId
        let realtimeClock = configuration.realtimeClock
        let transaction = job.transaction
        let requestId = job.requestId
        let target = job.target.absoluteString
        log("sandbox performance test \(requestId) → \(target): \(job.settings.totalRequests) requests, at most \(job.settings.maxConcurrentRequests) at once, over \(job.settings.totalDuration) ms")
        let work: @Sendable () async -> Void = { [self] in
            let tally = await runner.run(
                target: job.target,
                payload: { _ in
                    DecodedRealtimeRequestBody(
                        originalTransactionId: transaction.originalTransactionId, appAppleId: appAppleId,
                        productId: transaction.productId, userLocale: transaction.locale,
                        requestIdentifier: UUID().uuidString.lowercased(), environment: "Sandbox",
                        signedDate: UTCTime(now: realtimeClock).milliseconds)
                },
                judge: { [self] body in isValidRealtimeAnswer(body, app: job.app) },
                progress: { [self] tally in record(tally, job: job, target: target, final: false) })
            record(tally, job: job, target: target, final: true)
            if let refusal = tally.refusal { log("sandbox performance test \(requestId) not sent: \(refusal)") }
            let result = performanceTestResult(requestId)
            log("sandbox performance test \(requestId) → \(result?.result?.rawValue ?? "?"), success rate \(Int(result?.successRate ?? 0))%")
        }
        let task = Task {
            guard #available(macOS 15.0, *) else { return await work() }
            // Apple's sender does not share the developer's CPU. On a thread of its own (the
            // requests, their timing and their answers all run there), the test measures the
            // realtime server, not how busy this process's concurrency pool is.
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                let thread = Thread {
                    ThreadName.setCurrent("rs-perf-test")
                    CurrentThreadExecutor.run(work)
                    done.resume()
                }
                thread.start()
            }
        }
        core.withLock { $0.performanceTestTasks[requestId] = task }
    }

    private func record(_ tally: PerformanceTestTally, job: PerformanceTestJob, target: String, final: Bool) {
        let requestId = job.requestId
        let response = tally.response(settings: job.settings, target: target)
        core.withLock { core in
            core[job.app, .sandbox].state.performanceTestResults[requestId] = response
            core[job.app, .sandbox].state.performanceTests[requestId] = response.result ?? .pending
            if final { core.performanceTestTasks[requestId] = nil }
        }
        // Progress is kept in memory; the file is written when the run ends.
        if final { persist() }
    }

    /// A valid RealtimeResponseBody: a JSON object with at most one of Apple's fields; a named
    /// message must exist in sandbox and be APPROVED (and carry no image for an alternate product,
    /// a promotional offer or Advanced Commerce data). `{}` is valid: it chooses nothing.
    /// `advancedCommerceInfo` is valid when its data has the documented shape: for a subscription
    /// that is not an Advanced Commerce one Apple ignores it and shows what `{}` shows, which is a
    /// well-formed answer all the same, so the test counts it as one.
    func isValidRealtimeAnswer(_ body: Data, app: String) -> Bool {
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any] else { return false }
        let fields = ["message", "alternateProduct", "promotionalOffer", "advancedCommerceInfo"]
        guard Set(object.keys).isSubset(of: fields), object.count <= 1 else { return false }
        guard let answer = try? JSONDecoder().decode(RealtimeResponseBody.self, from: body) else { return false }
        let named: (id: String, mustHaveNoImage: Bool)?
        if let message = answer.message {
            named = (message.messageIdentifier, false)
        } else if let alternate = answer.alternateProduct {
            named = (alternate.messageIdentifier, true)
        } else if let offer = answer.promotionalOffer {
            named = (offer.messageIdentifier, true)
        } else if let info = answer.advancedCommerceInfo {
            guard AdvancedCommerceData.request(info.advancedCommerceData) != nil else { return false }
            named = (info.messageIdentifier, true)
        } else {
            named = nil
        }
        guard let named else { return object.isEmpty }
        return core.withLock { core in
            guard let message = core[app, .sandbox].state.messages[named.id],
                  message.state == .approved else { return false }
            return !(named.mustHaveNoImage && message.body.image != nil)
        }
    }
}
