import Basics
import Crypto
import Emulator
import Foundation
import RetentionMessagingModels
import Testing
import TestSupport

/// `advancedCommerceData` as serve makes it (the Base64 of `{"signatureInfo":{"token":JWS}}`, the JWS's
/// `request` claim a SubscriptionModifyInAppRequest with one change item), signed with a throwaway key.
func advancedCommerceData(sku: String = "focus.annual", audience: String = "advanced-commerce-api") throws -> String {
    let change = AdvancedCommerceChange(sku: sku, currentSku: "focus.monthly", displayName: "Focus Annual",
                                        description: "Focus for a whole year", price: 59990, reason: "UPGRADE",
                                        effective: "NEXT_BILL_CYCLE", retainBillingCycle: false)
    let request = change.requestJSON(transactionId: "2000000000000001", requestReferenceId: UUID().uuidString.lowercased())
    let claims = try JSONSerialization.data(withJSONObject: [
        "aud": audience, "bid": "com.example.app", "iat": 1_800_000_000, "iss": "issuer",
        "nonce": UUID().uuidString.lowercased(), "request": Data(request).base64EncodedString(),
    ], options: .sortedKeys)
    let token = try JWS.sign(headerJSON: Array(#"{"alg":"ES256","kid":"KEY1234567","typ":"JWT"}"#.utf8), payloadJSON: Array(claims),
                             key: ES256PrivateKey.generate())
    return try JSONSerialization.data(withJSONObject: ["signatureInfo": ["token": token]]).base64EncodedString()
}

func advancedCommerceAnswer(message: String, data: String) -> String {
    #"{"advancedCommerceInfo":{"advancedCommerceData":"\#(data)","messageIdentifier":"\#(message)"}}"#
}

@Suite("The emulator and Advanced Commerce answers")
struct AdvancedCommerceEmulatorTests {
    @Test("a server answering advancedCommerceInfo alone, with an APPROVED message and a signed Advanced Commerce request, passes the performance test")
    func performanceTestAcceptsAdvancedCommerceInfo() async throws {
        let data = try advancedCommerceData()
        let target = try RealtimeTarget { RealtimeTarget.json(advancedCommerceAnswer(message: PerformanceTestTests.approved, data: data)) }
        let app = TestApp()
        let tests = PerformanceTestTests()
        let result = try await tests.run(try await tests.emulator(app, target: target.url), app: app)
        #expect(result.result == .pass)
        #expect(result.successRate == 100)
        #expect(result.failures == [:])
    }

    @Test("advancedCommerceInfo beside another field, naming a message in review, or holding data that is not a signed Advanced Commerce request fails with INVALID_RESPONSE",
          arguments: [0, 1, 2, 3])
    func performanceTestRefusesMalformedAdvancedCommerceInfo(variant: Int) async throws {
        let good = try advancedCommerceData()
        let bodies = [
            #"{"message":{"messageIdentifier":"\#(PerformanceTestTests.approved)"},"advancedCommerceInfo":{"advancedCommerceData":"\#(good)","messageIdentifier":"\#(PerformanceTestTests.approved)"}}"#,
            advancedCommerceAnswer(message: PerformanceTestTests.pending, data: good),
            advancedCommerceAnswer(message: PerformanceTestTests.approved, data: "not base64"),
            advancedCommerceAnswer(message: PerformanceTestTests.approved, data: try advancedCommerceData(audience: "promotional-offer")),
        ]
        let body = bodies[variant]
        let target = try RealtimeTarget { RealtimeTarget.json(body) }
        let app = TestApp()
        let tests = PerformanceTestTests()
        let result = try await tests.run(try await tests.emulator(app, target: target.url), app: app)
        #expect(result.result == .fail)
        #expect(result.failures == ["INVALID_RESPONSE": 12])
    }

    @Test("simulated customers of an Advanced Commerce product see the recommended change; Apple ignores it for any other product, so those customers count as none")
    func customersSeeItOnlyOnAdvancedCommerceProducts() async throws {
        let data = try advancedCommerceData(sku: "focus.annual")
        let target = try CustomersTarget { _ in advancedCommerceAnswer(message: CustomerSimulationTests.message, data: data) }
        defer { target.stop() }
        let tests = try CustomerSimulationTests()
        let model = OutcomeModel(default: OutcomeProbabilities(keep: 0.3, renew: 0.5))
        func run(_ product: SimulatedProduct) async throws -> CustomerSimulationSummary {
            let settings = CustomerSimulationSettings(customers: 40, seed: 3, products: [product], locales: ["en-US"],
                                                      realtimeURL: target.url, model: model)
            return await (try CustomerSimulation(settings: settings, emulator: tests.emulator())).run()
        }
        let generic = try await run(SimulatedProduct(productId: "com.example.generic", advancedCommerce: true))
        #expect(generic.errors == 0)
        #expect(Set(generic.answers.keys) == ["advancedCommerce:focus.annual"])
        #expect(generic.answers["advancedCommerce:focus.annual"]?.exposed == 40)
        let ordinary = try await run(CustomerSimulationTests.monthly)
        #expect(ordinary.errors == 0)
        #expect(Set(ordinary.answers.keys) == ["none"])
    }
}
