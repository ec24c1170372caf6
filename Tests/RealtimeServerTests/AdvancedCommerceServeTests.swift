import Basics
import Crypto
import Foundation
import HTTPCore
import RealtimeServer
import RetentionMessagingModels
import Runtime
import Testing
import TestSupport

let advancedCommerceProduct = "com.example.generic"
let advancedCommerceMessageId = "00000000-0000-5000-8000-000000000005"

/// The change the Advanced Commerce rule of `advancedCommerceSnapshot` recommends.
let annualChange = AdvancedCommerceChange(
    sku: "focus.annual", currentSku: "focus.monthly", displayName: "Focus Annual", description: "Focus for a whole year",
    price: 59990, reason: "UPGRADE", effective: "NEXT_BILL_CYCLE", retainBillingCycle: false,
    offer: AdvancedCommerceOffer(period: "P1M", periodCount: 3, price: 29990, reason: "RETENTION"))

/// The usual test snapshot plus a rule answering the Advanced Commerce product with `annualChange`.
func advancedCommerceSnapshot() throws -> RuntimeSnapshot {
    var rules = try snapshot().rules
    rules.append(SnapshotRule(id: "generic-annual", version: "0123456789abcdef", match: SnapshotMatch(products: [advancedCommerceProduct]),
                              response: SnapshotResponse(kind: .advancedCommerce, message: "annual",
                                                         messageIdentifiers: ["en-US": advancedCommerceMessageId],
                                                         advancedCommerce: annualChange)))
    return try RuntimeSnapshot(bundleId: bundleId, appAppleId: appAppleId, environment: .production, localeFallbacks: [:],
                               rules: rules).sealed()
}

/// What `advancedCommerceData` holds, opened layer by layer as Apple's documentation describes it.
struct OpenedAdvancedCommerceData {
    var wrapper: [String: Any]
    var token: DecodedJWS
    var claims: [String: Any]
    var request: [String: Any]

    init(_ data: String) throws {
        let wrapperJSON = try #require(Data(base64Encoded: data), "advancedCommerceData is not Base64")
        wrapper = try #require(try JSONSerialization.jsonObject(with: wrapperJSON) as? [String: Any])
        let signatureInfo = try #require(wrapper["signatureInfo"] as? [String: Any])
        let compact = try #require(signatureInfo["token"] as? String)
        token = try JWS.decode(compact)
        claims = try #require(try JSONSerialization.jsonObject(with: Data(token.payloadJSON)) as? [String: Any])
        let requestClaim = try #require(claims["request"] as? String)
        let requestJSON = try #require(Data(base64Encoded: requestClaim), "the request claim is not Base64")
        request = try #require(try JSONSerialization.jsonObject(with: requestJSON) as? [String: Any])
    }
}

@Suite("serve: Advanced Commerce answers")
struct AdvancedCommerceServeTests {
    @Test("a customer of an Advanced Commerce product gets advancedCommerceInfo alone, its request signed with the In-App Purchase key, over a real socket")
    func answersWithSignedAdvancedCommerceData() async throws {
        let running = try RunningService(snapshot: try advancedCommerceSnapshot(), transport: .live)
        let before = Date().timeIntervalSince1970.rounded(.down)
        let response = try await running.post(requestBody(product: advancedCommerceProduct, transaction: "2000000000000077"))
        let after = Date().timeIntervalSince1970
        #expect(response.status == 200)
        let body = try json(response)
        #expect(body.keys.sorted() == ["advancedCommerceInfo"])
        let info = try #require(body["advancedCommerceInfo"] as? [String: Any])
        #expect(info.keys.sorted() == ["advancedCommerceData", "messageIdentifier"])
        #expect(info["messageIdentifier"] as? String == advancedCommerceMessageId)

        let data = try #require(info["advancedCommerceData"] as? String)
        let opened = try OpenedAdvancedCommerceData(data)
        #expect(opened.wrapper.keys.sorted() == ["signatureInfo"])
        #expect(opened.token.verify(with: running.offerKey.publicKey))
        #expect(opened.token.header.alg == "ES256")
        #expect(opened.token.header.kid == "KEY1234567")
        #expect(opened.claims.keys.sorted() == ["aud", "bid", "iat", "iss", "nonce", "request"])
        #expect(opened.claims["aud"] as? String == "advanced-commerce-api")
        #expect(opened.claims["bid"] as? String == bundleId)
        #expect(opened.claims["iss"] as? String == "issuer")
        // Signed while the request was answered, however long a busy machine took.
        let issuedAt = opened.claims["iat"] as? Double ?? 0
        #expect(issuedAt >= before && issuedAt <= after, "iat \(issuedAt) outside \(before)…\(after)")

        let request = opened.request
        #expect(request.keys.sorted() == ["changeItems", "operation", "requestInfo", "retainBillingCycle", "transactionId", "version"])
        #expect(request["operation"] as? String == "MODIFY_SUBSCRIPTION")
        #expect(request["version"] as? String == "1")
        #expect(request["transactionId"] as? String == "2000000000000077")
        #expect(request["retainBillingCycle"] as? Bool == false)
        let reference = try #require((request["requestInfo"] as? [String: Any])?["requestReferenceId"] as? String)
        #expect(UUID(uuidString: reference) != nil)
        let items = try #require(request["changeItems"] as? [[String: Any]])
        #expect(items.count == 1)
        let item = try #require(items.first)
        #expect(item["SKU"] as? String == "focus.annual")
        #expect(item["currentSKU"] as? String == "focus.monthly")
        #expect(item["displayName"] as? String == "Focus Annual")
        #expect(item["description"] as? String == "Focus for a whole year")
        #expect(item["price"] as? Int == 59990)
        #expect(item["reason"] as? String == "UPGRADE")
        #expect(item["effective"] as? String == "NEXT_BILL_CYCLE")
        let offer = try #require(item["offer"] as? [String: Any])
        #expect(offer["period"] as? String == "P1M" && offer["periodCount"] as? Int == 3)
        #expect(offer["price"] as? Int == 29990 && offer["reason"] as? String == "RETENTION")

        // Each answer is signed afresh: a new nonce and a new requestReferenceId.
        let again = try json(try await running.post(requestBody(product: advancedCommerceProduct, transaction: "2000000000000077")))
        let secondData = try #require((again["advancedCommerceInfo"] as? [String: Any])?["advancedCommerceData"] as? String)
        let second = try OpenedAdvancedCommerceData(secondData)
        #expect(second.claims["nonce"] as? String != opened.claims["nonce"] as? String)
        #expect((second.request["requestInfo"] as? [String: Any])?["requestReferenceId"] as? String != reference)

        let log = running.log.joined(separator: "\n")
        #expect(log.contains(#""kind":"advancedCommerce""#), "\(log)")
    }

    @Test("serve without an In-App Purchase key does not answer a snapshot with Advanced Commerce answers, and says why")
    func withoutKeyIsNotReady() async throws {
        let running = try RunningService(snapshot: try advancedCommerceSnapshot(), signing: false)
        let ready = try await running.get("/readyz")
        #expect(ready.status == 503)
        #expect(String(decoding: ready.body, as: UTF8.self).contains("Advanced Commerce"))
    }
}
