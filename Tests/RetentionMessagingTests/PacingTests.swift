import Basics
import Emulator
import Foundation
import HTTPCore
import RetentionMessaging
import RetentionMessagingModels
import Testing
import TestSupport

/// Collects what `onWait` reports.
final class WaitLog: Sendable {
    private let entries = Locked<[(seconds: Double, reason: String)]>()
    func record(_ seconds: Double, _ reason: String) { entries.append((seconds, reason)) }
    var waits: [(seconds: Double, reason: String)] { entries.value }
}

@Suite("Pacing and rate limits")
struct PacingTests {
    @Test("a token bucket lets the hour's budget through at once, then releases one request per interval")
    func bucket() {
        var bucket = TokenBucket(capacity: 5, rate: 5.0 / 3600, now: 0)
        let waits = (0..<8).map { _ in bucket.reserve(now: 0) }
        #expect(waits.prefix(5).allSatisfy { $0 == 0 })
        #expect(abs(waits[5] - 720) < 1e-6)
        #expect(abs(waits[6] - 1440) < 1e-6)
        #expect(abs(waits[7] - 2160) < 1e-6)

        var server = TokenBucket(capacity: 2, rate: 1, now: 0)
        #expect(server.take(now: 0) == nil)
        #expect(server.take(now: 0) == nil)
        #expect(server.take(now: 0.25).map { abs($0 - 0.75) < 1e-9 } == true)
        #expect(server.take(now: 1) == nil)
    }

    @Test("two requests whose clock readings cross (the later reserves first) each wait for their own slot, never an earlier one")
    func crossedClockReadings() {
        // One token, then one every 10 s. The bucket last saw t = 5; a task that read t = 3 before
        // taking its turn must still go at the third token's time, t = 20, not at 3 + 15 = 18.
        var bucket = TokenBucket(capacity: 1, rate: 0.1, now: 0)
        #expect(bucket.reserve(now: 0) == 0)
        #expect(abs(5 + bucket.reserve(now: 5) - 10) < 1e-9)
        #expect(abs(3 + bucket.reserve(now: 3) - 20) < 1e-9)
        // The server's side: a request stamped before the bucket's last update is told when a token
        // really comes.
        var server = TokenBucket(capacity: 1, rate: 0.1, now: 0)
        #expect(server.take(now: 0) == nil)
        #expect(server.take(now: 5).map { abs(5 + $0 - 10) < 1e-9 } == true)
        #expect(server.take(now: 2).map { abs(2 + $0 - 10) < 1e-9 } == true)
    }

    @Test("Apple's pacing: 10/s, 1/s and 50/s for notification history in production, a tenth of that in sandbox")
    func appleRates() {
        #expect(Pacing.apple.rate(for: .configureDefault, in: .production) == 10)
        #expect(Pacing.apple.rate(for: .other, in: .production) == 1)
        #expect(Pacing.apple.rate(for: .configureDefault, in: .sandbox) == 1)
        #expect(abs((Pacing.apple.rate(for: .other, in: .sandbox) ?? 0) - 0.1) < 1e-12)
        #expect(Pacing.apple.maxConcurrentRequests == 4)
        #expect(Pacing.unlimited.rate(for: .other, in: .production) == nil)
        #expect(RateLimitMode.apple.perHour(.other, in: .sandbox) == 360)
        #expect(RateLimitMode.apple.perHour(.configureDefault, in: .production) == 36_000)
        #expect(Pacing.apple.rate(for: .notificationHistory, in: .production) == 50)
        #expect(Pacing.apple.rate(for: .notificationHistory, in: .sandbox) == 5)
        #expect(RateLimitMode.apple.perHour(.notificationHistory, in: .sandbox) == 18_000)
        #expect(RateLimitMode.custom(perHourOther: 7, perHourDefaults: 70).perHour(.other, in: .sandbox) == 7)
        #expect(RateLimitMode.off.perHour(.other, in: .production) == nil)
    }

    @Test("a burst beyond the hour's budget is slowed by the client's pacing, and none is refused", arguments: Face.allCases)
    func pacedBurst(face: Face) async throws {
        let clock = VirtualClock()
        let start = clock.now()
        let app = TestApp()
        let emulator = app.emulator(rateLimit: .custom(perHourOther: 5, perHourDefaults: 10), clock: clock)
        let harness = try Harness(face, app: app, emulator: emulator, clock: clock)
        let client = harness.client(pacing: .perHour(other: 5, configureDefault: 10, maxConcurrentRequests: 1))
        let waits = WaitLog()
        client.onWait(waits.record)

        await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<12 { group.addTask { _ = try await client.getMessageList() } }
            for _ in 0..<10 { group.addTask { try await client.deleteDefaultMessage(productId: "p", locale: "en-US") } }
            for _ in 0..<3 {
                group.addTask { try await client.configureDefaultMessage(productId: "p", locale: "en-US", messageIdentifier: Fixtures.uuid(1)) }
            }
            var failures = 0
            while let result = await group.nextResult() {
                if case .failure(let error) = result, (error as? RetentionMessagingError)?.status != 404 { failures += 1 }
            }
            #expect(failures == 0)
        }
        // 22 "other" requests at 5 per hour: 17 had to wait 720 s each; the 3 configure-default calls fit their budget.
        #expect(waits.waits.count == 17)
        #expect(waits.waits.allSatisfy { $0.reason.contains("pacing") })
        #expect(clock.now() - start >= 17 * 720 - 1)
        #expect(client.requestCounts == RequestCounts(configureDefault: 3, other: 22, retries: 0))
        #expect(emulator.requestCount(in: .sandbox) == 25)
    }

    @Test("without client pacing, 429s are waited out until Retry-After and every request succeeds",
          arguments: Face.allCases, [1, 4])
    func retryAfter(face: Face, concurrency: Int) async throws {
        let clock = VirtualClock()
        let start = clock.now()
        let app = TestApp()
        // Concurrent sleepers make a VirtualClock jump while others' requests are in flight, so
        // token age is not what this test is about.
        let emulator = app.emulator(rateLimit: .custom(perHourOther: 5, perHourDefaults: 10), clock: clock, clockSkew: 1e9)
        let harness = try Harness(face, app: app, emulator: emulator, clock: clock)
        let client = harness.client(pacing: Pacing(limits: nil, maxConcurrentRequests: concurrency))
        let waits = WaitLog()
        client.onWait(waits.record)

        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<12 { group.addTask { _ = try await client.getMessageList() } }
            try await group.waitForAll()
        }
        let refused = emulator.requestCount(in: .sandbox) - 12
        #expect(refused >= 7)
        // A concurrent sleeper may already have moved the clock past a Retry-After: no wait then.
        #expect(waits.waits.count >= 7 && waits.waits.count <= refused)
        #expect(waits.waits.allSatisfy { $0.reason.contains("429") })
        #expect(clock.now() - start >= 7 * 720 - 1)
        #expect(client.requestCounts.total == emulator.requestCount(in: .sandbox))
        #expect(client.requestCounts.retries == refused)
    }

    @Test("Retry-After is UNIX milliseconds, and the client sleeps until exactly then")
    func retryAfterMilliseconds() async throws {
        let clock = VirtualClock(start: 1_790_000_000)
        let transport = StaticTransport(responses: [
            HTTPResponse(status: 429, headers: [(name: "Retry-After", value: "1790000042500")],
                         body: Data(#"{"errorCode":4290000,"errorMessage":"Rate limit exceeded."}"#.utf8)),
            HTTPResponse(status: 200, body: Data(#"{"messageIdentifiers":[]}"#.utf8)),
        ])
        let client = TestApp().client(transport: transport, clock: clock)
        let waits = WaitLog()
        client.onWait(waits.record)
        _ = try await client.getMessageList()
        #expect(clock.now() == 1_790_000_042.5)
        #expect(waits.waits.map(\.seconds) == [42.5])
        #expect(client.requestCounts == RequestCounts(configureDefault: 0, other: 2, retries: 1))
    }

    @Test("after a 429 the client stops bursting from its full bucket and sends at the published rate")
    func rateLimitDrainsBudget() async throws {
        let clock = VirtualClock(start: 1_790_000_000)
        let list = HTTPResponse(status: 200, body: Data(#"{"messageIdentifiers":[]}"#.utf8))
        let transport = StaticTransport(responses: [
            HTTPResponse(status: 429, headers: [(name: "Retry-After", value: "1790000042500")],
                         body: Data(#"{"errorCode":4290000,"errorMessage":"Rate limit exceeded."}"#.utf8)),
            list, list, list,
        ])
        let client = TestApp().client(.production, transport: transport, pacing: .apple, clock: clock)
        let waits = WaitLog()
        client.onWait(waits.record)
        for _ in 0..<3 { _ = try await client.getMessageList() }
        // Production's other endpoints: 1 per second once Apple said the hour's budget is spent.
        #expect(clock.now() == 1_790_000_044.5)
        #expect(waits.waits.map(\.seconds) == [42.5, 1, 1])
        #expect(client.requestCounts == RequestCounts(configureDefault: 0, other: 4, retries: 1))
    }

    @Test("an infinite deadline (from a Retry-After of inf or 1e30) is a cancellable wait on the system clock, not a crash")
    func absurdDeadline() async throws {
        let task = Task { try await SystemClock().sleep(until: .infinity) }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
    }

    @Test("429s are waited out a bounded number of times, then reported")
    func boundedRateLimitWaits() async throws {
        let clock = VirtualClock()
        let tooMany = HTTPResponse(status: 429, headers: [(name: "Retry-After", value: String(Int64((clock.now() + 1) * 1000)))],
                                   body: Data(#"{"errorCode":4290000,"errorMessage":"Rate limit exceeded."}"#.utf8))
        let transport = StaticTransport(responses: Array(repeating: tooMany, count: 10))
        let client = TestApp().client(transport: transport, clock: clock,
                                      retry: RetryPolicy(maxAttempts: 4, baseDelay: 1, maxDelay: 1, maxRateLimitWaits: 3))
        let error = await apiError { _ = try await client.getMessageList() }
        #expect(error?.statusAndCode == "429 4290000")
        #expect(client.requestCounts.total == 4)
    }
}
