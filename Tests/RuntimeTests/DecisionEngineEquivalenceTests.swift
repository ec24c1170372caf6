import Foundation
import RetentionMessagingModels
import Runtime
import Testing
import TestSupport

/// `decide` walks only the rules its product and locale index leaves; `explain` walks every rule
/// one by one. Over many generated snapshots and requests both must reach the same decision.
@Suite("Decision engine: the indexed walk decides as the full walk does")
struct DecisionEngineEquivalenceTests {
    /// Picks and percent chances over SplitMix64, so every run generates the same snapshots.
    struct Generator {
        var random: SplitMix64
        init(seed: UInt64) { random = SplitMix64(seed: seed) }
        mutating func below(_ bound: Int) -> Int { random.below(bound) }
        mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
        mutating func pick<T>(_ values: [T]) -> T { values[below(values.count)] }
        mutating func subset(_ values: [String]) -> [String] {
            let chosen = values.filter { _ in chance(40) }
            return chosen.isEmpty ? [pick(values)] : chosen
        }
    }

    static let products = ["com.example.monthly", "com.example.yearly", "com.example.weekly", "com.example.lifetime"]
    static let locales = ["en-US", "de-DE", "de-AT", "fr-FR", "fr", "ja-JP", "it-IT"]
    static let salts = ["price-test", "copy-test", "holdout"]
    static let start: Int64 = 1_780_000_000_000
    static let day: Int64 = 86_400_000

    static func snapshot(_ generator: inout Generator, rules count: Int) -> RuntimeSnapshot {
        var rules: [SnapshotRule] = []
        for index in 0..<count {
            var match = SnapshotMatch()
            if generator.chance(70) { match.products = generator.subset(products) }
            if generator.chance(60) { match.locales = generator.subset(locales) }
            if generator.chance(30) { match.notBefore = start + Int64(generator.below(20)) * day }
            if generator.chance(30) { match.notAfter = start + Int64(10 + generator.below(20)) * day }
            if generator.chance(30) {
                let lower = generator.below(10_000)
                match.split = SnapshotSplit(salt: generator.pick(salts), lowerBucket: lower,
                                            upperBucket: lower + generator.below(10_001 - lower))
            }
            var identifiers: [String: String] = [:]
            for locale in locales where generator.chance(50) { identifiers[locale] = "id-\(index)-\(locale)" }
            let response: SnapshotResponse
            switch generator.below(10) {
            case 0: response = SnapshotResponse(kind: .none)
            case 1, 2:
                response = SnapshotResponse(kind: .alternateProduct, message: "m\(index)", messageIdentifiers: identifiers,
                                            productId: generator.pick(products), billingPlanType: .monthly)
            case 3, 4:
                response = SnapshotResponse(kind: .promotionalOffer, message: "m\(index)", messageIdentifiers: identifiers,
                                            offerIdentifier: "offer-\(index)")
            default:
                response = SnapshotResponse(kind: .message, message: "m\(index)", messageIdentifiers: identifiers)
            }
            rules.append(SnapshotRule(id: "flow/rule\(index)", version: "0123456789abcdef", match: match, response: response))
        }
        return RuntimeSnapshot(bundleId: bundleId, appAppleId: appAppleId, environment: .production,
                               localeFallbacks: ["de-AT": "de-DE", "fr": "fr-FR", "ja": "en-US"], rules: rules)
    }

    @Test("random snapshots of 1 to 300 rules: decide and explain agree on every request")
    func indexedWalkAgreesWithFullWalk() throws {
        var generator = Generator(seed: 20_261_123)
        // A signature that depends only on its inputs, so whole decisions compare with ==.
        let signing: DecisionEngine.OfferSigning = { product, offer, transaction in "\(product)|\(offer)|\(transaction)" }
        var answered = 0
        for round in 0..<40 {
            let snapshot = Self.snapshot(&generator, rules: 1 + generator.below(round.isMultiple(of: 3) ? 300 : 70))
            let engine = DecisionEngine(snapshot: snapshot, offerSigning: signing)
            for _ in 0..<150 {
                let request = DecodedRealtimeRequestBody(
                    originalTransactionId: String(2_000_000_000_000_000 + generator.below(1_000_000)), appAppleId: appAppleId,
                    productId: generator.chance(90) ? generator.pick(Self.products) : "com.example.unknown",
                    userLocale: generator.pick(Self.locales + ["ja", "de-CH", "pt-BR"]),
                    requestIdentifier: "6f1e4b9e-8a43-4c8e-9a59-0d3c1b7f6a10", environment: "Production",
                    signedDate: Self.start + Int64(generator.below(40)) * Self.day - 1 + Int64(generator.below(3)))
                let decided = try engine.decide(request)
                let explained = try engine.explain(request).decision
                #expect(decided == explained, "snapshot \(round), request \(request)")
                if case .respond = decided { answered += 1 }
            }
        }
        // The generated cases must exercise answers, not only refusals.
        #expect(answered > 1_500, "\(answered)")
    }
}
