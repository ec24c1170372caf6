import Basics
import Crypto
import Foundation
import RetentionMessagingModels
import Runtime
import Testing

@Suite("Decision engine")
struct DecisionEngineTests {
    /// What a customer is shown, with a promotional signature reduced to whether it verified.
    enum Shown: Hashable, CustomStringConvertible {
        case message(String, rule: String)
        case alternate(String, product: String, plan: String?, rule: String)
        case offer(String, verified: Bool, rule: String)
        case noAnswer(containing: String)

        var description: String {
            switch self {
            case .message(let id, let rule): "message \(id) by \(rule)"
            case .alternate(let id, let product, let plan, let rule): "alternate \(product) \(plan ?? "-") \(id) by \(rule)"
            case .offer(let id, let verified, let rule): "offer \(id) verified=\(verified) by \(rule)"
            case .noAnswer(let text): "no answer: \(text)"
            }
        }
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var request: DecodedRealtimeRequestBody
        var expected: Shown
        var testDescription: String { name }
    }

    static let key = ES256PrivateKey.generate()
    static let signer = PromotionalOfferSigner(keyId: "ABC123DEFG", issuerId: "57246542-96fe-1a63-e053-0824d011072a",
                                               bundleId: bundleId, privateKey: key, clock: SystemClock())

    static let cases: [Case] = [
        Case(name: "product and locale: a yearly en-US customer is offered the monthly plan",
             request: request(product: yearly, locale: "en-US"),
             expected: .alternate(uuid(1), product: monthly, plan: "MONTHLY", rule: "winback/yearly-to-monthly")),
        Case(name: "a rule for any product answers a yearly fr-FR customer",
             request: request(product: yearly, locale: "fr-FR"), expected: .message(uuid(12), rule: "generic/any")),
        Case(name: "a weekly customer (no product rule) gets the generic message",
             request: request(product: weekly, locale: "de-DE"), expected: .message(uuid(11), rule: "generic/any")),
        Case(name: "a de-DE monthly customer gets the signed promotional offer",
             request: request(product: monthly, locale: "de-DE"),
             expected: .offer(uuid(2), verified: true, rule: "winback/german-offer")),
        Case(name: "locale fallback: de-AT is answered as de-DE",
             request: request(product: monthly, locale: "de-AT"),
             expected: .offer(uuid(2), verified: true, rule: "winback/german-offer")),
        Case(name: "language-only fallback: fr-CA is answered as fr-FR",
             request: request(product: monthly, locale: "fr-CA"), expected: .message(uuid(12), rule: "generic/any")),
        Case(name: "an undeclared fallback does not apply: de-CH gets nothing",
             request: request(product: monthly, locale: "de-CH"), expected: .noAnswer(containing: "no rule matches product com.example.monthly in locale de-CH")),
        Case(name: "window start is inclusive",
             request: request(locale: "fr-FR", signedDate: "2026-12-01T00:00:00Z"), expected: .message(uuid(4), rule: "seasonal/holiday")),
        Case(name: "the millisecond before the window is outside it",
             request: request(locale: "fr-FR", signedDate: "2026-11-30T23:59:59.999Z"), expected: .message(uuid(12), rule: "generic/any")),
        Case(name: "the last millisecond of the window is inside it",
             request: request(locale: "en-US", signedDate: "2026-12-31T23:59:59.999Z"), expected: .message(uuid(3), rule: "seasonal/holiday")),
        Case(name: "window end is exclusive",
             request: request(locale: "fr-FR", signedDate: "2027-01-01T00:00:00Z"), expected: .message(uuid(12), rule: "generic/any")),
        Case(name: "a matching rule without the locale's message lets the next rule answer",
             request: request(locale: "ja-JP", transaction: transaction(inBuckets: 0..<5000, salt: "price-test"),
                              signedDate: "2026-03-15T00:00:00Z"),
             expected: .message(uuid(7), rule: "price-test/a")),
        Case(name: "the same rule answers a locale it has",
             request: request(locale: "en-US", signedDate: "2026-03-15T00:00:00Z"), expected: .message(uuid(5), rule: "seasonal/spring")),
        Case(name: "split: a customer in buckets [0, 5000) sees price A",
             request: request(transaction: transaction(inBuckets: 0..<5000, salt: "price-test")),
             expected: .message(uuid(6), rule: "price-test/a")),
        Case(name: "split: a customer in buckets [5000, 8000) sees price B",
             request: request(transaction: transaction(inBuckets: 5000..<8000, salt: "price-test")),
             expected: .message(uuid(8), rule: "price-test/b")),
        Case(name: "split: a holdout customer gets no answer, so Apple shows the default",
             request: request(transaction: transaction(inBuckets: 8000..<10000, salt: "price-test")),
             expected: .noAnswer(containing: "rule price-test/holdout answers none")),
        Case(name: "a Sandbox request to a production snapshot gets no answer",
             request: request(environment: "Sandbox"),
             expected: .noAnswer(containing: "environment Sandbox, but the snapshot serves Production")),
        Case(name: "another app's request gets no answer",
             request: request(app: 42), expected: .noAnswer(containing: "appAppleId 42")),
        Case(name: "a locale no rule serves gets no answer",
             request: request(product: yearly, locale: "it-IT"), expected: .noAnswer(containing: "no rule matches")),
    ]

    @Test("each request gets the answer its rules say", arguments: cases)
    func decides(_ testCase: Case) throws {
        let engine = DecisionEngine(snapshot: sampleSnapshot, signer: Self.signer)
        let decision = try engine.decide(testCase.request)
        let shown = Self.shown(decision, request: testCase.request)
        if case .noAnswer(let expected) = testCase.expected, case .noAnswer(let reason) = decision {
            #expect(reason.contains(expected), "\(reason)")
        } else {
            #expect(shown == testCase.expected)
        }
        // Explaining never changes the answer (signatures differ by nonce, so compare what is shown).
        #expect(Self.shown(try engine.explain(testCase.request).decision, request: testCase.request) == shown)
    }

    @Test("explain says why each earlier rule did not answer, and which one did")
    func explainTracesEveryRuleUntilTheMatch() throws {
        let engine = DecisionEngine(snapshot: sampleSnapshot, signer: Self.signer)
        let customer = request(product: monthly, locale: "ja-JP", transaction: transaction(inBuckets: 5000..<8000, salt: "price-test"),
                               signedDate: "2026-03-15T00:00:00Z")
        let (decision, trace) = try engine.explain(customer)
        #expect(Self.shown(decision, request: customer) == .message(uuid(9), rule: "price-test/b"))
        let bucket = TrafficBucket.bucket(salt: "price-test", originalTransactionId: customer.originalTransactionId)
        #expect(trace == [
            RuleTrace(ruleId: "winback/yearly-to-monthly", matched: false, reason: "product com.example.monthly not in [com.example.yearly]"),
            RuleTrace(ruleId: "winback/german-offer", matched: false, reason: "locale ja-JP not in [de-DE]"),
            RuleTrace(ruleId: "seasonal/holiday", matched: false,
                      reason: "signedDate 2026-03-15T00:00:00.000Z is before notBefore 2026-12-01T00:00:00.000Z"),
            RuleTrace(ruleId: "seasonal/spring", matched: false, reason: "message 'spring' has no approved identifier for locale ja-JP"),
            RuleTrace(ruleId: "price-test/a", matched: false, reason: "bucket \(bucket) not in [0, 5000) of split 'price-test'"),
            RuleTrace(ruleId: "price-test/b", matched: true,
                      reason: "product com.example.monthly, locale ja-JP, bucket \(bucket) in [5000, 8000) of split 'price-test' → message 'price-b'"),
        ])
    }

    @Test("a decision carries what the engine knew: flow, rule, kind, the locale served (a fallback too), the split and the offer")
    func decisionCarriesWhatTheEngineKnew() throws {
        let engine = DecisionEngine(snapshot: sampleSnapshot, signer: Self.signer)
        let offered = try #require(try engine.decide(request(product: monthly, locale: "de-AT")).answered)
        #expect(offered.ruleId == "winback/german-offer")
        #expect(offered.flow == "winback" && offered.rule == "german-offer")
        #expect(offered.kind == .promotionalOffer)
        #expect(offered.messageIdentifier == uuid(2))
        #expect(offered.localeServed == "de-DE")
        #expect(offered.offerIdentifier != nil && offered.alternateProductId == nil)
        let alternate = try #require(try engine.decide(request(product: yearly, locale: "en-US")).answered)
        #expect(alternate.kind == .alternateProduct && alternate.alternateProductId == monthly && alternate.localeServed == "en-US")
        let customer = transaction(inBuckets: 5000..<8000, salt: "price-test")
        let arm = try #require(try engine.decide(request(product: monthly, locale: "ja-JP", transaction: customer)).answered)
        #expect(arm.ruleId == "price-test/b" && arm.split?.salt == "price-test")
        #expect(try engine.decide(request(product: monthly, locale: "de-CH")).answered == nil)
    }

    @Test("explain shows the fallback pass after the exact locale found nothing")
    func explainShowsFallbackPass() throws {
        let engine = DecisionEngine(snapshot: sampleSnapshot, signer: Self.signer)
        let (_, trace) = try engine.explain(request(product: monthly, locale: "de-AT"))
        #expect(trace.filter(\.matched).map(\.ruleId) == ["winback/german-offer"])
        #expect(trace.last?.reason.hasPrefix("with fallback locale de-DE: ") == true)
        #expect(trace.contains(RuleTrace(ruleId: "generic/any", matched: false,
                                         reason: "message 'generic' has no approved identifier for locale de-AT")))
    }

    @Test("a closing 'none for everyone else' rule does not hide a declared locale fallback")
    func catchAllNoneLetsTheFallbackAnswer() throws {
        let snapshot = RuntimeSnapshot(
            bundleId: bundleId, appAppleId: appAppleId, environment: .production, localeFallbacks: ["de-AT": "de-DE"],
            rules: [
                rule("cancel/control", SnapshotMatch(products: [monthly]), message("before-you-go", ["de-DE": uuid(1)])),
                rule("cancel/everyone-else", SnapshotMatch(), SnapshotResponse(kind: .none)),
            ])
        let engine = DecisionEngine(snapshot: snapshot, signer: nil)
        #expect(Self.shown(try engine.decide(request(product: monthly, locale: "de-AT")), request: request())
            == .message(uuid(1), rule: "cancel/control"))
        #expect(Self.shown(try engine.decide(request(product: yearly, locale: "de-AT")), request: request())
            == .noAnswer(containing: "rule cancel/everyone-else answers none"))
        #expect(Self.shown(try engine.decide(request(product: monthly, locale: "it")), request: request())
            == .noAnswer(containing: "rule cancel/everyone-else answers none"))

        let (_, trace) = try engine.explain(request(product: monthly, locale: "de-AT"))
        #expect(trace.map(\.matched) == [false, false, true])
        #expect(trace[1] == RuleTrace(ruleId: "cancel/everyone-else", matched: false,
                                      reason: "answers none for any locale; trying the fallback locale de-DE first"))
    }

    @Test("a promotional offer without a signer is an error that says which credentials are needed")
    func promotionalOfferNeedsSigner() {
        let engine = DecisionEngine(snapshot: sampleSnapshot, signer: nil)
        #expect(throws: DecisionError.signerMissing(ruleId: "winback/german-offer")) {
            try engine.decide(request(locale: "de-DE"))
        }
        #expect(DecisionError.signerMissing(ruleId: "r").description.contains("In-App Purchase key"))
    }

    @Test("a promotional offer is signed for the request's product and original transaction")
    func promotionalOfferClaimsComeFromTheRequest() throws {
        let engine = DecisionEngine(snapshot: sampleSnapshot, signer: Self.signer)
        let customer = request(product: monthly, locale: "de-DE", transaction: "2000000777000001")
        guard case .respond(let body, _) = try engine.decide(customer), let offer = body.promotionalOffer else {
            Issue.record("expected a promotional offer")
            return
        }
        let jws = try JWS.decode(offer.promotionalOfferSignatureV2)
        let claims = try JSONSerialization.jsonObject(with: Data(jws.payloadJSON)) as? [String: Any]
        #expect(claims?["productId"] as? String == monthly)
        #expect(claims?["offerIdentifier"] as? String == "de-winback-50")
        #expect(claims?["transactionId"] as? String == "2000000777000001")
        #expect(claims?["bid"] as? String == bundleId)
    }

    @Test("swapping snapshots under concurrent decisions: every answer comes whole from one snapshot")
    func swapIsAtomic() async throws {
        func single(_ ruleId: String, _ identifier: String) -> RuntimeSnapshot {
            RuntimeSnapshot(bundleId: bundleId, appAppleId: appAppleId, environment: .production, localeFallbacks: [:],
                            rules: [rule(ruleId, SnapshotMatch(), message("m", ["en-US": identifier]))])
        }
        let first = single("first/rule", uuid(1))
        let second = single("second/rule", uuid(2))
        let allowed: Set<Shown> = [.message(uuid(1), rule: "first/rule"), .message(uuid(2), rule: "second/rule")]
        let engine = DecisionEngine(snapshot: first, signer: nil)
        let customer = request()
        let seen = try await withThrowingTaskGroup(of: Set<Shown>.self) { group in
            group.addTask {
                for index in 0..<2_000 { engine.swap(to: index.isMultiple(of: 2) ? second : first) }
                engine.swap(to: second)
                return []
            }
            for _ in 0..<4 {
                group.addTask {
                    var shown: Set<Shown> = []
                    for _ in 0..<2_000 { shown.insert(Self.shown(try engine.decide(customer), request: customer)) }
                    return shown
                }
            }
            return try await group.reduce(into: Set<Shown>()) { $0.formUnion($1) }
        }
        #expect(seen.isSubset(of: allowed), "\(seen)")
        #expect(engine.snapshot == second)
        #expect(Self.shown(try engine.decide(customer), request: customer) == .message(uuid(2), rule: "second/rule"))
    }

    static func shown(_ decision: Decision, request: DecodedRealtimeRequestBody) -> Shown {
        switch decision {
        case .noAnswer(let reason):
            return .noAnswer(containing: reason)
        case .ruleAnswersNone(let answered):
            return .noAnswer(containing: "rule \(answered.ruleId) answers none")
        case .respond(let body, let answered):
            let ruleId = answered.ruleId
            if let message = body.message { return .message(message.messageIdentifier, rule: ruleId) }
            if let alternate = body.alternateProduct {
                return .alternate(alternate.messageIdentifier, product: alternate.productId,
                                  plan: alternate.billingPlanType?.rawValue, rule: ruleId)
            }
            if let offer = body.promotionalOffer {
                let verified = (try? JWS.decode(offer.promotionalOfferSignatureV2))?.verify(with: key.publicKey) ?? false
                return .offer(offer.messageIdentifier, verified: verified, rule: ruleId)
            }
            return .noAnswer(containing: "empty body")
        }
    }
}
