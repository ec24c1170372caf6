import Basics
import Crypto
import Emulator
import EventStore
import Foundation
import HTTPClient
import HTTPCore
import HTTPServer
import RealtimeServer
import RetentionMessagingModels
import Runtime
import StateStore
import Testing
import TestSupport

/// The live lookup end to end over real sockets: the emulator plays Apple (its customers' histories
/// signed as Apple signs them, Get All Subscription Statuses served from what it notified), and a
/// replica that was told nothing about the customers looks each one up within its deadline.
@Suite("Looking up a customer serve knows nothing of", .serialized)
struct LiveLookupTests {
    static let issuerId = "57246542-96fe-1a63-e053-0824d011072a"

    /// Apple as the emulator plays it, over HTTP on loopback, and the In-App Purchase key it accepts.
    struct Apple {
        let emulator: Emulator
        let server: EmulatorServer
        let chain: AppleStyleSigningChain
        let key: ES256PrivateKey

        /// `forger`: signs the notifications and the lookups' answers instead of Apple's chain.
        init(forger: AppleStyleSigningChain? = nil) throws {
            let chain = try AppleStyleSigningChain(name: "lookup", notBefore: Date(timeIntervalSinceNow: -400 * 86_400))
            key = ES256PrivateKey.generate()
            var configuration = EmulatorConfiguration(publicKey: key.publicKey, keyId: "ABC123DEFG", issuerId: LiveLookupTests.issuerId,
                                                      bundleId: TargetingLoopTests.bundleId, clock: SystemClock(),
                                                      appAppleId: TargetingLoopTests.appAppleId)
            configuration.useTestChain(chain)
            if let forger { configuration.notificationSigner = NotificationSigner(chain: forger) }
            emulator = Emulator(configuration: configuration)
            server = try EmulatorServer(emulator: emulator, environment: .sandbox)
            self.chain = chain
        }
    }

    /// A replica with the live lookup on, its events in a folder.
    final class Replica: Sendable {
        let service: RealtimeService
        let server: HTTPServer
        let recorder: EventRecorder
        let folder: URL

        init(apple: Apple, trusting roots: [X509Certificate], deadline: Double = 0.3, perSecond: Double? = nil, lookupsAt base: URL? = nil) throws {
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("lookup-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let file = folder.appendingPathComponent("snapshot.json")
            try TargetingLoopTests.snapshot().encoded().write(to: file)
            let store = FolderObjectStore(root: folder.appendingPathComponent("store"))
            recorder = EventRecorder(sink: ObjectStoreEventSink(store: store),
                                     settings: .init(writerId: "serve-lookup", spool: folder.appendingPathComponent("spool"), flushInterval: 0.1))
            recorder.start()
            var configuration = RealtimeService.Configuration(
                endpoints: [RealtimeEndpoint(path: "/apple/sandbox", environment: .sandbox, source: FileSnapshotSource(path: file.path),
                                             appAppleId: TargetingLoopTests.appAppleId, bundleId: TargetingLoopTests.bundleId)],
                trustedRoots: roots, signingKey: OfferSigningKey(keyId: "ABC123DEFG", issuerId: LiveLookupTests.issuerId, privateKey: apple.key),
                pollInterval: 3600, clock: SystemClock())
            configuration.recording = RealtimeService.Recording(recorder: recorder, pseudonyms: try PseudonymKey(secret: TargetingLoopTests.secret),
                                                                facts: store)
            configuration.lookup = LiveLookupSettings(deadline: deadline, perSecond: perSecond, base: base ?? apple.server.baseURL,
                                                      transport: CurlHTTPClient(configuration: .init(connectTimeout: 5, timeout: 5,
                                                                                                     maxConcurrentTransfers: 16, environment: [:])))
            let service = RealtimeService(configuration: configuration, log: RequestLog(sink: { _ in }))
            self.service = service
            server = try HTTPServer(configuration: HTTPServerConfiguration(maxBodySize: RealtimeService.maxBodySize, eventLoops: 2),
                                    deferringHandler: { service.handle($0, later: $1) })
            service.startPolling()
        }

        var realtimeURL: String { server.baseURL.absoluteString + "/apple/sandbox" }

        /// Stops, stores the events, and returns the decision events.
        func stop() async throws -> [[String: Any]] {
            service.stopPolling()
            _ = server.drain(timeout: 5)
            _ = await recorder.close()
            defer { try? FileManager.default.removeItem(at: folder) }
            return try eventLines(under: folder.appendingPathComponent("store"), prefix: "events/v1/decisions/environment=sandbox/")
        }

        func lookups(_ result: String) -> Int {
            let text = service.metrics.render(now: UTCTime(milliseconds: 0))
            let line = text.split(separator: "\n").first { $0.hasPrefix("retention_sync_lookups_total{") && $0.contains("result=\"\(result)\"") }
            return line.flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
        }
    }

    static let histories = CustomerHistories(storefronts: ["DEU", "USA", "AUT", "JPN"], maxTenureDays: 500, earlierOffer: 0.3, familyShared: 0.2)

    static func customers(_ count: Int, seed: UInt64, replica: Replica) -> CustomerSimulationSettings {
        // No push URL: serve hears nothing of these customers; only Apple (the emulator) knows them.
        CustomerSimulationSettings(customers: count, seed: seed, products: [SimulatedProduct(productId: TargetingLoopTests.monthly)],
                                   realtimeURL: replica.realtimeURL, pushURL: nil, timeout: 120,
                                   model: OutcomeModel(default: OutcomeProbabilities(keep: 0.3)), histories: histories)
    }

    static func rule(for storefront: String) -> String {
        ["DEU", "AUT"].contains(storefront) ? "message:\(TargetingLoopTests.germanMessage)" : "message:\(TargetingLoopTests.everyoneMessage)"
    }

    @Test("each customer is looked up once, answered by the storefront Apple signed, and remembered for the next request")
    func lookedUpCustomersGetTheirStorefrontsRule() async throws {
        let apple = try Apple()
        defer { apple.server.stop() }
        let replica = try Replica(apple: apple, trusting: [apple.chain.root], deadline: 60)
        for seed: UInt64 in [11, 12] {
            let summary = await (try CustomerSimulation(settings: Self.customers(60, seed: seed, replica: replica), emulator: apple.emulator)).run()
            #expect(summary.errors == 0)
            for (storefront, answers) in summary.storefronts {
                #expect(Array(answers.keys) == [Self.rule(for: storefront)], "seed \(seed): \(storefront) customers got \(answers.keys.sorted())")
            }
            #expect(Set(summary.storefronts.keys) == ["DEU", "USA", "AUT", "JPN"])
        }
        #expect(apple.emulator.subscriptionStatusRequests(in: .sandbox) == 120)
        #expect(replica.service.lookupsSent == 120)
        // The same customers again: what the lookups found is remembered, and no request spends the budget.
        let again = await (try CustomerSimulation(settings: Self.customers(60, seed: 11, replica: replica), emulator: apple.emulator)).run()
        for (storefront, answers) in again.storefronts { #expect(Array(answers.keys) == [Self.rule(for: storefront)]) }
        #expect(apple.emulator.subscriptionStatusRequests(in: .sandbox) == 120)
        #expect(replica.lookups("found") == 120)

        let decisions = try await replica.stop()
        #expect(decisions.count == 180)
        #expect(decisions.allSatisfy { $0["facts"] as? String == "lookup" && $0["storefront"] is String && $0["tenureBand"] is String })
        // A lookup sees the newest transaction only: unless it was bought under an offer, offer history stays unknown.
        #expect(decisions.allSatisfy { ($0["offerWithin90Days"] as? Bool) != false })
    }

    @Test("a lookup Apple answers after the deadline leaves the customer unknown: answered in time with the rule for everyone")
    func lateLookupMeansUnknown() async throws {
        let apple = try Apple()
        defer { apple.server.stop() }
        apple.emulator.setFaults(FaultInjection(latency: 1))
        let replica = try Replica(apple: apple, trusting: [apple.chain.root], deadline: 0.05)
        let summary = await (try CustomerSimulation(settings: Self.customers(8, seed: 21, replica: replica), emulator: apple.emulator)).run()
        #expect(summary.errors == 0)
        #expect(summary.answers.keys.sorted() == ["message:\(TargetingLoopTests.everyoneMessage)"])
        #expect(replica.lookups("late") == 8)
        let decisions = try await replica.stop()
        #expect(decisions.count == 8 && decisions.allSatisfy { $0["facts"] as? String == "unknown" })
    }

    @Test("lookups never spend more than their pace: past it a customer is answered as unknown without one")
    func pacedLookups() async throws {
        let apple = try Apple()
        defer { apple.server.stop() }
        // 0.02 per second: a minute's burst is a single lookup.
        let replica = try Replica(apple: apple, trusting: [apple.chain.root], deadline: 60, perSecond: 0.02)
        let summary = await (try CustomerSimulation(settings: Self.customers(10, seed: 31, replica: replica), emulator: apple.emulator)).run()
        #expect(summary.errors == 0)
        #expect(apple.emulator.subscriptionStatusRequests(in: .sandbox) == 1)
        #expect(replica.lookups("paced") == 9)
        let decisions = try await replica.stop()
        #expect(Dictionary(grouping: decisions, by: { $0["facts"] as? String ?? "null" }).mapValues(\.count) == ["lookup": 1, "unknown": 9])
    }

    @Test("Apple's 429 pauses the lookups until its Retry-After: nothing more is sent meanwhile")
    func rateLimitedByApplePausesLookups() async throws {
        let apple = try Apple()
        defer { apple.server.stop() }
        let asked = Locked(0)
        // An App Store Server API whose budget is spent for the next hour.
        let spent = try HTTPServer(configuration: HTTPServerConfiguration(), synchronousHandler: { _ in
            asked.withLock { $0 += 1 }
            let retryAfter = Int64((Date().timeIntervalSince1970 + 3600) * 1000)
            return HTTPResponse(status: 429, headers: [("Retry-After", String(retryAfter)), ("Content-Type", "application/json")],
                                body: Data(#"{"errorCode":4290000,"errorMessage":"Rate limit exceeded."}"#.utf8))
        })
        defer { spent.stop() }
        let replica = try Replica(apple: apple, trusting: [apple.chain.root], deadline: 60, lookupsAt: spent.baseURL)
        var settings = Self.customers(6, seed: 51, replica: replica)
        settings.concurrency = 1
        let summary = await (try CustomerSimulation(settings: settings, emulator: apple.emulator)).run()
        #expect(summary.errors == 0)
        #expect(asked.withLock { $0 } == 1)
        #expect(replica.lookups("rate_limited") == 1 && replica.lookups("paced") == 5)
        let decisions = try await replica.stop()
        #expect(decisions.count == 6 && decisions.allSatisfy { $0["facts"] as? String == "unknown" })
    }

    @Test("a lookup answer signed by a chain serve does not trust changes nothing: the customer stays unknown")
    func forgedLookupIsRefused() async throws {
        // The realtime requests are signed by the chain serve trusts; the lookups' answers are not.
        let stranger = try AppleStyleSigningChain(name: "stranger", notBefore: Date(timeIntervalSinceNow: -400 * 86_400))
        let apple = try Apple(forger: stranger)
        defer { apple.server.stop() }
        let replica = try Replica(apple: apple, trusting: [apple.chain.root], deadline: 60)
        let summary = await (try CustomerSimulation(settings: Self.customers(6, seed: 41, replica: replica), emulator: apple.emulator)).run()
        #expect(summary.errors == 0)
        #expect(summary.answers.keys.sorted() == ["message:\(TargetingLoopTests.everyoneMessage)"])
        #expect(replica.lookups("refused") == 6)
        let decisions = try await replica.stop()
        #expect(decisions.count == 6 && decisions.allSatisfy { $0["facts"] as? String == "unknown" })
    }
}
