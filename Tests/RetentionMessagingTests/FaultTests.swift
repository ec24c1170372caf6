import Basics
import Emulator
import Foundation
import HTTPCore
import RetentionMessaging
import RetentionMessagingModels
import Testing
import TestSupport

/// Passes requests on but loses the answer of the first one, as a dropped connection after the
/// server acted would.
final class LoseFirstAnswer: HTTPTransport {
    private let lost = Locked(false)
    let next: any HTTPTransport
    init(_ next: any HTTPTransport) { self.next = next }
    func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
        let response = try await next.send(request)
        let lose = lost.withLock { lost in
            defer { lost = true }
            return !lost
        }
        if lose { throw HTTPError(.connectionDropped, "connection reset by peer") }
        return response
    }
}

@Suite("Faults and retries")
struct FaultTests {
    static let quickRetries = RetryPolicy(maxAttempts: 12, baseDelay: 0.005, maxDelay: 0.02)

    @Test("with 20% server errors and 20% dropped connections, idempotent calls succeed through retries", arguments: Face.allCases)
    func flakyServer(face: Face) async throws {
        let app = TestApp()
        let emulator = app.emulator(faults: FaultInjection(serverErrorRate: 0.2, dropRate: 0.2, seed: 42))
        emulator.restore(.with(messages: [Fixtures.uuid(1): (.approved, Fixtures.plainMessage)]), in: .sandbox)
        let harness = try Harness(face, app: app, emulator: emulator)
        let client = harness.client(retry: Self.quickRetries)

        for round in 0..<8 {
            _ = try await client.getMessageList()
            _ = try await client.getImageList()
            try await client.configureDefaultMessage(productId: "com.example.monthly", locale: "en-US", messageIdentifier: Fixtures.uuid(1))
            #expect(try await client.getDefaultMessage(productId: "com.example.monthly", locale: "en-US")?.messageIdentifier == Fixtures.uuid(1))
            try await client.deleteDefaultMessage(productId: "com.example.monthly", locale: "en-US")
            try await client.configureRealtimeURL("https://retention.example.com/\(round)")
            #expect(try await client.getRealtimeURL() == "https://retention.example.com/\(round)")
        }
        #expect(client.requestCounts.retries > 0)
        #expect(client.requestCounts.total == 56 + client.requestCounts.retries)
        if face == .inProcess {
            #expect(client.requestCounts.total == emulator.requestCount(in: .sandbox))
        } else {
            // libcurl itself re-sends once when a reused connection closes without an answer.
            #expect(client.requestCounts.total <= emulator.requestCount(in: .sandbox))
        }
    }

    @Test("a non-retryable 4xx is sent once", arguments: Face.allCases)
    func noRetryOn4xx(face: Face) async throws {
        let harness = try Harness(face)
        let client = harness.client(retry: Self.quickRetries)
        let error = await apiError {
            try await client.uploadMessage(identifier: Fixtures.uuid(1), body: UploadMessageRequestBody(header: Fixtures.text(67), body: "b"))
        }
        #expect(error?.statusAndCode == "400 4000162")
        let missing = await apiError { try await client.deleteImage(identifier: Fixtures.uuid(2)) }
        #expect(missing?.statusAndCode == "404 4040014")
        #expect(client.requestCounts == RequestCounts(configureDefault: 0, other: 2, retries: 0))
        #expect(harness.emulator.requestCount(in: .sandbox) == 2)
    }

    @Test("starting a performance test is not repeated after a server error")
    func postNotRetried() async throws {
        let app = TestApp()
        let emulator = app.emulator(faults: FaultInjection(serverErrorRate: 1))
        let client = app.client(transport: emulator.transport(), retry: Self.quickRetries)
        let error = await apiError { _ = try await client.initiatePerformanceTest(originalTransactionId: "2000000123456789") }
        #expect(error?.statusAndCode == "500 5000000")
        #expect(client.requestCounts.total == 1)
    }

    @Test("an upload whose answer was lost is retried, and the 409 says the first attempt landed")
    func uploadAfterLostAnswer() async throws {
        let app = TestApp()
        let emulator = app.emulator()
        let client = app.client(transport: LoseFirstAnswer(emulator.transport()), retry: Self.quickRetries)
        let error = await apiError { try await client.uploadMessage(identifier: Fixtures.uuid(1), body: Fixtures.plainMessage) }
        #expect(error?.statusAndCode == "409 4090001")
        #expect(emulator.state(of: .sandbox).messages[Fixtures.uuid(1)]?.body == Fixtures.plainMessage)
        #expect(client.requestCounts == RequestCounts(configureDefault: 0, other: 2, retries: 1))
    }

    @Test("a delete whose answer was lost succeeds on retry even though the retry finds nothing")
    func deleteAfterLostAnswer() async throws {
        let app = TestApp()
        let emulator = app.emulator()
        emulator.restore(.with(messages: [Fixtures.uuid(1): (.approved, Fixtures.plainMessage)]), in: .sandbox)
        let client = app.client(transport: LoseFirstAnswer(emulator.transport()), retry: Self.quickRetries)
        try await client.deleteMessage(identifier: Fixtures.uuid(1))
        #expect(emulator.state(of: .sandbox).messages.isEmpty)
        #expect(client.requestCounts.total == 2)
    }

    @Test("transient failures are retried a bounded number of times, then reported")
    func boundedRetries() async throws {
        let app = TestApp()
        let emulator = app.emulator(faults: FaultInjection(serverErrorRate: 1))
        let client = app.client(transport: emulator.transport(), clock: VirtualClock(),
                                retry: RetryPolicy(maxAttempts: 3, baseDelay: 1, maxDelay: 4))
        let waits = WaitLog()
        client.onWait(waits.record)
        let error = await apiError { _ = try await client.getMessageList() }
        #expect(error?.statusAndCode == "500 5000000")
        #expect(client.requestCounts == RequestCounts(configureDefault: 0, other: 3, retries: 2))
        #expect(waits.waits.count == 2)
        #expect(waits.waits[0].seconds >= 0.5 && waits.waits[0].seconds <= 1)
        #expect(waits.waits[1].seconds >= 1 && waits.waits[1].seconds <= 2)
    }

    @Test("an emulator halted after N requests fails every later one without retries")
    func halted() async throws {
        let app = TestApp()
        let emulator = app.emulator(faults: FaultInjection(haltAfterRequests: 2))
        let client = app.client(transport: emulator.transport(), retry: Self.quickRetries)
        _ = try await client.getMessageList()
        _ = try await client.getImageList()
        let error = await apiError { _ = try await client.getMessageList() }
        #expect(error == .transport(HTTPError(.other, "emulator halted")))
        #expect(client.requestCounts.total == 3)
    }

    @Test("injected faults repeat for the same seed")
    func seeded() async throws {
        func failures(seed: UInt64) async -> [Int] {
            let app = TestApp()
            let emulator = app.emulator(faults: FaultInjection(serverErrorRate: 0.3, seed: seed))
            let client = app.client(transport: emulator.transport(), retry: .none)
            var statuses: [Int] = []
            for _ in 0..<20 {
                let error = await apiError { _ = try await client.getMessageList() }
                statuses.append(error?.status ?? 200)
            }
            return statuses
        }
        let first = await failures(seed: 9)
        #expect(first.contains(500))
        #expect(await failures(seed: 9) == first)
    }
}
