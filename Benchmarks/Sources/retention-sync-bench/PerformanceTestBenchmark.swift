import Basics
import Crypto
import Emulator
import Foundation
import HTTPCore
import HTTPServer
import RetentionMessaging
import RetentionMessagingModels
import Runtime
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `retention-sync-bench performance-test [--requests N] [--concurrency C]`: the emulator's sandbox
/// performance test against a loopback endpoint that answers `{}` at once, through libcurl —
/// success rate, percentiles and requests per second, i.e. what the emulator itself adds; then the
/// same test against `retention-sync serve` in its own process on loopback.
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
    let chain = try AppleStyleSigningChain(name: "bench emulator")
    let settings = PerformanceTestSettings(maxConcurrentRequests: concurrency, totalRequests: requests, totalDuration: 0)
    print("performance-test benchmark: \(requests) requests, at most \(concurrency) at once, no spreading")
    try await runEmulatorTest(label: "loopback target answering {} at once (what the emulator itself adds)",
                              target: target.baseURL.absoluteString + "/retention", chain: chain, settings: settings)

    // The same test against `retention-sync serve` in its own process, trusting the emulator's root:
    // every request is a genuine signedPayload that serve verifies (chain and ES256) before answering.
    let binary = Bundle.main.executableURL!.deletingLastPathComponent().appendingPathComponent("retention-sync").path
    guard FileManager.default.isExecutableFile(atPath: binary) else {
        print("  (serve run skipped: build retention-sync next to the benchmark first)")
        return
    }
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("performance-test-bench-\(getpid())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    try Data(chain.root.pem.utf8).write(to: directory.appendingPathComponent("root.pem"))
    try RuntimeSnapshot(bundleId: "com.example.bench", appAppleId: appAppleId, environment: .sandbox, localeFallbacks: [:], rules: [])
        .sealed().encoded().write(to: directory.appendingPathComponent("snapshot.json"))
    let server = Process()
    server.executableURL = URL(fileURLWithPath: binary)
    server.arguments = ["serve", "--env", "sandbox", "--snapshot", "snapshot.json", "--root", "root.pem",
                        "--listen", "127.0.0.1:0", "--max-connections", "256"]
    server.currentDirectoryURL = directory
    server.environment = [:]
    let announced = directory.appendingPathComponent("serve.stdout")
    _ = FileManager.default.createFile(atPath: announced.path, contents: nil)
    server.standardOutput = try FileHandle(forWritingTo: announced)
    server.standardError = FileHandle.nullDevice
    try server.run()
    defer { if server.isRunning { kill(server.processIdentifier, SIGTERM) } }
    var url: String?
    for _ in 0..<500 where url == nil {
        let text = (try? String(contentsOf: announced, encoding: .utf8)) ?? ""
        if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("serving sandbox on ") }) {
            url = String(line.dropFirst("serving sandbox on ".count))
        } else {
            usleep(20_000)
        }
    }
    guard let url else { throw BenchmarkError("serve did not start (\(binary))") }
    try await runEmulatorTest(label: "retention-sync serve (own process) verifying every signedPayload, answering {}",
                              target: url, chain: chain, settings: settings)
}

private let appAppleId: Int64 = 1_234_567_890

/// One run of the emulator's performance test against `target`, through libcurl, with its figures.
private func runEmulatorTest(label: String, target: String, chain: AppleStyleSigningChain, settings: PerformanceTestSettings) async throws {
    let key = ES256PrivateKey.generate()
    var configuration = EmulatorConfiguration(publicKey: key.publicKey, clock: SystemClock(), performanceTest: settings, appAppleId: appAppleId)
    configuration.useTestChain(chain)
    let emulator = Emulator(configuration: configuration)
    emulator.registerTestTransaction(SandboxTransaction(originalTransactionId: "2000000000000001", productId: "com.example.monthly"))
    var state = emulator.state(of: .sandbox)
    state.realtimeURL = target
    emulator.restore(state, in: .sandbox)
    let credentials = Credentials(keyId: "BENCH00001", issuerId: "57246542-96fe-1a63-e053-0824d011072a",
                                  bundleId: "com.example.bench", privateKey: key)
    let client = RetentionMessagingClient(environment: .sandbox, credentials: credentials, transport: emulator.transport(), pacing: .unlimited, clock: SystemClock())

    print("\(label):")
    let started = ContinuousClock.now
    let run = try await client.initiatePerformanceTest(originalTransactionId: "2000000000000001")
    await emulator.waitForPerformanceTest(run.requestId)
    let elapsed = ContinuousClock.now - started
    let result = try await client.getPerformanceTestResult(requestId: run.requestId)
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    let times = result.responseTimes
    print("  result \(result.result?.rawValue ?? "?"), success rate \(Int(result.successRate ?? 0))%, failures \(result.failures ?? [:])")
    print("  response times ms: average \(times?.average ?? 0), p50 \(times?.p50 ?? 0), p90 \(times?.p90 ?? 0), p95 \(times?.p95 ?? 0), p99 \(times?.p99 ?? 0)")
    print(String(format: "  %.0f requests per second (%.2f s in all)", Double(settings.totalRequests) / seconds, seconds))
}
