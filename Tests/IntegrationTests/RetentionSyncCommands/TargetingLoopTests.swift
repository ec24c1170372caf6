import Basics
import Crypto
import Emulator
import EventStore
import EventContract
import Experiments
import Foundation
import HTTPClient
import HTTPServer
import Operations
import RealtimeServer
import RetentionMessaging
import RetentionMessagingModels
import Runtime
import StateLocations
import StateStore
import Testing
import TestSupport

/// Answering the person, end to end over real sockets and a real S3-compatible store: simulated
/// customers of several storefronts (their histories signed by the emulator as Apple signs them) ask
/// two serve replicas; one replica learns the facts from the notifications pushed to it, the other only
/// from the table the reconcile job publishes; each customer gets the rule their storefront calls for.
@Suite("Customer facts, from notifications and the published table, through two replicas", .serialized)
struct TargetingLoopTests {
    static let appAppleId: Int64 = 1_234_567_891
    static let bundleId = "com.example.targeting"
    static let monthly = "com.example.targeting.monthly"
    static let germanMessage = "00000000-0000-5000-8000-0000000000de"
    static let everyoneMessage = "00000000-0000-5000-8000-0000000000aa"
    static let secret = "feedfacefeedfacefeedfacefeedfacefeedfacefeedface"

    final class Replica: Sendable {
        let service: RealtimeService
        let server: HTTPServer
        let recorder: EventRecorder

        init(name: String, snapshot: RuntimeSnapshot, roots: [X509Certificate], store: any BlockingObjectStore, spool: URL) throws {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("targeting-\(name)-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let file = folder.appendingPathComponent("snapshot.json")
            try snapshot.encoded().write(to: file)
            recorder = EventRecorder(sink: ObjectStoreEventSink(store: store), settings: .init(writerId: "serve-\(name)", spool: spool, flushInterval: 0.1))
            recorder.start()
            var configuration = RealtimeService.Configuration(
                endpoints: [RealtimeEndpoint(path: "/apple/sandbox", environment: .sandbox, source: FileSnapshotSource(path: file.path),
                                             appAppleId: TargetingLoopTests.appAppleId, bundleId: TargetingLoopTests.bundleId)],
                trustedRoots: roots, signingKey: nil, pollInterval: 3600, clock: SystemClock())
            configuration.recording = RealtimeService.Recording(recorder: recorder, pseudonyms: try PseudonymKey(secret: TargetingLoopTests.secret),
                                                                facts: store)
            let service = RealtimeService(configuration: configuration, log: RequestLog(sink: { _ in }))
            self.service = service
            server = try HTTPServer(configuration: HTTPServerConfiguration(maxBodySize: RealtimeService.maxBodySize, eventLoops: 2),
                                    synchronousHandler: { service.handle($0) })
            service.startPolling()
        }

        var realtimeURL: String { server.baseURL.absoluteString + "/apple/sandbox" }
        var notificationsURL: String { server.baseURL.absoluteString + "/notifications" }

        func stop() async -> EventRecorder.Counters {
            service.stopPolling()
            _ = server.drain(timeout: 5)
            return await recorder.close()
        }
    }

    static func snapshot() throws -> RuntimeSnapshot {
        try RuntimeSnapshot(bundleId: bundleId, appAppleId: appAppleId, environment: .sandbox, localeFallbacks: [:], rules: [
            SnapshotRule(id: "cancel/germany", version: "0123456789abcdef",
                         match: SnapshotMatch(products: [monthly], customer: CustomerConditions(storefronts: ["DEU", "AUT"])),
                         response: SnapshotResponse(kind: .message, message: "bleib", messageIdentifiers: ["en-US": germanMessage])),
            SnapshotRule(id: "cancel/everyone", version: "0123456789abcdef", match: SnapshotMatch(products: [monthly]),
                         response: SnapshotResponse(kind: .message, message: "stay", messageIdentifiers: ["en-US": everyoneMessage])),
        ]).sealed()
    }

    @Test("a replica told by notifications and a replica reading the published table answer every customer by their storefront, for several seeds")
    func storefrontsDecideOnEveryReplica() async throws {
        let moto = try await MotoServer.start()
        defer { moto.stop() }
        let root = StateLocation.s3(bucket: moto.bucket, key: "apps/targeting")
        let store = try S3StateBackend().objectStore(at: root, environment: moto.environment(moto.writer), transport: { CurlHTTPClient() })
        let spool = FileManager.default.temporaryDirectory.appendingPathComponent("targeting-spool-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: spool) }

        let chain = try AppleStyleSigningChain(name: "targeting", notBefore: Date(timeIntervalSinceNow: -400 * 86_400))
        let key = ES256PrivateKey.generate()
        var configuration = EmulatorConfiguration(publicKey: key.publicKey, keyId: "ABC123DEFG", issuerId: "57246542-96fe-1a63-e053-0824d011072a",
                                                  bundleId: Self.bundleId, clock: SystemClock(), appAppleId: Self.appAppleId)
        configuration.useTestChain(chain)
        let emulator = Emulator(configuration: configuration)
        let replicas = [try Replica(name: "a", snapshot: try Self.snapshot(), roots: [chain.root], store: store, spool: spool.appendingPathComponent("a")),
                        try Replica(name: "b", snapshot: try Self.snapshot(), roots: [chain.root], store: store, spool: spool.appendingPathComponent("b"))]
        // The German message keeps German customers; nothing else keeps anyone much: each segment has its own truth.
        let histories = CustomerHistories(storefronts: ["DEU", "USA", "AUT", "JPN"], maxTenureDays: 500, earlierOffer: 0.3, familyShared: 0.2,
                                          models: ["DEU": OutcomeModel(default: OutcomeProbabilities(keep: 0.2),
                                                                       answers: ["message:\(Self.germanMessage)": OutcomeProbabilities(keep: 0.8)])])
        func settings(_ seed: UInt64, _ replica: Replica, push: Bool) -> CustomerSimulationSettings {
            CustomerSimulationSettings(customers: 120, seed: seed, products: [SimulatedProduct(productId: Self.monthly)], realtimeURL: replica.realtimeURL,
                                       pushURL: push ? replica.notificationsURL : nil, timeout: 30,
                                       model: OutcomeModel(default: OutcomeProbabilities(keep: 0.3)), histories: histories)
        }
        func checkEveryCustomerGotTheirStorefrontsRule(_ summary: CustomerSimulationSummary, _ context: String) {
            #expect(summary.errors == 0, "\(context)")
            for (storefront, answers) in summary.storefronts {
                let expected = ["DEU", "AUT"].contains(storefront) ? "message:\(Self.germanMessage)" : "message:\(Self.everyoneMessage)"
                #expect(Array(answers.keys) == [expected], "\(context): \(storefront) customers got \(answers.keys.sorted())")
            }
            #expect(Set(summary.storefronts.keys) == ["DEU", "USA", "AUT", "JPN"], "\(context)")
        }

        for seed: UInt64 in [3, 4] {
            // Replica a hears of each customer from the notification of their current period, pushed to it.
            let told = await (try CustomerSimulation(settings: settings(seed, replicas[0], push: true), emulator: emulator)).run()
            checkEveryCustomerGotTheirStorefrontsRule(told, "seed \(seed), replica a (notifications)")
            // The German customers' truth is the German model's: 0.8 kept with the German message.
            let german = told.storefronts["DEU"]?["message:\(Self.germanMessage)"]
            #expect(german.map { Double($0.kept) / Double($0.exposed) }.map { $0 > 0.55 } == true, "seed \(seed): \(String(describing: german))")
        }

        // The reconcile job: every outcome replica a recorded, folded into the table, published beside them.
        let stored = await waitUntilStored(replicas[0].recorder, outcomes: 240)
        #expect(stored, "replica a did not store its outcome events in time")
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("targeting-copy-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: copy) }
        try await EventMirror.update(copy, from: store)
        let pseudonyms = try PseudonymKey(secret: Self.secret)
        let folded = try FactsBuild.fold(source: FolderEventSource(root: copy), environment: "sandbox", keyId: pseudonyms.keyId, retainSince: nil)
        #expect(folded.facts.count == 240)
        let header = FactsTable.Header(bundleId: Self.bundleId, environment: "sandbox", keyId: pseudonyms.keyId, count: 0,
                                       newestFact: folded.summary.newestFact ?? 0)
        _ = try await FactsBuild.publish(folded.facts, header: header, builtAt: 1, to: store)
        replicas[1].service.reloadSnapshots()
        #expect(replicas[1].service.facts(for: .sandbox)?.table?.count == 240)

        // The same customers ask replica b, which received no notification: the table alone tells it.
        for seed: UInt64 in [3, 4] {
            let fromTable = await (try CustomerSimulation(settings: settings(seed, replicas[1], push: false), emulator: emulator)).run()
            checkEveryCustomerGotTheirStorefrontsRule(fromTable, "seed \(seed), replica b (table)")
        }
        // Customers nobody has heard of get the rule for everyone on both replicas.
        let strangers = await (try CustomerSimulation(settings: settings(99, replicas[1], push: false), emulator: emulator)).run()
        #expect(strangers.answers.keys.sorted() == ["message:\(Self.everyoneMessage)"])

        _ = [await replicas[0].stop(), await replicas[1].stop()]
        try await EventMirror.update(copy, from: store)
        let decisions = try eventLines(under: copy, prefix: "events/v1/decisions/environment=sandbox/")
        let sources = Dictionary(grouping: decisions, by: { ($0["facts"] as? String) ?? "null" }).mapValues(\.count)
        #expect(sources == ["notification": 240, "table": 240, "unknown": 120], "\(sources)")
        #expect(decisions.filter { $0["facts"] as? String == "table" }.allSatisfy { $0["storefront"] is String && $0["tenureBand"] is String })
    }

    /// Waits (at most 10 s) until the recorder has stored at least `outcomes` outcome events.
    func waitUntilStored(_ recorder: EventRecorder, outcomes: Int) async -> Bool {
        for _ in 0..<100 {
            if (recorder.snapshot.stored["outcomes"] ?? 0) >= outcomes { return true }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return false
    }
}
