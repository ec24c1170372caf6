import Basics
import Crypto
import Emulator
import EventStore
import EventContract
import Experiments
import Foundation
import HTTPClient
import HTTPServer
import RealtimeServer
@testable import Operations
import RetentionMessaging
@testable import RetentionSyncCommands
import RetentionMessagingModels
import Runtime
import StateLocations
import StateStore
import Testing
import TestSupport

/// The whole measurement loop against real sockets and a real S3-compatible store: simulated
/// customers ask two serve replicas, their outcomes come back both pushed to serve and pulled from
/// Notification History, and `results` measures what the simulation knows to be true.
@Suite("Decisions and outcomes, recorded and joined", .serialized)
struct OutcomeLoopTests {
    static let appAppleId: Int64 = 1_234_567_890
    static let bundleId = "com.example.loop"
    static let monthly = "com.example.loop.monthly"
    static let messageId = "00000000-0000-5000-8000-00000000000a"
    static let secret = "f00dfacef00dfacef00dfacef00dfacef00dfacef00dface"
    static let day = 86_400.0

    /// One `serve` replica: the realtime service on a loopback port, recording to `store`.
    final class Replica: Sendable {
        let service: RealtimeService
        let server: HTTPServer
        let recorder: EventRecorder

        init(name: String, snapshot: RuntimeSnapshot, roots: [X509Certificate], store: any BlockingObjectStore, spool: URL) throws {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("loop-\(name)-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let file = folder.appendingPathComponent("snapshot.json")
            try snapshot.encoded().write(to: file)
            recorder = EventRecorder(sink: ObjectStoreEventSink(store: store),
                                     settings: .init(writerId: "serve-\(name)", spool: spool, flushInterval: 0.2))
            recorder.start()
            var configuration = RealtimeService.Configuration(
                endpoints: [RealtimeEndpoint(path: "/apple/sandbox", environment: .sandbox, source: FileSnapshotSource(path: file.path),
                                             appAppleId: OutcomeLoopTests.appAppleId, bundleId: OutcomeLoopTests.bundleId)],
                trustedRoots: roots, signingKey: nil, pollInterval: 3600, clock: SystemClock())
            configuration.recording = RealtimeService.Recording(recorder: recorder, pseudonyms: try PseudonymKey(secret: OutcomeLoopTests.secret))
            let service = RealtimeService(configuration: configuration, log: RequestLog(sink: { _ in }))
            self.service = service
            server = try HTTPServer(configuration: HTTPServerConfiguration(maxBodySize: RealtimeService.maxBodySize, eventLoops: 2),
                                    synchronousHandler: { service.handle($0) })
            service.startPolling()
        }

        var realtimeURL: String { server.baseURL.absoluteString + "/apple/sandbox" }
        var notificationsURL: String { server.baseURL.absoluteString + "/notifications" }

        /// What SIGTERM does: drain, then store every event.
        func stop() async -> EventRecorder.Counters {
            service.stopPolling()
            _ = server.drain(timeout: 5)
            return await recorder.close()
        }
    }

    static func snapshot() throws -> RuntimeSnapshot {
        try RuntimeSnapshot(bundleId: bundleId, appAppleId: appAppleId, environment: .sandbox, localeFallbacks: [:], rules: [
            SnapshotRule(id: "cancel/stay-message", version: "0123456789abcdef",
                         match: SnapshotMatch(products: [monthly], split: SnapshotSplit(salt: "stay", lowerBucket: 0, upperBucket: 5000, control: true)),
                         response: SnapshotResponse(kind: .message, message: "stay", messageIdentifiers: ["en-US": messageId])),
            SnapshotRule(id: "cancel/holdout", version: "0123456789abcdef",
                         match: SnapshotMatch(products: [monthly], split: SnapshotSplit(salt: "stay", lowerBucket: 5000, upperBucket: 10_000)),
                         response: SnapshotResponse(kind: .none)),
        ]).sealed()
    }

    @Test("decisions from two replicas and outcomes from push and pull land once each, and results measures the simulation's truth")
    func wholeLoop() async throws {
        let moto = try await MotoServer.start()
        defer { moto.stop() }
        let root = StateLocation.s3(bucket: moto.bucket, key: "apps/loop")
        let environment = moto.environment(moto.writer)
        let store = try S3StateBackend().objectStore(at: root, environment: environment, transport: { CurlHTTPClient() })
        let spool = FileManager.default.temporaryDirectory.appendingPathComponent("loop-spool-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: spool) }

        // Apple, played by the emulator: its test chain signs realtime requests and notifications.
        let chain = try AppleStyleSigningChain(name: "loop", notBefore: Date(timeIntervalSinceNow: -400 * Self.day))
        let key = ES256PrivateKey.generate()
        var configuration = EmulatorConfiguration(publicKey: key.publicKey, keyId: "ABC123DEFG", issuerId: "57246542-96fe-1a63-e053-0824d011072a",
                                                  bundleId: Self.bundleId, clock: SystemClock(), appAppleId: Self.appAppleId)
        configuration.useTestChain(chain)
        let emulator = Emulator(configuration: configuration)

        let replicas = [try Replica(name: "a", snapshot: try Self.snapshot(), roots: [chain.root], store: store, spool: spool.appendingPathComponent("a")),
                        try Replica(name: "b", snapshot: try Self.snapshot(), roots: [chain.root], store: store, spool: spool.appendingPathComponent("b"))]
        let model = OutcomeModel(default: OutcomeProbabilities(keep: 0.3, renew: 0.5),
                                 answers: ["message:\(Self.messageId)": OutcomeProbabilities(keep: 0.6, renew: 0.5)])
        // Half the customers ask replica a (their notifications are pushed to it), half ask b (pushed nowhere: pull finds them).
        var simulations: [CustomerSimulation] = []
        var truth: [String: AnswerTruth] = [:]
        for (index, replica) in replicas.enumerated() {
            let simulation = try CustomerSimulation(settings: CustomerSimulationSettings(
                customers: 400, seed: UInt64(7 + index), products: [SimulatedProduct(productId: Self.monthly)], realtimeURL: replica.realtimeURL,
                pushURL: index == 0 ? replicas[0].notificationsURL : nil,
                // Periods of 28 days: every period start lies within the first backfill, which reads
                // 29 of sandbox's 30 days (a day's margin against clock skew).
                periodSeconds: 28 * Self.day,
                // Counts are checked, not speed: a loaded machine may hold a request for seconds.
                timeout: 30, model: model), emulator: emulator)
            let summary = await simulation.run()
            #expect(summary.errors == 0)
            for (answer, counts) in summary.answers {
                var total = truth[answer] ?? AnswerTruth()
                total.exposed += counts.exposed
                total.kept += counts.kept
                total.renewed += counts.renewed
                truth[answer] = total
            }
            simulations.append(simulation)
        }
        // The outcomes job, run as a scheduled job would be: now, after a day, and after the month.
        let client = RetentionMessagingClient(environment: .sandbox,
                                              credentials: Credentials(keyId: "ABC123DEFG", issuerId: "57246542-96fe-1a63-e053-0824d011072a",
                                                                       bundleId: Self.bundleId, privateKey: key),
                                              transport: emulator.transport(defaultEnvironment: .sandbox), pacing: .unlimited, clock: SystemClock())
        var pulled = 0
        var pages = 0
        var runs = 0
        var lastEnd: Int64 = 0
        func pull() async throws {
            let recorder = EventRecorder(sink: ObjectStoreEventSink(store: store),
                                         settings: .init(writerId: "outcomes-test", spool: spool.appendingPathComponent("pull")))
            recorder.start()
            let job = OutcomePull(environment: .sandbox,
                                  verifier: NotificationVerifier(trustedRoots: [chain.root], bundleId: Self.bundleId, appAppleId: Self.appAppleId,
                                                                 environment: .sandbox, clock: SystemClock()),
                                  pseudonyms: try PseudonymKey(secret: Self.secret), recorder: recorder, store: store,
                                  fetch: { request, token in try await client.notificationHistory(request, paginationToken: token) })
            let until = emulator.now.milliseconds + 60_000
            let summary = try await job.run(since: nil, until: until)
            #expect(summary.refused.isEmpty && summary.recorded == summary.notifications && summary.lostSpan == nil)
            if lastEnd > 0 { #expect(summary.startDate == lastEnd - OutcomePull.overlap) }
            lastEnd = until
            pulled += summary.recorded
            pages += summary.pages
            runs += 1
        }
        try await pull()
        // A month of renewals in a moment; both simulations share the emulator's clock.
        _ = await simulations[0].advance(by: Self.day)
        _ = await simulations[1].advance(by: Self.day)
        try await pull()
        for _ in 0..<3 {
            _ = await simulations[0].advance(by: 11.5 * Self.day)
            _ = await simulations[1].advance(by: 11.5 * Self.day)
            try await pull()
        }
        let simulatedNow = emulator.now
        let counters = [await replicas[0].stop(), await replicas[1].stop()]
        #expect(counters.allSatisfy { $0.dropped.isEmpty && $0.spooledSegments == 0 })
        let history = emulator.notificationHistory(in: .sandbox).count
        #expect(pulled >= history)
        // One call a page of 20: the job's cost per 1,000 notifications is about 50 calls.
        #expect(client.notificationHistoryCalls == pages)
        // Every page full but each run's last.
        #expect(pages <= (pulled + 19) / 20 + runs)

        // Everything lands once: decisions by event id, outcomes by notificationUUID.
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("loop-copy-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: copy) }
        try await EventMirror.update(copy, from: store)
        let decisions = try lines(copy, .decisions)
        #expect(decisions.count == 800)
        #expect(Set(decisions.compactMap { $0["eventId"] as? String }).count == 800)
        #expect(Set(decisions.compactMap { $0["customer"] as? String }).count == 800)
        let outcomes = try lines(copy, .outcomes)
        #expect(Set(outcomes.compactMap { $0["eventId"] as? String }).count == history)
        #expect(Set(outcomes.compactMap { $0["source"] as? String }) == ["push", "pull"])

        // results, as of the simulated month's end, counts what the simulation drew.
        let report = try ResultsReport.compute(source: FolderEventSource(root: copy), environment: "sandbox", flow: nil, since: nil,
                                               now: simulatedNow, breakdown: nil)
        let message = try #require(report.rows.first { $0.rule == "stay-message" })
        let holdout = try #require(report.rows.first { $0.rule == "holdout" })
        let messageTruth = try #require(truth["message:\(Self.messageId)"])
        let holdoutTruth = try #require(truth["none"])
        #expect(message.exposed == messageTruth.exposed && holdout.exposed == holdoutTruth.exposed)
        #expect(message.kept24h.successes == messageTruth.kept && holdout.kept24h.successes == holdoutTruth.kept)
        #expect(message.renewed.successes == messageTruth.renewed && holdout.renewed.successes == holdoutTruth.renewed)
        let comparison = try #require(report.comparisons.first)
        #expect(comparison.control == "stay-message" && comparison.controlKind == "splitControl")
        // The holdout keeps 30% against the message's 60%: the interval on the difference holds -0.3.
        let interval = try #require(comparison.arms.first?.kept24h.interval)
        #expect(interval.low <= -0.3 && -0.3 <= interval.high)
    }

    func lines(_ root: URL, _ stream: EventStream) throws -> [[String: Any]] {
        try eventLines(under: root, prefix: "events/v1/\(stream.rawValue)/environment=sandbox/")
    }
}

@Suite("Where outcomes pull starts reading")
struct OutcomePullWindowTests {
    static let day: Int64 = 86_400_000

    func pull(_ environment: Environment) throws -> OutcomePull {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("window-\(UUID().uuidString)")
        return OutcomePull(environment: environment,
                           verifier: NotificationVerifier(trustedRoots: [], bundleId: nil, appAppleId: nil, environment: environment, clock: SystemClock()),
                           pseudonyms: try PseudonymKey(secret: OutcomeLoopTests.secret),
                           recorder: EventRecorder(sink: FolderEventSink(root: folder), settings: .init(writerId: "w", spool: folder)),
                           store: FolderObjectStore(root: folder), fetch: { _, _ in NotificationHistoryResponse(notificationHistory: [], hasMore: false, paginationToken: nil) })
    }

    @Test("a first run backfills as far as Apple keeps history less a day against clock skew; later runs start an hour before the last one ended")
    func firstRunBackfills() throws {
        let until: Int64 = 1_800_000_000_000
        let production = try pull(.production).window(since: nil, until: until, cursor: nil)
        #expect(production.start == until - 179 * Self.day && production.lost == nil)
        let sandbox = try pull(.sandbox).window(since: nil, until: until, cursor: nil)
        #expect(sandbox.start == until - 29 * Self.day)
        let next = try pull(.production).window(since: nil, until: until, cursor: .init(until: until - Self.day))
        #expect(next.start == until - Self.day - OutcomePull.overlap && next.lost == nil)
    }

    @Test("a cursor older than Apple's history names the span whose outcomes are lost, and --since overrides the cursor")
    func staleCursorIsNamed() throws {
        let until: Int64 = 1_800_000_000_000
        let stale = try pull(.sandbox).window(since: nil, until: until, cursor: .init(until: until - 40 * Self.day))
        #expect(stale.lost == (until - 40 * Self.day - OutcomePull.overlap)...(until - 29 * Self.day))
        #expect(stale.start == until - 29 * Self.day)
        let backfill = try pull(.production).window(since: until - 2 * Self.day, until: until, cursor: .init(until: until - Self.day))
        #expect(backfill.start == until - 2 * Self.day && backfill.lost == nil)
    }
}
