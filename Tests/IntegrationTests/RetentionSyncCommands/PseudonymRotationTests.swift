import Basics
import Crypto
import Emulator
import EventStore
import Experiments
import Foundation
import HTTPServer
import Operations
import RealtimeServer
import RetentionMessaging
import RetentionMessagingModels
import Runtime
import StateStore
import Testing
import TestSupport

/// Rotating the pseudonym secret in the middle of an experiment: customers were exposed under the old
/// key; their outcomes arrive after the rotation. While the old secret is kept as the previous one,
/// every outcome is recorded under both keys, so results still follows the customers exposed before.
@Suite("Rotating the pseudonym secret", .serialized)
struct PseudonymRotationTests {
    static let oldSecret = OutcomeLoopTests.secret
    static let newSecret = "0123456789abcdef0123456789abcdef0123456789abcdef"
    static let day = 86_400.0

    final class Replica: Sendable {
        let service: RealtimeService
        let server: HTTPServer
        let recorder: EventRecorder

        init(_ name: String, current: PseudonymKey, previous: PseudonymKey?, roots: [X509Certificate], store: FolderObjectStore, spool: URL) throws {
            let file = spool.appendingPathComponent("snapshot-\(name).json")
            try FileManager.default.createDirectory(at: spool, withIntermediateDirectories: true)
            try OutcomeLoopTests.snapshot().encoded().write(to: file)
            recorder = EventRecorder(sink: ObjectStoreEventSink(store: store),
                                     settings: .init(writerId: "serve-\(name)", spool: spool.appendingPathComponent(name), flushInterval: 0.1))
            recorder.start()
            var configuration = RealtimeService.Configuration(
                endpoints: [RealtimeEndpoint(path: "/apple/sandbox", environment: .sandbox, source: FileSnapshotSource(path: file.path),
                                             appAppleId: OutcomeLoopTests.appAppleId, bundleId: OutcomeLoopTests.bundleId)],
                trustedRoots: roots, signingKey: nil, pollInterval: 3600, clock: SystemClock())
            var recording = RealtimeService.Recording(recorder: recorder, pseudonyms: current)
            recording.previousPseudonyms = previous
            configuration.recording = recording
            let service = RealtimeService(configuration: configuration, log: RequestLog(sink: { _ in }))
            self.service = service
            server = try HTTPServer(configuration: HTTPServerConfiguration(maxBodySize: RealtimeService.maxBodySize, eventLoops: 1),
                                    deferringHandler: { service.handle($0, later: $1) })
            service.startPolling()
        }

        func stop() async {
            service.stopPolling()
            _ = server.drain(timeout: 5)
            _ = await recorder.close()
        }
    }

    /// Customers exposed by a replica on the old key; their notifications pushed to a replica already on
    /// the new key, and pulled by an outcomes job on the new key; `keepPrevious` says whether both keep
    /// the old secret as the previous one. Returns the report as of the month's end and the truth.
    func rotateMidExperiment(keepPrevious: Bool, compact: Bool = false) async throws -> (ResultsReport, [String: AnswerTruth], decisionKeys: Set<String>,
                                                                   outcomeKeys: [String: Int]) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rotation-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = FolderObjectStore(root: folder.appendingPathComponent("store"))
        let spool = folder.appendingPathComponent("spool")
        let chain = try AppleStyleSigningChain(name: "rotation", notBefore: Date(timeIntervalSinceNow: -400 * Self.day))
        let key = ES256PrivateKey.generate()
        var configuration = EmulatorConfiguration(publicKey: key.publicKey, keyId: "ABC123DEFG", issuerId: LiveLookupTests.issuerId,
                                                  bundleId: OutcomeLoopTests.bundleId, clock: SystemClock(), appAppleId: OutcomeLoopTests.appAppleId)
        configuration.useTestChain(chain)
        let emulator = Emulator(configuration: configuration)
        let old = try PseudonymKey(secret: Self.oldSecret), new = try PseudonymKey(secret: Self.newSecret)
        let before = try Replica("before", current: old, previous: nil, roots: [chain.root], store: store, spool: spool)
        let after = try Replica("after", current: new, previous: keepPrevious ? old : nil, roots: [chain.root], store: store, spool: spool)
        let model = OutcomeModel(default: OutcomeProbabilities(keep: 0.3, renew: 0.5),
                                 answers: ["message:\(OutcomeLoopTests.messageId)": OutcomeProbabilities(keep: 0.6, renew: 0.5)])
        let simulation = try CustomerSimulation(settings: CustomerSimulationSettings(
            customers: 200, seed: 61, products: [SimulatedProduct(productId: OutcomeLoopTests.monthly)],
            realtimeURL: before.server.baseURL.absoluteString + "/apple/sandbox",
            pushURL: after.server.baseURL.absoluteString + "/notifications", timeout: 30, model: model), emulator: emulator)
        let summary = await simulation.run()
        #expect(summary.errors == 0)
        let client = RetentionMessagingClient(environment: .sandbox,
                                              credentials: Credentials(keyId: "ABC123DEFG", issuerId: LiveLookupTests.issuerId,
                                                                       bundleId: OutcomeLoopTests.bundleId, privateKey: key),
                                              transport: emulator.transport(defaultEnvironment: .sandbox), pacing: .unlimited, clock: SystemClock())
        _ = await simulation.advance(by: 35 * Self.day)
        let recorder = EventRecorder(sink: ObjectStoreEventSink(store: store), settings: .init(writerId: "outcomes", spool: spool.appendingPathComponent("pull")))
        recorder.start()
        var job = OutcomePull(environment: .sandbox,
                              verifier: NotificationVerifier(trustedRoots: [chain.root], bundleId: OutcomeLoopTests.bundleId,
                                                             appAppleId: OutcomeLoopTests.appAppleId, environment: .sandbox, clock: SystemClock()),
                              pseudonyms: new, recorder: recorder, store: store,
                              fetch: { request, token in try await client.notificationHistory(request, paginationToken: token) })
        job.previousPseudonyms = keepPrevious ? old : nil
        _ = try await job.run(since: nil, until: emulator.now.milliseconds + 60_000)
        _ = await recorder.close()
        await before.stop()
        await after.stop()
        if compact {
            // The event store compacted afterwards: one notification under two keys stays two lines.
            let summary = try await EventMaintenance.compact(store, environment: "sandbox", now: emulator.now.milliseconds + 86_400_000)
            #expect(summary.partitions > 0 && summary.duplicates > 0)
        }
        let decisions = try eventLines(under: folder.appendingPathComponent("store"), prefix: "events/v1/decisions/environment=sandbox/")
        let outcomes = try eventLines(under: folder.appendingPathComponent("store"), prefix: "events/v1/outcomes/environment=sandbox/")
        let report = try ResultsReport.compute(source: FolderEventSource(root: folder.appendingPathComponent("store")), environment: "sandbox",
                                               flow: nil, since: nil, now: emulator.now, breakdown: nil)
        return (report, summary.answers, Set(decisions.compactMap { $0["keyId"] as? String }),
                Dictionary(grouping: outcomes, by: { $0["keyId"] as? String ?? "null" }).mapValues(\.count))
    }

    @Test("with the old secret kept as the previous one, results still counts the renewals of customers exposed before the rotation, compacted or not",
          arguments: [false, true])
    func previousSecretKeepsCustomersFollowed(compacted: Bool) async throws {
        let (report, truth, decisionKeys, outcomeKeys) = try await rotateMidExperiment(keepPrevious: true, compact: compacted)
        let old = try PseudonymKey(secret: Self.oldSecret).keyId, new = try PseudonymKey(secret: Self.newSecret).keyId
        #expect(decisionKeys == [old])
        // Every outcome under both keys (pushed and pulled copies of one notification count once per key).
        #expect(Set(outcomeKeys.keys) == [old, new])
        let message = try #require(report.rows.first { $0.rule == "stay-message" })
        let holdout = try #require(report.rows.first { $0.rule == "holdout" })
        let messageTruth = try #require(truth["message:\(OutcomeLoopTests.messageId)"]), holdoutTruth = try #require(truth["none"])
        #expect(message.renewed.successes == messageTruth.renewed && holdout.renewed.successes == holdoutTruth.renewed)
        #expect(message.kept24h.successes == messageTruth.kept && holdout.kept24h.successes == holdoutTruth.kept)
        #expect(messageTruth.renewed + holdoutTruth.renewed > 0)
    }

    @Test("without the previous secret, the customers exposed before the rotation are lost to results: none of their renewals counts")
    func withoutPreviousSecretRenewalsAreLost() async throws {
        let (report, truth, _, outcomeKeys) = try await rotateMidExperiment(keepPrevious: false)
        let new = try PseudonymKey(secret: Self.newSecret).keyId
        #expect(Set(outcomeKeys.keys) == [new])
        let renewed = report.rows.reduce(0) { $0 + $1.renewed.successes }
        #expect(renewed == 0)
        #expect(truth.values.reduce(0) { $0 + $1.renewed } > 0)
        #expect(report.warnings.contains { $0.contains("pseudonym key") }, "\(report.warnings)")
    }

    @Test("the previous secret is refused when it is the current one, or set without a current one")
    func previousSecretIsChecked() throws {
        let same = [PseudonymKey.environmentVariable: Self.newSecret, PseudonymKey.previousEnvironmentVariable: Self.newSecret]
        let current = try PseudonymKey.fromEnvironment(same)
        #expect(throws: PseudonymKey.Refusal.self) { try PseudonymKey.previousFromEnvironment(same, current: current) }
        #expect(throws: PseudonymKey.Refusal.self) {
            try PseudonymKey.previousFromEnvironment([PseudonymKey.previousEnvironmentVariable: Self.oldSecret], current: nil)
        }
        let rotating = [PseudonymKey.environmentVariable: Self.newSecret, PseudonymKey.previousEnvironmentVariable: Self.oldSecret]
        let previous = try PseudonymKey.previousFromEnvironment(rotating, current: try PseudonymKey.fromEnvironment(rotating))
        #expect(previous?.keyId == (try PseudonymKey(secret: Self.oldSecret)).keyId)
    }
}
