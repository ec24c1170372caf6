import Basics
import Crypto
import Emulator
import Foundation
import HTTPClient
import HTTPCore
import RetentionMessaging
import RetentionMessagingModels

/// `retention-sync-bench client [--requests N]`: the client's cost per request against the emulator
/// (in-process, and over loopback HTTP with libcurl at concurrency 1 and 8, pacing off) and the
/// emulator's own throughput (in-process `handle()` calls per second).
@Sendable func clientBenchmark(_ arguments: [String]) async throws {
    var requests = 2000
    if let index = arguments.firstIndex(of: "--requests"), index + 1 < arguments.count, let value = Int(arguments[index + 1]), value > 0 {
        requests = value
    }
    let key = ES256PrivateKey.generate()
    let credentials = Credentials(keyId: "BENCH00001", issuerId: "57246542-96fe-1a63-e053-0824d011072a",
                                  bundleId: "com.example.bench", privateKey: key)
    let emulator = Emulator(configuration: EmulatorConfiguration(publicKey: key.publicKey, bundleId: credentials.bundleId, clock: SystemClock()))
    // A realistic list to answer: 100 messages.
    var state = EmulatorState()
    for number in 0..<100 {
        let id = String(format: "00000000-0000-4000-8000-%012x", number)
        state.messages[id] = EmulatedMessage(state: .approved, body: UploadMessageRequestBody(header: "Header \(number)", body: "Body"))
    }
    emulator.restore(state, in: .sandbox)
    print("client benchmark: \(requests) requests per run, GET /message/list answering 100 messages, pacing off")

    // The emulator alone: one prepared request, verified and answered each time.
    let recorder = BenchRecorder(emulator.transport())
    let probe = RetentionMessagingClient(environment: .sandbox, credentials: credentials, transport: recorder, pacing: .unlimited, clock: SystemClock())
    _ = try await probe.getMessageList()
    guard let prepared = recorder.last else { throw BenchError("no request recorded") }
    let emulatorSeconds = try await measure {
        for _ in 0..<requests {
            guard await emulator.handle(prepared, environment: .sandbox)?.status == 200 else { throw BenchError("emulator refused") }
        }
    }
    report("emulator handle(), in-process", requests, emulatorSeconds)

    // The client alone, answered from memory: token signing, URL and header building, decoding.
    guard let answer = await emulator.handle(prepared, environment: .sandbox) else { throw BenchError("no answer") }
    let alone = RetentionMessagingClient(environment: .sandbox, credentials: credentials, transport: CannedTransport(answer), pacing: .unlimited, clock: SystemClock())
    let aloneSeconds = try await measure {
        for _ in 0..<requests { _ = try await alone.getMessageList() }
    }
    report("client alone (canned answer): its overhead", requests, aloneSeconds)

    // The client in-process: token signing, encoding, decoding, pacing bookkeeping, plus the emulator.
    let inProcess = RetentionMessagingClient(environment: .sandbox, credentials: credentials, transport: emulator.transport(), pacing: .unlimited, clock: SystemClock())
    let inProcessSeconds = try await measure {
        for _ in 0..<requests { _ = try await inProcess.getMessageList() }
    }
    report("client → emulator, in-process", requests, inProcessSeconds)

    // The real libcurl client over loopback.
    let server = try EmulatorServer(emulator: emulator, environment: .sandbox)
    defer { server.stop() }
    for concurrency in [1, 8] {
        let curl = CurlHTTPClient(configuration: .init(maxConcurrentTransfers: concurrency, environment: [:]))
        let client = RetentionMessagingClient(
            environment: .sandbox, credentials: credentials, transport: curl, endpoint: server.apiEndpoint,
            pacing: Pacing(limits: nil, maxConcurrentRequests: concurrency), clock: SystemClock())
        _ = try await client.getMessageList()
        let seconds = try await measure {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<requests { group.addTask { _ = try await client.getMessageList() } }
                try await group.waitForAll()
            }
        }
        report("client → emulator, loopback HTTP, concurrency \(concurrency)", requests, seconds)
    }
}

private func measure(_ body: () async throws -> Void) async throws -> Double {
    let start = ContinuousClock.now
    try await body()
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

private func report(_ name: String, _ count: Int, _ seconds: Double) {
    let perSecond = Double(count) / seconds
    let microseconds = seconds / Double(count) * 1e6
    print("  \(name.padding(toLength: 52, withPad: " ", startingAt: 0)) \(String(format: "%9.0f", perSecond)) req/s  \(String(format: "%8.1f", microseconds)) µs/req")
}

private struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Answers every request with the same response.
private struct CannedTransport: HTTPTransport {
    let response: HTTPResponse
    init(_ response: HTTPResponse) { self.response = response }
    func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse { response }
}

/// Keeps the last request, so the emulator can be measured on a prepared one.
private final class BenchRecorder: HTTPTransport, @unchecked Sendable {
    private let lock = NSLock()
    private var request: HTTPRequest?
    let next: any HTTPTransport
    init(_ next: any HTTPTransport) { self.next = next }
    var last: HTTPRequest? { lock.withLock { request } }
    func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
        lock.withLock { self.request = request }
        return try await next.send(request)
    }
}
