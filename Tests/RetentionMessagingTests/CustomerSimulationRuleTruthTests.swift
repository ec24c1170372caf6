import Basics
import Crypto
import Emulator
import Foundation
import HTTPCore
import HTTPServer
import RetentionMessaging
import RetentionMessagingModels
import Testing
import TestSupport

/// A realtime server that answers as `serve` does: each customer's answer names the rule that chose
/// it in `X-Retention-Sync-Rule`. Odd customers fall to a holdout that answers none, even customers
/// ending in 0, 2 or 4 to a catch-all that also answers none, the others to a 25%-off offer.
private final class RuleTarget: Sendable {
    private let server: HTTPServer

    init(offerSignature: String) throws {
        server = try HTTPServer { request in
            struct Body: Decodable { var signedPayload: String }
            guard let body = try? JSONDecoder().decode(Body.self, from: request.body),
                  let jws = try? JWS.decode(body.signedPayload),
                  let payload = try? JSONDecoder().decode(DecodedRealtimeRequestBody.self, from: Data(jws.payloadJSON)) else {
                return HTTPResponse(status: 400)
            }
            let digit = payload.originalTransactionId.last?.wholeNumberValue ?? 0
            let (rule, answer) = digit % 2 == 1 ? ("cancel/holdout", "{}")
                : digit < 6 ? ("cancel/everyone-else", "{}")
                : ("cancel/offer-25", #"{"promotionalOffer":{"messageIdentifier":"\#(Fixtures.uuid(7))","promotionalOfferSignatureV2":"\#(offerSignature)"}}"#)
            // As serve does: the rule is named only to a request that asks for it.
            let named = request.header(RealtimeResponseBody.askRuleHeader) == nil ? [] : [(name: RealtimeResponseBody.ruleHeader, value: rule)]
            return HTTPResponse(status: 200, headers: [(name: "Content-Type", value: "application/json")] + named, body: Data(answer.utf8))
        }
    }

    func stop() { server.stop() }
    var url: String { server.baseURL.absoluteString + "/retention" }
}

@Suite("Simulated customers with a truth per rule and per offer price")
struct CustomerSimulationRuleTruthTests {
    @Test("two rules that both answer none follow truths of their own, and an offer is charged the price the settings give it")
    func truthPerRuleAndOfferPrice() async throws {
        let offerKey = ES256PrivateKey.generate()
        let signature = try JWS.sign(headerJSON: Array(#"{"alg":"ES256"}"#.utf8),
                                     payloadJSON: Array(#"{"offerIdentifier":"winback25","productId":"com.example.monthly"}"#.utf8), key: offerKey)
        let target = try RuleTarget(offerSignature: signature)
        defer { target.stop() }
        let emulator = try CustomerSimulationTests().emulator()
        // The holdout keeps 20%, the catch-all 70%: both answer none, and the answer's own key (50%) is for neither.
        let model = OutcomeModel(default: OutcomeProbabilities(keep: 0.1), answers: [
            "none": OutcomeProbabilities(keep: 0.5),
            "rule:cancel/holdout": OutcomeProbabilities(keep: 0.2, renew: 1),
            "rule:cancel/everyone-else": OutcomeProbabilities(keep: 0.7, renew: 1),
            "rule:cancel/offer-25": OutcomeProbabilities(keep: 1, redeem: 1, renew: 1),
        ])
        var settings = CustomerSimulationSettings(customers: 2000, seed: 5, products: [CustomerSimulationTests.monthly],
                                                  realtimeURL: target.url, timeout: 30, model: model)
        settings.offerPrices = ["winback25": 7490]
        let simulation = try CustomerSimulation(settings: settings, emulator: emulator)
        let summary = await simulation.run()
        #expect(summary.errors == 0)
        #expect(Set(summary.rules.keys) == ["cancel/holdout", "cancel/everyone-else", "cancel/offer-25"])
        #expect(summary.rules.values.map(\.exposed).reduce(0, +) == 2000)
        // Per answer the two none rules are one line; per rule each keeps at its own rate.
        #expect(summary.answers["none"]?.exposed == (summary.rules["cancel/holdout"]?.exposed ?? 0) + (summary.rules["cancel/everyone-else"]?.exposed ?? 0))
        for (rule, expected) in [("cancel/holdout", 0.2), ("cancel/everyone-else", 0.7)] {
            let truth = try #require(summary.rules[rule])
            let rate = Double(truth.kept) / Double(truth.exposed)
            let standardError = (expected * (1 - expected) / Double(truth.exposed)).squareRoot()
            #expect(abs(rate - expected) < 4 * standardError, "\(rule): kept \(rate), truth \(expected)")
        }
        #expect(summary.rules["cancel/offer-25"]?.redeemed == summary.rules["cancel/offer-25"]?.exposed)

        // Every redemption and every renewal under the offer is charged 7.49, not half of 9.99.
        _ = await simulation.advance(by: 31 * 86_400)
        var offerPrices: [Int64] = []
        for record in emulator.notificationHistory(in: .sandbox) where record.notificationType == "OFFER_REDEEMED" || record.notificationType == "DID_RENEW" {
            let payload = try JSONDecoder().decode(NotificationPayload.self, from: Data(try JWS.decode(record.signedPayload).payloadJSON))
            let signed = try #require(payload.data?.signedTransactionInfo)
            let transaction = try JSONDecoder().decode(TransactionPayload.self, from: Data(try JWS.decode(signed).payloadJSON))
            if transaction.offerIdentifier == "winback25" { offerPrices.append(transaction.price ?? -1) }
        }
        let offered = summary.rules["cancel/offer-25"]?.exposed ?? 0
        #expect(offered > 0 && offerPrices.count == 2 * offered, "a redemption and a renewal each")
        #expect(Set(offerPrices) == [7490])
    }

    @Test("a negative offer price is refused, naming the offer")
    func negativeOfferPriceIsRefused() {
        var settings = CustomerSimulationSettings(customers: 1, products: [CustomerSimulationTests.monthly], realtimeURL: "http://127.0.0.1:1/x",
                                                  model: OutcomeModel(default: OutcomeProbabilities(keep: 1)))
        settings.offerPrices = ["winback25": -1]
        #expect(settings.problem == "offerPrices.winback25 must be a price in milliunits, 0 or more, not -1")
    }
}
