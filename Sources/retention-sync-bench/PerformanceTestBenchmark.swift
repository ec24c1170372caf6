import Crypto
import Emulator
import Foundation
import HTTP
import RetentionMessaging
import RetentionMessagingModels

/// `retention-sync-bench performance-test [--requests N] [--concurrency C]`: the emulator's sandbox
/// performance test against a loopback endpoint that answers `{}` at once, through libcurl —
/// success rate, percentiles and requests per second, i.e. what the emulator itself adds. Runs
/// against `serve` go through `performance-test` the same way.
@Sendable func performanceTestBenchmark(_ arguments: [String]) async throws {
    func value(_ name: String, _ fallback: Int) -> Int {
        guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count, let number = Int(arguments[index + 1]), number > 0 else {
            return fallback
        }
        return number
    }
    let requests = min(value("--requests", 2000), PerformanceTestSettings.maximumRequests)
    let concurrency = min(value("--concurrency", 64), PerformanceTestSettings.maximumConcurrency)
    let target = try HTTPServer { _ in
        HTTPResponse(status: 200, headers: [(name: "Content-Type", value: "application/json")], body: Data("{}".utf8))
    }
    defer { target.stop() }
    let key = ES256PrivateKey.generate()
    let payloadKey = ES256PrivateKey.generate()
    let settings = PerformanceTestSettings(maxConcurrentRequests: concurrency, totalRequests: requests, totalDuration: 0)
    let emulator = Emulator(configuration: EmulatorConfiguration(
        publicKey: key.publicKey, performanceTest: settings,
        realtimeSigner: ClosureRealtimeRequestSigner { payload in
            try JWS.sign(headerJSON: Array(#"{"alg":"ES256"}"#.utf8), payloadJSON: Array(try CanonicalJSON.encode(payload)), key: payloadKey)
        }))
    emulator.registerTestTransaction(SandboxTransaction(originalTransactionId: "2000000000000001", productId: "com.example.monthly"))
    var state = emulator.state(of: .sandbox)
    state.realtimeURL = target.baseURL.absoluteString + "/retention"
    emulator.restore(state, in: .sandbox)
    let credentials = Credentials(keyId: "BENCH00001", issuerId: "57246542-96fe-1a63-e053-0824d011072a",
                                  bundleId: "com.example.bench", privateKey: key)
    let client = RetentionMessagingClient(environment: .sandbox, credentials: credentials, transport: emulator.transport(), pacing: .unlimited)

    print("performance-test benchmark: \(requests) requests, at most \(concurrency) at once, no spreading, loopback target answering {}")
    let started = ContinuousClock.now
    let run = try await client.initiatePerformanceTest(originalTransactionId: "2000000000000001")
    await emulator.waitForPerformanceTest(run.requestId)
    let elapsed = ContinuousClock.now - started
    let result = try await client.getPerformanceTestResult(requestId: run.requestId)
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    let times = result.responseTimes
    print("  result \(result.result?.rawValue ?? "?"), success rate \(Int(result.successRate ?? 0))%, failures \(result.failures ?? [:])")
    print("  response times ms: average \(times?.average ?? 0), p50 \(times?.p50 ?? 0), p90 \(times?.p90 ?? 0), p95 \(times?.p95 ?? 0), p99 \(times?.p99 ?? 0)")
    print(String(format: "  %.0f requests per second (%.2f s in all)", Double(requests) / seconds, seconds))
}
