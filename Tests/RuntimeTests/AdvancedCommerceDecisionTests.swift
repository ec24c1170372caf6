import Basics
import Crypto
import Foundation
import RetentionMessagingModels
import Runtime
import Testing

/// The engine answering a rule that recommends an Advanced Commerce change.
@Suite("Decision engine: Advanced Commerce answers")
struct AdvancedCommerceDecisionTests {
    static let change = AdvancedCommerceChange(sku: "focus.annual", currentSku: "focus.monthly", displayName: "Focus Annual",
                                               description: "Focus for a whole year", price: 59990, reason: "UPGRADE",
                                               effective: "IMMEDIATELY", retainBillingCycle: true)
    static let messageIdentifier = "00000000-0000-5000-8000-00000000ac01"

    static func snapshot() throws -> RuntimeSnapshot {
        try RuntimeSnapshot(bundleId: bundleId, appAppleId: appAppleId, environment: .production, localeFallbacks: [:], rules: [
            SnapshotRule(id: "cancel/annual", version: "0123456789abcdef", match: SnapshotMatch(products: [monthly]),
                         response: SnapshotResponse(kind: .advancedCommerce, message: "annual",
                                                    messageIdentifiers: ["en-US": messageIdentifier], advancedCommerce: change)),
        ]).sealed()
    }

    @Test("a matching customer gets advancedCommerceInfo and nothing else, recorded as an advancedCommerce answer")
    func answersAdvancedCommerceInfoAlone() throws {
        let key = ES256PrivateKey.generate()
        let signer = PromotionalOfferSigner(keyId: "ABC123DEFG", issuerId: "issuer", bundleId: bundleId, privateKey: key, clock: SystemClock())
        let engine = DecisionEngine(snapshot: try Self.snapshot(), signer: signer)
        guard case .respond(let body, let answered) = try engine.decide(request(product: monthly, transaction: "2000000000000099")) else {
            Issue.record("no answer")
            return
        }
        #expect(body.message == nil && body.alternateProduct == nil && body.promotionalOffer == nil)
        let info = try #require(body.advancedCommerceInfo)
        #expect(info.messageIdentifier == Self.messageIdentifier)
        #expect(answered.kind == .advancedCommerce && answered.messageIdentifier == Self.messageIdentifier)
        #expect(String(decoding: body.canonicalJSON, as: UTF8.self)
            == #"{"advancedCommerceInfo":{"advancedCommerceData":"\#(info.advancedCommerceData)","messageIdentifier":"\#(Self.messageIdentifier)"}}"#)
        #expect(try JSONDecoder().decode(RealtimeResponseBody.self, from: Data(body.canonicalJSON)) == body)
        struct Wrapper: Decodable { struct Info: Decodable { var token: String }; var signatureInfo: Info }
        let wrapper = try JSONDecoder().decode(Wrapper.self, from: try #require(Data(base64Encoded: info.advancedCommerceData)))
        let token = try JWS.decode(wrapper.signatureInfo.token)
        #expect(token.verify(with: key.publicKey))
        struct Claims: Decodable { var aud: String; var request: String }
        let claims = try JSONDecoder().decode(Claims.self, from: Data(token.payloadJSON))
        #expect(claims.aud == "advanced-commerce-api")
        let requestJSON = String(decoding: try #require(Data(base64Encoded: claims.request)), as: UTF8.self)
        #expect(requestJSON.hasPrefix(#"{"changeItems":[{"SKU":"focus.annual","currentSKU":"focus.monthly","description":"Focus for a whole year","displayName":"Focus Annual","effective":"IMMEDIATELY","price":59990,"reason":"UPGRADE"}],"operation":"MODIFY_SUBSCRIPTION","requestInfo":{"requestReferenceId":""#), "\(requestJSON)")
        #expect(requestJSON.hasSuffix(#""},"retainBillingCycle":true,"transactionId":"2000000000000099","version":"1"}"#), "\(requestJSON)")
    }

    @Test("an Advanced Commerce rule without a signer is an error that says which credentials are needed")
    func needsSigner() throws {
        let engine = DecisionEngine(snapshot: try Self.snapshot(), signer: nil)
        #expect(throws: DecisionError.signerMissing(ruleId: "cancel/annual")) {
            try engine.decide(request(product: monthly))
        }
    }
}
