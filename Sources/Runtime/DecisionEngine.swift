public import RetentionMessaging
import Foundation
import Synchronization

/// Answers Apple's realtime "Get Retention Message" requests from a runtime snapshot. Embed it in
/// your own server: decode and verify the request (`SignedPayloadVerifier`), call `decide`, send
/// the body (or nothing). Snapshots can be swapped while requests are being answered.
public final class DecisionEngine: Sendable {
    /// Signs a promotional offer for (productId, offerIdentifier, transactionId).
    public typealias OfferSigning = @Sendable (_ productId: String, _ offerIdentifier: String,
                                               _ transactionId: String) throws -> String

    private let current: Mutex<CompiledSnapshot>
    private let signOffer: OfferSigning?

    public convenience init(snapshot: RuntimeSnapshot, signer: PromotionalOfferSigner?) {
        var signing: OfferSigning?
        if let signer {
            signing = { productId, offerIdentifier, transactionId in
                try signer.sign(productId: productId, offerIdentifier: offerIdentifier, transactionId: transactionId)
            }
        }
        self.init(snapshot: snapshot, offerSigning: signing)
    }

    /// For signing somewhere else (a key service) or, in previews, not at all.
    public init(snapshot: RuntimeSnapshot, offerSigning: OfferSigning?) {
        current = Mutex(CompiledSnapshot(snapshot))
        signOffer = offerSigning
    }

    /// Atomic: decisions already running finish on the snapshot they started with.
    public func swap(to snapshot: RuntimeSnapshot) {
        // Compiled outside the lock, so swapping never holds up decisions.
        let compiled = CompiledSnapshot(snapshot)
        current.withLock { $0 = compiled }
    }

    public var snapshot: RuntimeSnapshot { current.withLock { $0 }.snapshot }

    public func decide(_ request: DecodedRealtimeRequestBody) throws -> Decision {
        var trace: [RuleTrace]? = nil
        return try evaluate(request, trace: &trace)
    }

    /// The decision, and for each rule evaluated until one answered, why it did or did not.
    public func explain(_ request: DecodedRealtimeRequestBody) throws -> (decision: Decision, trace: [RuleTrace]) {
        var trace: [RuleTrace]? = []
        let decision = try evaluate(request, trace: &trace)
        return (decision, trace ?? [])
    }

    private func evaluate(_ request: DecodedRealtimeRequestBody, trace: inout [RuleTrace]?) throws -> Decision {
        let compiled = current.withLock { $0 }
        let snapshot = compiled.snapshot
        // The verifier already refuses these; an engine fed unverified requests must not answer them either.
        guard request.environment == compiled.environmentName else {
            return .noAnswer(reason: "the request is for environment \(request.environment), "
                             + "but the snapshot serves \(compiled.environmentName)")
        }
        if let appAppleId = snapshot.appAppleId, request.appAppleId != appAppleId {
            return .noAnswer(reason: "the request is for appAppleId \(request.appAppleId), "
                             + "but the snapshot serves appAppleId \(appAppleId)")
        }

        // Explaining walks every rule so product mismatches are reported too; deciding walks only
        // the rules that can match this product.
        let candidates = trace == nil ? compiled.candidates(forProduct: request.productId) : compiled.allIndices
        var buckets = BucketCache(originalTransactionId: request.originalTransactionId)
        var locales = [request.userLocale]
        if let fallback = compiled.fallback(for: request.userLocale) { locales.append(fallback) }

        for (pass, locale) in locales.enumerated() {
            for index in candidates {
                let rule = compiled.rules[index]
                let prefix = pass == 0 ? "" : "with fallback locale \(locale): "
                guard let answer = rule.evaluate(request, locale: locale, buckets: &buckets, trace: &trace,
                                                 prefix: prefix) else { continue }
                switch answer {
                case .none:
                    return .noAnswer(reason: "rule \(rule.id) answers none")
                case .body(let body):
                    return .respond(body, ruleId: rule.id)
                case .promotionalOffer(let messageIdentifier, let offerIdentifier):
                    guard let signOffer else { throw DecisionError.signerMissing(ruleId: rule.id) }
                    let signature: String
                    do {
                        signature = try signOffer(request.productId, offerIdentifier, request.originalTransactionId)
                    } catch {
                        throw DecisionError.signingFailed(ruleId: rule.id, reason: "\(error)")
                    }
                    let offer = PromotionalOffer(messageIdentifier: messageIdentifier,
                                                 promotionalOfferSignatureV2: signature)
                    return .respond(RealtimeResponseBody(promotionalOffer: offer), ruleId: rule.id)
                }
            }
        }
        let tried = locales.count > 1 ? "locale \(locales[0]) or its fallback \(locales[1])" : "locale \(locales[0])"
        return .noAnswer(reason: "no rule matches product \(request.productId) in \(tried)")
    }
}

/// A snapshot with each rule's conditions turned into sets and its answers prebuilt, so deciding
/// does no allocation beyond the answer itself.
private final class CompiledSnapshot: Sendable {
    let snapshot: RuntimeSnapshot
    let environmentName: String
    let rules: [CompiledRule]
    let allIndices: [Int]
    /// For each product some rule names: the rules that name it or name none, in order.
    let rulesByProduct: [String: [Int]]
    /// Rules that name no product: the candidates for any other product.
    let anyProductRules: [Int]

    init(_ snapshot: RuntimeSnapshot) {
        self.snapshot = snapshot
        environmentName = snapshot.environment.appleName
        rules = snapshot.rules.map(CompiledRule.init)
        allIndices = Array(rules.indices)
        var byProduct: [String: [Int]] = [:]
        var anyProduct: [Int] = []
        for (index, rule) in rules.enumerated() {
            guard let products = rule.products else {
                anyProduct.append(index)
                continue
            }
            for product in products { byProduct[product, default: []].append(index) }
        }
        rulesByProduct = byProduct.mapValues { Array(Set($0).union(anyProduct)).sorted() }
        anyProductRules = anyProduct
    }

    func candidates(forProduct product: String) -> [Int] { rulesByProduct[product] ?? anyProductRules }

    /// The declared fallback for a locale: for the locale itself, else for its language alone
    /// (`de` for `de-AT`). Only declared fallbacks apply, and only one step.
    func fallback(for locale: String) -> String? {
        var found = snapshot.localeFallbacks[locale]
        if found == nil, let dash = locale.firstIndex(of: "-") {
            found = snapshot.localeFallbacks[String(locale[..<dash])]
        }
        return found == locale ? nil : found
    }
}

private struct CompiledRule: Sendable {
    enum Answer {
        case none
        case body(RealtimeResponseBody)
        case promotionalOffer(messageIdentifier: String, offerIdentifier: String)
    }

    enum Response: Sendable {
        case none
        /// Locale → the finished body.
        case fixed([String: RealtimeResponseBody])
        /// Locale → message identifier; the signature is made per request.
        case promotionalOffer([String: String], offerIdentifier: String)
    }

    let id: String
    let products: Set<String>?
    let locales: Set<String>?
    let notBefore: Int64?
    let notAfter: Int64?
    let split: SnapshotSplit?
    let response: Response
    let source: SnapshotRule

    init(_ rule: SnapshotRule) {
        id = rule.id
        source = rule
        products = rule.match.products.map(Set.init)
        locales = rule.match.locales.map(Set.init)
        notBefore = rule.match.notBefore
        notAfter = rule.match.notAfter
        split = rule.match.split
        let identifiers = rule.response.messageIdentifiers ?? [:]
        switch rule.response.kind {
        case .none:
            response = .none
        case .message:
            response = .fixed(identifiers.mapValues {
                RealtimeResponseBody(message: RealtimeMessage(messageIdentifier: $0))
            })
        case .alternateProduct:
            let productId = rule.response.productId ?? ""
            let plan = rule.response.billingPlanType
            response = .fixed(identifiers.mapValues {
                RealtimeResponseBody(alternateProduct: AlternateProduct(messageIdentifier: $0, productId: productId,
                                                                        billingPlanType: plan))
            })
        case .promotionalOffer:
            response = .promotionalOffer(identifiers, offerIdentifier: rule.response.offerIdentifier ?? "")
        }
    }

    /// The answer if this rule matches `request` in `locale`; records why when `trace` is non-nil.
    func evaluate(_ request: DecodedRealtimeRequestBody, locale: String, buckets: inout BucketCache,
                  trace: inout [RuleTrace]?, prefix: String) -> Answer? {
        func fail(_ reason: @autoclosure () -> String) -> Answer? {
            trace?.append(RuleTrace(ruleId: id, matched: false, reason: prefix + reason()))
            return nil
        }
        if let products, !products.contains(request.productId) {
            return fail("product \(request.productId) not in \(list(source.match.products))")
        }
        if let locales, !locales.contains(locale) {
            return fail("locale \(locale) not in \(list(source.match.locales))")
        }
        if let notBefore, request.signedDate < notBefore {
            return fail("signedDate \(timestamp(request.signedDate)) is before notBefore \(timestamp(notBefore))")
        }
        if let notAfter, request.signedDate >= notAfter {
            return fail("signedDate \(timestamp(request.signedDate)) is not before notAfter \(timestamp(notAfter))")
        }
        var bucket: Int?
        if let split {
            let value = buckets.bucket(salt: split.salt)
            guard split.lowerBucket <= value, value < split.upperBucket else {
                return fail("bucket \(value) not in [\(split.lowerBucket), \(split.upperBucket)) of split '\(split.salt)'")
            }
            bucket = value
        }
        let answer: Answer
        switch response {
        case .none:
            answer = .none
        case .fixed(let bodies):
            guard let body = bodies[locale] else { return fail(missingIdentifier(locale)) }
            answer = .body(body)
        case .promotionalOffer(let identifiers, let offerIdentifier):
            guard let identifier = identifiers[locale] else { return fail(missingIdentifier(locale)) }
            answer = .promotionalOffer(messageIdentifier: identifier, offerIdentifier: offerIdentifier)
        }
        if trace != nil {
            var held = [products == nil ? "any product" : "product \(request.productId)",
                        locales == nil ? "any locale (\(locale))" : "locale \(locale)"]
            if notBefore != nil || notAfter != nil { held.append("signedDate \(timestamp(request.signedDate)) in window") }
            if let bucket, let split {
                held.append("bucket \(bucket) in [\(split.lowerBucket), \(split.upperBucket)) of split '\(split.salt)'")
            }
            let what = source.response.message.map { "\(source.response.kind.rawValue) '\($0)'" }
                ?? source.response.kind.rawValue
            trace?.append(RuleTrace(ruleId: id, matched: true, reason: prefix + held.joined(separator: ", ") + " → " + what))
        }
        return answer
    }

    private func missingIdentifier(_ locale: String) -> String {
        "message '\(source.response.message ?? "?")' has no approved identifier for locale \(locale)"
    }
}

/// Each split group's bucket is hashed once per request, however many rules share it.
private struct BucketCache {
    let originalTransactionId: String
    private var known: [(salt: String, bucket: Int)] = []

    init(originalTransactionId: String) { self.originalTransactionId = originalTransactionId }

    mutating func bucket(salt: String) -> Int {
        if let hit = known.first(where: { $0.salt == salt }) { return hit.bucket }
        let value = TrafficBucket.bucket(salt: salt, originalTransactionId: originalTransactionId)
        known.append((salt, value))
        return value
    }
}

private func list(_ values: [String]?) -> String { "[" + (values ?? []).joined(separator: ", ") + "]" }

/// UNIX milliseconds as RFC 3339 UTC, for explanations people read.
private func timestamp(_ milliseconds: Int64) -> String {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    formatter.timeZone = TimeZone(identifier: "UTC")
    return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
}
