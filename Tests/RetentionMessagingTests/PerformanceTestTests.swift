import Basics
import Crypto
import Emulator
import Foundation
import TestSupport
import HTTPClient
import HTTPCore
import HTTPServer
import RetentionMessaging
import RetentionMessagingModels
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A realtime endpoint on loopback for the emulator's performance test to call: it decodes every
/// signedPayload it gets, counts requests in flight, and answers with `answer`.
final class RealtimeTarget: Sendable {
    private final class Seen: Sendable {
        let state = Mutex<(payloads: [DecodedRealtimeRequestBody], inFlight: Int, maxInFlight: Int)>(([], 0, 0))
        func withLock<T>(_ body: (inout (payloads: [DecodedRealtimeRequestBody], inFlight: Int, maxInFlight: Int)) -> T) -> T {
            state.withLock { body(&$0) }
        }
    }
    private let server: HTTPServer
    private let seen = Seen()

    init(delay: Duration = .zero, answer: @escaping @Sendable () -> HTTPResponse) throws {
        let seen = self.seen
        server = try HTTPServer { request in
            seen.withLock { $0.inFlight += 1; $0.maxInFlight = max($0.maxInFlight, $0.inFlight) }
            defer { seen.withLock { $0.inFlight -= 1 } }
            struct Body: Decodable { var signedPayload: String }
            if let body = try? JSONDecoder().decode(Body.self, from: request.body),
               let jws = try? JWS.decode(body.signedPayload),
               let payload = try? JSONDecoder().decode(DecodedRealtimeRequestBody.self, from: Data(jws.payloadJSON)) {
                seen.withLock { $0.payloads.append(payload) }
            }
            if delay > .zero { try? await Task.sleep(for: delay) }
            return answer()
        }
    }

    deinit { server.stop() }

    var url: String { server.baseURL.absoluteString + "/retention" }
    var payloads: [DecodedRealtimeRequestBody] { seen.withLock { $0.payloads } }
    var maxInFlight: Int { seen.withLock { $0.maxInFlight } }

    static func json(_ text: String, status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, headers: [(name: "Content-Type", value: "application/json")], body: Data(text.utf8))
    }
}

/// Signs realtime payloads with a throwaway key and no chain: enough for targets that only read them.
struct TestSigner: RealtimeRequestSigner {
    let key = ES256PrivateKey.generate()
    func sign(_ payload: DecodedRealtimeRequestBody) throws -> String {
        try JWS.sign(headerJSON: Array(#"{"alg":"ES256"}"#.utf8), payloadJSON: Array(try CanonicalJSON.encode(payload)), key: key)
    }
}

@Suite("The emulator's sandbox performance test")
struct PerformanceTestTests {
    static let approved = Fixtures.uuid(1)
    static let pending = Fixtures.uuid(2)
    /// A threshold far above what a loopback answer takes, so a busy test machine never turns a
    /// fast answer into TIMED_OUT; the slow-server test sets its own small one.
    static let quick = PerformanceTestSettings(maxConcurrentRequests: 4, totalRequests: 12, totalDuration: 300, responseTimeThreshold: 15_000)

    /// An emulator that knows the test subscription, one APPROVED and one PENDING message, and
    /// whose sandbox realtime URL is `target` (set through the admin route, as http:// on loopback needs).
    func emulator(_ app: TestApp, target: String, settings: PerformanceTestSettings = quick) async throws -> Emulator {
        let emulator = app.emulator(performanceTest: settings, realtimeSigner: TestSigner())
        emulator.restore(.with(messages: [Self.approved: (.approved, Fixtures.plainMessage), Self.pending: (.pending, Fixtures.plainMessage)],
                               transactions: [Fixtures.subscription]), in: .sandbox)
        let set = try await emulator.transport().send(HTTPRequest(
            method: "PUT", url: URL(string: "https://api.storekit-sandbox.apple.com/emulator/realtime-url")!,
            body: Data(#"{"realtimeURL":"\#(target)"}"#.utf8)))
        #expect(set.status == 200)
        return emulator
    }

    func run(_ emulator: Emulator, app: TestApp) async throws -> PerformanceTestResultResponse {
        let client = app.client(.sandbox, transport: emulator.transport())
        let started = try await client.initiatePerformanceTest(originalTransactionId: Fixtures.subscription.originalTransactionId)
        #expect(started.config == Self.quick.config || started.config?.totalRequests != nil)
        await emulator.waitForPerformanceTest(started.requestId)
        return try await client.getPerformanceTestResult(requestId: started.requestId)
    }

    @Test("a server answering an APPROVED message at once passes, with every request signed for the test subscription")
    func passing() async throws {
        let target = try RealtimeTarget { RealtimeTarget.json(#"{"message":{"messageIdentifier":"\#(Self.approved)"}}"#) }
        let app = TestApp()
        let emulator = try await emulator(app, target: target.url)
        let result = try await run(emulator, app: app)

        #expect(result.result == .pass)
        #expect(result.successRate == 100)
        #expect(result.numPending == 0)
        #expect(result.failures == [:])
        #expect(result.target == target.url)
        #expect(result.config == Self.quick.config)
        let times = try #require(result.responseTimes)
        #expect(try #require(times.p50) <= #require(times.p99))
        let payloads = target.payloads
        #expect(payloads.count == 12)
        #expect(Set(payloads.map(\.environment)) == ["Sandbox"])
        #expect(Set(payloads.map(\.productId)) == ["com.example.monthly"])
        #expect(Set(payloads.map(\.userLocale)) == ["en-US"])
        #expect(Set(payloads.map(\.originalTransactionId)) == [Fixtures.subscription.originalTransactionId])
        #expect(Set(payloads.map(\.requestIdentifier)).count == 12)
        #expect(target.maxInFlight <= 4)
    }

    @Test("an empty answer {} counts as a success: it chooses nothing and Apple falls back")
    func emptyAnswer() async throws {
        let target = try RealtimeTarget { RealtimeTarget.json("{}") }
        let app = TestApp()
        #expect(try await run(try await emulator(app, target: target.url), app: app).result == .pass)
    }

    @Test("a server slower than the response-time threshold fails with TIMED_OUT")
    func slowServer() async throws {
        let target = try RealtimeTarget(delay: .milliseconds(400)) { RealtimeTarget.json("{}") }
        let app = TestApp()
        let settings = PerformanceTestSettings(maxConcurrentRequests: 4, totalRequests: 4, totalDuration: 0, responseTimeThreshold: 100)
        let result = try await run(try await emulator(app, target: target.url, settings: settings), app: app)
        #expect(result.result == .fail)
        #expect(result.successRate == 0)
        #expect(result.failures == ["TIMED_OUT": 4])
    }

    @Test("a server answering 500 fails with UNSUCCESSFUL_HTTP_RESPONSE_CODE")
    func serverError() async throws {
        let target = try RealtimeTarget { RealtimeTarget.json("{}", status: 500) }
        let app = TestApp()
        let result = try await run(try await emulator(app, target: target.url), app: app)
        #expect(result.result == .fail)
        #expect(result.failures == ["UNSUCCESSFUL_HTTP_RESPONSE_CODE": 12])
    }

    @Test("a server answering a message still in review fails with INVALID_RESPONSE, as do two fields at once and unknown ones",
          arguments: [
              #"{"message":{"messageIdentifier":"00000000-0000-4000-8000-000000000002"}}"#,
              #"{"message":{"messageIdentifier":"00000000-0000-4000-8000-000000000099"}}"#,
              #"{"message":{"messageIdentifier":"00000000-0000-4000-8000-000000000001"},"alternateProduct":{"messageIdentifier":"00000000-0000-4000-8000-000000000001","productId":"com.example.yearly"}}"#,
              #"{"surprise":true}"#,
              "not json",
          ])
    func invalidAnswer(body: String) async throws {
        let target = try RealtimeTarget { RealtimeTarget.json(body) }
        let app = TestApp()
        let result = try await run(try await emulator(app, target: target.url), app: app)
        #expect(result.result == .fail)
        #expect(result.failures == ["INVALID_RESPONSE": 12])
    }

    @Test("a TLS failure (https:// to a server that answers in plain text) fails with TLS_ISSUE")
    func tlsFailure() async throws {
        let target = try PlainTextListener()
        defer { target.stop() }
        let app = TestApp()
        let settings = PerformanceTestSettings(maxConcurrentRequests: 2, totalRequests: 2, totalDuration: 0, responseTimeThreshold: 15_000)
        let result = try await run(try await emulator(app, target: "https://127.0.0.1:\(target.port)/retention", settings: settings), app: app)
        #expect(result.result == .fail)
        #expect(result.failures == ["TLS_ISSUE": 2])
    }

    @Test("no more than maxConcurrentRequests are in flight at once")
    func concurrencyBound() async throws {
        let target = try RealtimeTarget(delay: .milliseconds(60)) { RealtimeTarget.json("{}") }
        let app = TestApp()
        let settings = PerformanceTestSettings(maxConcurrentRequests: 3, totalRequests: 15, totalDuration: 0, responseTimeThreshold: 15_000)
        let result = try await run(try await emulator(app, target: target.url, settings: settings), app: app)
        #expect(result.result == .pass)
        #expect(target.payloads.count == 15)
        #expect((1...3).contains(target.maxInFlight))
    }

    @Test("a second start while a run is PENDING is refused with 4000213, and the result reads PENDING with requests still to come")
    func secondStart() async throws {
        let target = try RealtimeTarget(delay: .milliseconds(50)) { RealtimeTarget.json("{}") }
        let app = TestApp()
        let settings = PerformanceTestSettings(maxConcurrentRequests: 1, totalRequests: 6, totalDuration: 600, responseTimeThreshold: 15_000)
        let emulator = try await emulator(app, target: target.url, settings: settings)
        let client = app.client(.sandbox, transport: emulator.transport())
        let started = try await client.initiatePerformanceTest(originalTransactionId: Fixtures.subscription.originalTransactionId)
        let early = try await client.getPerformanceTestResult(requestId: started.requestId)
        #expect(early.result == .pending)
        #expect((early.numPending ?? 0) > 0)
        let second = await apiError { _ = try await client.initiatePerformanceTest(originalTransactionId: Fixtures.subscription.originalTransactionId) }
        #expect(second?.statusAndCode == "400 4000213")
        await emulator.waitForPerformanceTest(started.requestId)
        #expect(try await client.getPerformanceTestResult(requestId: started.requestId).result == .pass)
    }

    @Test("production's realtime URL is refused (403 4030026) before a sandbox pass and accepted after, on one loopback server serving both environments")
    func productionUnlock() async throws {
        let target = try RealtimeTarget { RealtimeTarget.json("{}") }
        let app = TestApp()
        let emulator = try await emulator(app, target: target.url)
        let server = try EmulatorServer(emulator: emulator, environment: .sandbox)
        defer { server.stop() }
        let curl = CurlHTTPClient(configuration: .init(connectTimeout: 5, timeout: 20, environment: [:]))
        let sandbox = app.client(.sandbox, transport: curl, endpoint: server.apiEndpoint(for: .sandbox))
        let production = app.client(.production, transport: curl, endpoint: server.apiEndpoint(for: .production))

        let before = await apiError { try await production.configureRealtimeURL("https://retention.example.com/hook") }
        #expect(before?.statusAndCode == "403 4030026")

        let started = try await sandbox.initiatePerformanceTest(originalTransactionId: Fixtures.subscription.originalTransactionId)
        await emulator.waitForPerformanceTest(started.requestId)
        #expect(try await sandbox.getPerformanceTestResult(requestId: started.requestId).result == .pass)

        try await production.configureRealtimeURL("https://retention.example.com/hook")
        #expect(try await production.getRealtimeURL() == "https://retention.example.com/hook")
        #expect(emulator.state(of: .production).realtimeURL == "https://retention.example.com/hook")
    }

    @Test("a failed run does not unlock production")
    func failedRunKeepsProductionLocked() async throws {
        let target = try RealtimeTarget { RealtimeTarget.json("{}", status: 503) }
        let app = TestApp()
        let emulator = try await emulator(app, target: target.url)
        #expect(try await run(emulator, app: app).result == .fail)
        let production = app.client(.production, transport: emulator.transport())
        let refused = await apiError { try await production.configureRealtimeURL("https://retention.example.com/hook") }
        #expect(refused?.statusAndCode == "403 4030026")
    }

    @Test("the emulator calls plain http:// only on loopback", arguments: ["http://retention.example.com/hook", "http://10.0.0.1/hook", "ftp://127.0.0.1/x"])
    func plainHTTPOnlyOnLoopback(url: String) async throws {
        let app = TestApp()
        let emulator = app.emulator(realtimeSigner: TestSigner())
        let answer = try await emulator.transport().send(HTTPRequest(
            method: "PUT", url: URL(string: "https://api.storekit-sandbox.apple.com/emulator/realtime-url")!,
            body: Data(#"{"realtimeURL":"\#(url)"}"#.utf8)))
        #expect(answer.status == 400)
        #expect(emulator.state(of: .sandbox).realtimeURL == nil)
        #expect(PerformanceTestRunner.targetProblem(URL(string: url)!) != nil)
        #expect(PerformanceTestRunner.targetProblem(URL(string: "https://retention.example.com/hook")!) == nil)
    }

    @Test("test transactions registered through the admin route are kept in the state file and used by the run")
    func registerTransaction() async throws {
        let app = TestApp()
        let emulator = app.emulator()
        let answer = try await emulator.transport().send(HTTPRequest(
            method: "POST", url: URL(string: "https://api.storekit-sandbox.apple.com/emulator/transactions")!,
            body: Data(#"{"originalTransactionId":"2000000555","productId":"com.example.yearly","locale":"de-DE"}"#.utf8)))
        #expect(answer.status == 200)
        #expect(emulator.state(of: .sandbox).testTransactions["2000000555"]
            == SandboxTransaction(originalTransactionId: "2000000555", productId: "com.example.yearly", locale: "de-DE"))
        let bad = try await emulator.transport().send(HTTPRequest(
            method: "POST", url: URL(string: "https://api.storekit-sandbox.apple.com/emulator/transactions")!, body: Data("{}".utf8)))
        #expect(bad.status == 400)
    }

    @Test("a run that was PENDING when the emulator stopped reads FAIL after a restart from the state file")
    func pendingAcrossRestart() async throws {
        let directory = try temporaryFolder("perf")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("state.json")
        let id = Fixtures.uuid(0x900)
        var sandbox = EmulatorState.with(performanceTests: [id: .pending])
        sandbox.performanceTestResults[id] = PerformanceTestTally(totalRequests: 5).response(settings: .default, target: "https://x.example")
        try EmulatorStateFile(sandbox: sandbox, production: .empty).write(to: file)
        let emulator = TestApp().emulator()
        try emulator.load(from: file)
        #expect(emulator.state(of: .sandbox).performanceTests[id] == .fail)
        #expect(emulator.performanceTestResult(id)?.result == .fail)
    }

    @Test("the test chain's root is handed out for serve --root to trust, and its absence is explained")
    func testRoot() async throws {
        let pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
        let url = URL(string: "https://api.storekit-sandbox.apple.com/emulator/test-root.pem")!
        let with = Emulator(configuration: EmulatorConfiguration(publicKey: TestApp().key.publicKey, clock: SystemClock(), realtimeRootCertificatePEM: pem))
        let answer = try await with.transport().send(HTTPRequest(method: "GET", url: url))
        #expect(answer.status == 200)
        #expect(String(decoding: answer.body, as: UTF8.self) == pem)
        let without = try await TestApp().emulator().transport().send(HTTPRequest(method: "GET", url: url))
        #expect(without.status == 404)
        #expect(String(decoding: without.body, as: UTF8.self).contains("no test chain"))
    }

    @Test("settings outside the bounds are reported, so every run is bounded in count and time",
          arguments: [PerformanceTestSettings(maxConcurrentRequests: 0), PerformanceTestSettings(totalRequests: 1_000_000),
                      PerformanceTestSettings(totalDuration: 86_400_000), PerformanceTestSettings(responseTimeThreshold: 0),
                      PerformanceTestSettings(successRateThreshold: 1.5)])
    func bounds(settings: PerformanceTestSettings) {
        #expect(settings.problem != nil)
        #expect(PerformanceTestSettings.default.problem == nil)
    }

    @Test("percentiles are nearest-rank over every finished request")
    func percentiles() {
        var tally = PerformanceTestTally(totalRequests: 100)
        tally.results[.success] = 100
        tally.responseTimes = (1...100).map { Int64($0) }
        let times = tally.response(settings: .default, target: "t").responseTimes
        #expect(times == PerformanceTestResponseTimes(average: 50, p50: 50, p90: 90, p95: 95, p99: 99))
    }
}

/// A loopback listener that answers every connection with a plain-text HTTP response and closes
/// it: a TLS client reading that as a handshake fails at once.
final class PlainTextListener: Sendable {
    private let descriptor: Int32
    let port: UInt16

    init() throws {
        let descriptor = SocketPlatform.streamSocket(family: AF_INET)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && listen(descriptor, 8) == 0
                && getsockname(descriptor, $0, &length) == 0 }
        }
        guard bound else { close(descriptor); throw HTTPError(.other, "cannot listen on loopback") }
        self.descriptor = descriptor
        port = UInt16(bigEndian: address.sin_port)
        // A running thread keeps itself alive; the listener needs no handle on it.
        let thread = Thread {
            // The accepting thread closes the listener when accept fails (after `stop`): closing
            // it from `stop` would let accept run on a number the system has since given to
            // another socket of the process.
            defer { close(descriptor) }
            while true {
                let connection = accept(descriptor, nil, nil)
                guard connection >= 0 else { return }
                let answer = Array("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8)
                _ = answer.withUnsafeBytes { write(connection, $0.baseAddress, $0.count) }
                close(connection)
            }
        }
        thread.start()
    }

    /// Shutting the socket down wakes the blocked accept, which then ends the thread; call it once.
    func stop() {
        shutdown(descriptor, Int32(SHUT_RDWR))
    }
}
