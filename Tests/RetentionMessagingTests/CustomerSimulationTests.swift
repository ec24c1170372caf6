import Basics
import Crypto
import Emulator
import Foundation
import HTTPClient
import HTTPCore
import HTTPServer
import RetentionMessaging
import RetentionMessagingModels
import Testing
import TestSupport

/// A realtime server on loopback whose answer depends on the request: it verifies nothing, decodes
/// each signedPayload and answers `answer(payload)` as JSON.
final class CustomersTarget: Sendable {
    private let server: HTTPServer
    private let seen = Locked<[String]>()

    init(status: Int = 200, answer: @escaping @Sendable (DecodedRealtimeRequestBody) -> String) throws {
        let seen = seen
        server = try HTTPServer { request in
            struct Body: Decodable { var signedPayload: String }
            guard let body = try? JSONDecoder().decode(Body.self, from: request.body),
                  let jws = try? JWS.decode(body.signedPayload),
                  let payload = try? JSONDecoder().decode(DecodedRealtimeRequestBody.self, from: Data(jws.payloadJSON)) else {
                return HTTPResponse(status: 400)
            }
            seen.append(body.signedPayload)
            return HTTPResponse(status: status, headers: [(name: "Content-Type", value: "application/json")], body: Data(answer(payload).utf8))
        }
    }

    func stop() { server.stop() }
    var url: String { server.baseURL.absoluteString + "/retention" }
    /// Every signedPayload received, in arrival order.
    var requests: [String] { seen.value }
}

/// An app's notification URL on loopback: records every body and answers `status`, or, with
/// `failing`, 500 to the first `failing` posts of each body and then 201.
final class PushReceiver: Sendable {
    private let server: HTTPServer
    private let bodies = Locked<[Data]>()

    init(status: Int) throws {
        let bodies = bodies
        server = try HTTPServer { request in
            bodies.append(request.body)
            return HTTPResponse(status: status)
        }
    }

    init(failing: Int) throws {
        let bodies = bodies
        server = try HTTPServer { request in
            let before = bodies.withLock { bodies in
                defer { bodies.append(request.body) }
                return bodies.count(where: { $0 == request.body })
            }
            return HTTPResponse(status: before < failing ? 500 : 201)
        }
    }

    func stop() { server.stop() }
    var url: String { server.baseURL.absoluteString + "/notifications" }
    var received: [ResponseBodyV2] { bodies.value.compactMap { try? JSONDecoder().decode(ResponseBodyV2.self, from: $0) } }
}

/// The one field every signed App Store payload carries, read to verify the chain at its date.
private struct Dated: Decodable { var signedDate: Int64 }

@Suite("Simulated customers")
struct CustomerSimulationTests {
    static let message = Fixtures.uuid(7)
    static let appAppleId: Int64 = 1_234_567_890
    static let monthly = SimulatedProduct(productId: "com.example.monthly", price: 9990, currency: "USD")
    static let day: Double = 86_400

    let app = TestApp()
    /// Valid for 400 days back, so period starts up to a period ago verify at their own signedDate.
    let chain: AppleStyleSigningChain

    init() throws {
        chain = try AppleStyleSigningChain(name: "customers test", notBefore: Date(timeIntervalSinceNow: -400 * Self.day))
    }

    func emulator() -> Emulator {
        var configuration = EmulatorConfiguration(publicKey: app.key.publicKey, keyId: TestApp.keyId, issuerId: TestApp.issuerId,
                                                  bundleId: TestApp.bundleId, clock: SystemClock(), appAppleId: Self.appAppleId)
        configuration.useTestChain(chain)
        return Emulator(configuration: configuration)
    }

    func settings(customers: Int, seed: UInt64 = 42, target: CustomersTarget, push: PushReceiver? = nil,
                  model: OutcomeModel) -> CustomerSimulationSettings {
        CustomerSimulationSettings(customers: customers, seed: seed, products: [Self.monthly], locales: ["en-US", "de-DE"],
                                   realtimeURL: target.url, pushURL: push?.url, model: model)
    }

    /// Half the customers (by their transaction id) are shown the message, the others get `{}`.
    func halfMessageTarget() throws -> CustomersTarget {
        try CustomersTarget { payload in
            (payload.originalTransactionId.last?.wholeNumberValue ?? 0) % 2 == 0 ? #"{"message":{"messageIdentifier":"\#(Self.message)"}}"# : "{}"
        }
    }

    /// Verifies a JWS as a receiver does: x5c chain to the test root at the payload's own signedDate,
    /// Apple's marker extensions, and the leaf's signature. Returns the payload.
    func verified<T: Decodable>(_ compact: String, as type: T.Type) throws -> T {
        let jws = try JWS.decode(compact)
        #expect(jws.header.alg == "ES256")
        let x5c = try #require(jws.header.x5c)
        #expect(x5c.count == 3)
        let certificates = try x5c.map { try X509Certificate(base64DER: $0) }
        let signedDate = try JSONDecoder().decode(Dated.self, from: Data(jws.payloadJSON)).signedDate
        try X509Chain.verify(chain: certificates, trustedRoots: [chain.root], at: Date(timeIntervalSince1970: Double(signedDate) / 1000),
                             requiredExtensions: [(0, AppleStyleSigningChain.leafOID), (1, AppleStyleSigningChain.intermediateOID)])
        let leafKey: ES256PublicKey = try #require(certificates[0].publicKey)
        #expect(jws.verify(with: leafKey))
        return try JSONDecoder().decode(T.self, from: Data(jws.payloadJSON))
    }

    @Test("every notification verifies to the test root, its nested transaction and renewal info too, with the fields produced")
    func signedNotifications() async throws {
        let offerKey = ES256PrivateKey.generate()
        let signature = try JWS.sign(headerJSON: Array(#"{"alg":"ES256"}"#.utf8),
                                     payloadJSON: Array(#"{"offerIdentifier":"winback50","productId":"com.example.monthly"}"#.utf8), key: offerKey)
        let target = try CustomersTarget { _ in
            #"{"promotionalOffer":{"messageIdentifier":"\#(Self.message)","promotionalOfferSignatureV2":"\#(signature)"}}"#
        }
        defer { target.stop() }
        let emulator = emulator()
        let simulation = try CustomerSimulation(
            settings: settings(customers: 3, target: target, model: OutcomeModel(default: OutcomeProbabilities(keep: 1, redeem: 1, renew: 1))),
            emulator: emulator)
        let summary = await simulation.run()
        #expect(summary.answers == ["offer:winback50": AnswerTruth(exposed: 3, kept: 3, redeemed: 3, renewed: 3)])
        #expect(summary.errors == 0)
        #expect(summary.notifications == 9)
        #expect(emulator.notificationHistory(in: .sandbox).count == 3)

        // The realtime requests are the performance test's: signed by the same chain, for these customers.
        let requests = try target.requests.map { try verified($0, as: DecodedRealtimeRequestBody.self) }
        #expect(requests.count == 3)
        #expect(Set(requests.map(\.appAppleId)) == [Self.appAppleId])
        #expect(Set(requests.map(\.environment)) == ["Sandbox"])

        #expect(await simulation.advance(by: 31 * Self.day) == 6)
        let history = emulator.notificationHistory(in: .sandbox)
        #expect(history.count == 9)
        var byCustomer: [String: [(NotificationPayload, TransactionPayload, RenewalInfoPayload)]] = [:]
        for record in history {
            let payload = try verified(record.signedPayload, as: NotificationPayload.self)
            #expect(payload.signedDate == record.signedDate)
            #expect(payload.version == "2.0")
            #expect(payload.notificationUUID.count == 36 && payload.notificationUUID == payload.notificationUUID.lowercased())
            let data = try #require(payload.data)
            #expect(data.environment == "Sandbox")
            #expect(data.appAppleId == Self.appAppleId)
            #expect(data.bundleId == TestApp.bundleId)
            let transaction = try verified(try #require(data.signedTransactionInfo), as: TransactionPayload.self)
            let renewal = try verified(try #require(data.signedRenewalInfo), as: RenewalInfoPayload.self)
            #expect(transaction.signedDate == payload.signedDate && renewal.signedDate == payload.signedDate)
            #expect(transaction.bundleId == TestApp.bundleId)
            #expect(renewal.originalTransactionId == transaction.originalTransactionId)
            byCustomer[transaction.originalTransactionId, default: []].append((payload, transaction, renewal))
        }
        #expect(Set(byCustomer.keys) == Set(requests.map(\.originalTransactionId)))
        for (_, notifications) in byCustomer {
            #expect(notifications.count == 3)
            let (start, current, _) = notifications[0]
            #expect(["DID_RENEW", "SUBSCRIBED"].contains(start.notificationType))
            #expect(start.signedDate == current.purchaseDate)
            #expect(current.price == 9990 && current.currency == "USD")
            let periodEnd = try #require(current.expiresDate)
            #expect(periodEnd > requests[0].signedDate)

            let (redeemed, offerTransaction, offerRenewal) = notifications[1]
            #expect(redeemed.notificationType == "OFFER_REDEEMED" && redeemed.subtype == nil)
            #expect(offerTransaction.offerType == 2 && offerTransaction.offerIdentifier == "winback50")
            #expect(offerTransaction.price == 4990)
            #expect(offerRenewal.offerIdentifier == "winback50" && offerRenewal.autoRenewStatus == 1)

            let (renewed, next, _) = notifications[2]
            #expect(renewed.notificationType == "DID_RENEW" && renewed.signedDate == periodEnd)
            #expect(next.purchaseDate == periodEnd && next.expiresDate == periodEnd + 30 * 86_400_000)
            #expect(next.transactionReason == "RENEWAL" && next.offerIdentifier == "winback50" && next.price == 4990)
            #expect(next.transactionId != current.transactionId)
        }
    }

    @Test("2,000 customers keep as often as the model says, per answer, and every notification is pushed and kept in history")
    func keepRates() async throws {
        let target = try halfMessageTarget()
        let push = try PushReceiver(status: 200)
        defer { target.stop(); push.stop() }
        let emulator = emulator()
        let model = OutcomeModel(default: OutcomeProbabilities(keep: 0.3, renew: 0.5),
                                 answers: ["message:\(Self.message)": OutcomeProbabilities(keep: 0.6, renew: 0.5)])
        let simulation = try CustomerSimulation(settings: settings(customers: 2000, target: target, push: push, model: model), emulator: emulator)
        let summary = await simulation.run()

        #expect(summary.errors == 0)
        #expect(Set(summary.answers.keys) == ["message:\(Self.message)", "none"])
        #expect(summary.answers.values.map(\.exposed).reduce(0, +) == 2000)
        for (key, truth) in summary.answers {
            let expected = key == "none" ? 0.3 : 0.6
            #expect((800...1200).contains(truth.exposed), "\(key): \(truth.exposed) exposed")
            let rate = Double(truth.kept) / Double(truth.exposed)
            let standardError = (expected * (1 - expected) / Double(truth.exposed)).squareRoot()
            #expect(abs(rate - expected) < 4 * standardError, "\(key): kept \(rate), model \(expected)")
            let renewRate = Double(truth.renewed) / Double(truth.kept)
            #expect(abs(renewRate - 0.5) < 4 * (0.25 / Double(truth.kept)).squareRoot(), "\(key): renewed \(renewRate) of those who kept")
            #expect(truth.redeemed == 0)
        }
        // The period starts were delivered before the questions were asked.
        #expect(push.received.count == 2000)
        #expect(target.requests.count == 2000)

        let delivered = await simulation.advance(by: 31 * Self.day)
        #expect(delivered == summary.notifications - 2000)
        #expect(emulator.scheduledNotificationCount == 0)
        #expect(push.received.count == summary.notifications)
        let history = emulator.notificationHistory(in: .sandbox)
        #expect(history.count == summary.notifications)
        #expect(Set(history.map(\.signedPayload)) == Set(push.received.map(\.signedPayload)))
        #expect(history.allSatisfy { $0.sendAttempts.map(\.sendAttemptResult) == ["SUCCESS"] })
        let counts = Dictionary(history.map { ("\($0.notificationType)/\($0.subtype ?? "")", 1) }, uniquingKeysWith: +)
        let kept = summary.answers.values.map(\.kept).reduce(0, +)
        let renewed = summary.answers.values.map(\.renewed).reduce(0, +)
        #expect(counts["EXPIRED/VOLUNTARY"] == 2000 - renewed)
        #expect((counts["DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED"] ?? 0) >= 2000 - kept)
    }

    @Test("the same seed plays the same customers and draws the same summary")
    func deterministic() async throws {
        let target = try halfMessageTarget()
        defer { target.stop() }
        let model = OutcomeModel(default: OutcomeProbabilities(keep: 0.4, renew: 0.7),
                                 answers: ["message:\(Self.message)": OutcomeProbabilities(keep: 0.8, renew: 0.3)])
        let first = await (try CustomerSimulation(settings: settings(customers: 200, seed: 7, target: target, model: model), emulator: emulator())).run()
        let ids = Set(try target.requests.map { try JSONDecoder().decode(DecodedRealtimeRequestBody.self, from: Data(JWS.decode($0).payloadJSON)).originalTransactionId })
        let second = await (try CustomerSimulation(settings: settings(customers: 200, seed: 7, target: target, model: model), emulator: emulator())).run()
        let other = await (try CustomerSimulation(settings: settings(customers: 200, seed: 8, target: target, model: model), emulator: emulator())).run()
        #expect(first == second)
        #expect(first != other)
        #expect(ids.count == 200)
    }

    @Test("in sandbox a push receiver answering 500 gets each notification once and loses nothing: history holds every notification with its one failed attempt")
    func failingReceiver() async throws {
        let target = try halfMessageTarget()
        let push = try PushReceiver(status: 500)
        defer { target.stop(); push.stop() }
        let emulator = emulator()
        let simulation = try CustomerSimulation(
            settings: settings(customers: 40, target: target, push: push, model: OutcomeModel(default: OutcomeProbabilities(keep: 0.5))),
            emulator: emulator)
        let summary = await simulation.run()
        await simulation.advance(by: 31 * Self.day)
        let history = emulator.notificationHistory(in: .sandbox)
        #expect(history.count == summary.notifications)
        #expect(push.received.count == summary.notifications)
        #expect(history.allSatisfy { $0.sendAttempts.map(\.sendAttemptResult) == ["UNSUCCESSFUL_HTTP_RESPONSE_CODE"] })
        #expect(history.allSatisfy { $0.neverDelivered })
    }

    /// Production customers whose notifications go to `push`, played and then `days` later: every
    /// retry due by then made. Returns the emulator and its production history.
    func productionMonth(customers: Int, push: PushReceiver, days: Double) async throws -> (Emulator, [NotificationHistoryRecord]) {
        let target = try halfMessageTarget()
        defer { target.stop() }
        let emulator = emulator()
        var settings = settings(customers: customers, target: target, push: push, model: OutcomeModel(default: OutcomeProbabilities(keep: 0.5)))
        settings.environment = .production
        let simulation = try CustomerSimulation(settings: settings, emulator: emulator)
        let summary = await simulation.run()
        await simulation.advance(by: days * Self.day)
        #expect(emulator.pendingNotificationRetries == 0)
        let history = emulator.notificationHistory(in: .production)
        #expect(summary.notifications > 0 && history.count == summary.notifications)
        return (emulator, history)
    }

    @Test("in production a notification the app's server refused is sent again 1 and 12 hours later, the same signed payload, until a 2xx; each attempt in its history")
    func productionRetriesUntilReceived() async throws {
        let push = try PushReceiver(failing: 2)
        defer { push.stop() }
        let (emulator, history) = try await productionMonth(customers: 20, push: push, days: 31)
        #expect(emulator.notificationHistory(in: .sandbox).isEmpty)
        for entry in history {
            #expect(entry.sendAttempts.map(\.sendAttemptResult) == ["UNSUCCESSFUL_HTTP_RESPONSE_CODE", "UNSUCCESSFUL_HTTP_RESPONSE_CODE", "SUCCESS"],
                    "201 counts as received, as any status from 200 to 206 does")
            let dates = entry.sendAttempts.compactMap(\.attemptDate)
            #expect(dates.count == 3 && dates[1] - dates[0] == 3_600_000 && dates[2] - dates[1] == 12 * 3_600_000, "\(dates)")
            #expect(!entry.neverDelivered)
        }
        // Each notification reached the server three times, the same body each time.
        let received = push.received.map(\.signedPayload)
        #expect(received.count == 3 * history.count)
        #expect(Set(received) == Set(history.map(\.signedPayload)))
    }

    @Test("in production Apple gives up after five retries at 1, 12, 24, 48 and 72 hours")
    func productionGivesUpAfterFiveRetries() async throws {
        let push = try PushReceiver(status: 500)
        defer { push.stop() }
        let (_, history) = try await productionMonth(customers: 10, push: push, days: 40)
        for entry in history {
            #expect(entry.sendAttempts.count == 6 && entry.neverDelivered)
            let dates = entry.sendAttempts.compactMap(\.attemptDate)
            #expect(zip(dates.dropFirst(), dates).map { ($0 - $1) / 3_600_000 } == [1, 12, 24, 48, 72], "\(dates)")
        }
        #expect(push.received.count == 6 * history.count)
    }

    @Test("a realtime server answering 500 counts every customer as an error, and they produce nothing more")
    func failingRealtimeServer() async throws {
        let target = try CustomersTarget(status: 500) { _ in "{}" }
        defer { target.stop() }
        let emulator = emulator()
        let simulation = try CustomerSimulation(
            settings: settings(customers: 10, target: target, model: OutcomeModel(default: OutcomeProbabilities(keep: 0.5))), emulator: emulator)
        let summary = await simulation.run()
        #expect(summary.errors == 10)
        #expect(summary.errorsByResult == ["UNSUCCESSFUL_HTTP_RESPONSE_CODE": 10])
        #expect(summary.answers.isEmpty)
        #expect(await simulation.advance(by: 31 * Self.day) == 0)
        #expect(emulator.notificationHistory(in: .sandbox).count == 10)
    }

    @Test("an emulator without a signing chain or an appAppleId refuses to simulate, saying why")
    func refusals() throws {
        let target = try halfMessageTarget()
        defer { target.stop() }
        let model = OutcomeModel(default: OutcomeProbabilities(keep: 0.5))
        #expect(throws: CustomerSimulationError.self) {
            try CustomerSimulation(settings: settings(customers: 1, target: target, model: model), emulator: app.emulator())
        }
        var configuration = EmulatorConfiguration(publicKey: app.key.publicKey, bundleId: TestApp.bundleId, clock: SystemClock())
        configuration.useTestChain(chain)
        let noAppId = Emulator(configuration: configuration)
        #expect(throws: CustomerSimulationError.self) {
            try CustomerSimulation(settings: settings(customers: 1, target: target, model: model), emulator: noAppId)
        }
        var withId = settings(customers: 1, target: target, model: model)
        withId.appAppleId = 99
        #expect(throws: Never.self) { try CustomerSimulation(settings: withId, emulator: noAppId) }
        withId.model = OutcomeModel(default: OutcomeProbabilities(keep: 1.5))
        #expect(throws: CustomerSimulationError.self) { try CustomerSimulation(settings: withId, emulator: noAppId) }
    }

    @Test("over loopback, POST /emulator/customers answers the summary and POST /emulator/clock delivers what came due")
    func adminRoutes() async throws {
        let target = try halfMessageTarget()
        let push = try PushReceiver(status: 200)
        let emulator = emulator()
        let server = try EmulatorServer(emulator: emulator, environment: .sandbox)
        defer { target.stop(); push.stop(); server.stop() }
        let client = CurlHTTPClient(configuration: .init(connectTimeout: 5, timeout: 60, environment: [:]))
        func post(_ path: String, _ body: String) async throws -> HTTPResponse {
            try await client.send(HTTPRequest(method: "POST", url: URL(string: server.baseURL.absoluteString + path)!,
                                              headers: [(name: "Content-Type", value: "application/json")], body: Data(body.utf8)))
        }
        let settings = """
            {"customers": 20, "seed": 3, "products": ["com.example.monthly", {"productId": "com.example.yearly", "price": 99990}],
             "locales": ["en-US"], "realtimeURL": "\(target.url)", "pushURL": "\(push.url)",
             "model": {"default": {"keep": 0.5, "renew": 0.5}, "message:\(Self.message)": {"keep": 0.9}}}
            """
        let started = try await post("/production/emulator/customers", settings)
        #expect(started.status == 200)
        let summary = try JSONDecoder().decode(CustomerSimulationSummary.self, from: started.body)
        #expect(summary.customers == 20 && summary.errors == 0)
        #expect(emulator.notificationHistory(in: .production).count == 20)
        #expect(emulator.notificationHistory(in: .sandbox).isEmpty)

        let advanced = try await post("/emulator/clock", #"{"advanceSeconds": 2764800}"#)
        #expect(advanced.status == 200)
        struct Clock: Decodable { var delivered: Int?; var scheduled: Int; var offsetSeconds: Double }
        let clock = try JSONDecoder().decode(Clock.self, from: advanced.body)
        #expect(clock.delivered == summary.notifications - 20)
        #expect(clock.scheduled == 0)
        #expect(clock.offsetSeconds >= 2_764_000)
        #expect(push.received.count == summary.notifications)

        #expect(try await post("/emulator/customers", #"{"customers": 1}"#).status == 400)
        #expect(try await post("/emulator/clock", #"{"advanceSeconds": -5}"#).status == 400)
    }

    @Test("after POST /emulator/clock, more customers are refused with the reason, since the realtime endpoint stamps decisions with its own clock")
    func customersRefusedOnAContradictingClock() async throws {
        let target = try halfMessageTarget()
        let emulator = emulator()
        let server = try EmulatorServer(emulator: emulator, environment: .sandbox)
        defer { target.stop(); server.stop() }
        let client = CurlHTTPClient(configuration: .init(connectTimeout: 5, timeout: 60, environment: [:]))
        func post(_ path: String, _ body: String) async throws -> HTTPResponse {
            try await client.send(HTTPRequest(method: "POST", url: URL(string: server.baseURL.absoluteString + path)!,
                                              headers: [(name: "Content-Type", value: "application/json")], body: Data(body.utf8)))
        }
        let settings = #"{"customers": 10, "products": ["com.example.monthly"], "realtimeURL": "\#(target.url)", "model": {"default": {"keep": 0.5}}}"#
        #expect(try await post("/emulator/customers", settings).status == 200)
        #expect(target.requests.count == 10)
        #expect(try await post("/emulator/clock", #"{"advanceSeconds": 3024000}"#).status == 200)

        let refused = try await post("/emulator/customers", settings)
        #expect(refused.status == 409)
        let reason = try #require(try JSONDecoder().decode([String: String].self, from: refused.body)["error"])
        #expect(reason.contains("the emulator's clock is 35 days ahead of the realtime endpoint's"), "\(reason)")
        #expect(reason.contains("count every customer as kept"), "\(reason)")
        #expect(reason.contains("restart the emulator"), "\(reason)")
        // Refused before any customer asked: the endpoint saw no request stamped on the wrong clock.
        #expect(target.requests.count == 10)
    }
}
