public import RetentionMessagingModels
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
        var context = EvaluationContext(request: request, product: compiled.productIds[request.productId],
                                        splitGroups: compiled.splitSalts.count)
        var locales = [request.userLocale]
        if let fallback = compiled.fallback(for: request.userLocale) { locales.append(fallback) }

        for (pass, locale) in locales.enumerated() {
            context.locale = locale
            context.localeId = compiled.localeIds[locale]
            context.tracePrefix = pass == 0 || trace == nil ? "" : "with fallback locale \(locale): "
            context.pendingFallback = pass + 1 < locales.count ? locales[pass + 1] : nil
            rules: for index in candidates {
                let rule = compiled.rules[index]
                guard let answer = rule.evaluate(&context, trace: &trace) else { continue }
                switch answer {
                case .deferToFallback:
                    break rules
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

/// A snapshot with its products, locales and split groups numbered and each rule's answers
/// prebuilt, so that deciding compares integers and allocates little beyond the answer itself.
private final class CompiledSnapshot: Sendable {
    let snapshot: RuntimeSnapshot
    let environmentName: String
    let productIds: [String: Int]
    let localeIds: [String: Int]
    /// Index = split group number.
    let splitSalts: [String]
    let rules: [CompiledRule]
    let allIndices: [Int]
    /// For each product some rule names: the rules that name it or name none, in order.
    let rulesByProduct: [String: [Int]]
    /// Rules that name no product: the candidates for any other product.
    let anyProductRules: [Int]

    init(_ snapshot: RuntimeSnapshot) {
        self.snapshot = snapshot
        environmentName = snapshot.environment.appleName
        var products: [String: Int] = [:]
        var locales: [String: Int] = [:]
        var salts: [String: Int] = [:]
        func number(_ value: String, in table: inout [String: Int]) -> Int {
            if let known = table[value] { return known }
            table[value] = table.count
            return table.count - 1
        }
        var compiled: [CompiledRule] = []
        for rule in snapshot.rules {
            let match = rule.match
            compiled.append(CompiledRule(
                rule,
                products: match.products.map { IdSet($0.map { number($0, in: &products) }) },
                locales: match.locales.map { IdSet($0.map { number($0, in: &locales) }) },
                splitGroup: match.split.map { number($0.salt, in: &salts) }))
        }
        productIds = products
        localeIds = locales
        splitSalts = salts.sorted { $0.value < $1.value }.map(\.key)
        rules = compiled
        allIndices = Array(compiled.indices)

        var byProduct: [String: [Int]] = [:]
        var anyProduct: [Int] = []
        for (index, rule) in snapshot.rules.enumerated() {
            guard let names = rule.match.products else {
                anyProduct.append(index)
                continue
            }
            for product in Set(names) { byProduct[product, default: []].append(index) }
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

/// A small set of numbers; most rules name a handful of products or locales, where a linear scan
/// beats hashing.
private struct IdSet: Sendable {
    private let small: [Int]
    private let large: Set<Int>?

    init(_ ids: [Int]) {
        let unique = Array(Set(ids)).sorted()
        small = unique.count <= 8 ? unique : []
        large = unique.count <= 8 ? nil : Set(unique)
    }

    func contains(_ id: Int?) -> Bool {
        guard let id else { return false }
        if let large { return large.contains(id) }
        return small.contains(id)
    }
}

/// What one request is evaluated with: its numbered product and locale, and the buckets hashed so
/// far (each split group's bucket is hashed once per request, however many rules share it).
private struct EvaluationContext {
    let request: DecodedRealtimeRequestBody
    let product: Int?
    var locale = ""
    var localeId: Int?
    var tracePrefix = ""
    /// The fallback locale still to try after this pass, if any.
    var pendingFallback: String?
    private var buckets: [Int]

    init(request: DecodedRealtimeRequestBody, product: Int?, splitGroups: Int) {
        self.request = request
        self.product = product
        buckets = [Int](repeating: -1, count: splitGroups)
    }

    mutating func bucket(group: Int, salt: String) -> Int {
        if buckets[group] < 0 {
            buckets[group] = TrafficBucket.bucket(salt: salt, originalTransactionId: request.originalTransactionId)
        }
        return buckets[group]
    }
}

private final class CompiledRule: Sendable {
    enum Answer {
        case none
        /// Stop this pass and try the fallback locale.
        case deferToFallback
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
    let products: IdSet?
    let locales: IdSet?
    let notBefore: Int64?
    let notAfter: Int64?
    let split: SnapshotSplit?
    let splitGroup: Int
    let response: Response
    let source: SnapshotRule

    init(_ rule: SnapshotRule, products: IdSet?, locales: IdSet?, splitGroup: Int?) {
        id = rule.id
        source = rule
        self.products = products
        self.locales = locales
        notBefore = rule.match.notBefore
        notAfter = rule.match.notAfter
        split = rule.match.split
        self.splitGroup = splitGroup ?? -1
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

    /// The answer if this rule matches the request in the context's locale; records why when
    /// `trace` is non-nil.
    func evaluate(_ context: inout EvaluationContext, trace: inout [RuleTrace]?) -> Answer? {
        let request = context.request
        let locale = context.locale
        func fail(_ reason: @autoclosure () -> String) -> Answer? {
            trace?.append(RuleTrace(ruleId: id, matched: false, reason: context.tracePrefix + reason()))
            return nil
        }
        if let products, !products.contains(context.product) {
            return fail("product \(request.productId) not in \(list(source.match.products))")
        }
        if let locales, !locales.contains(context.localeId) {
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
            let value = context.bucket(group: splitGroup, salt: split.salt)
            guard split.lowerBucket <= value, value < split.upperBucket else {
                return fail("bucket \(value) not in [\(split.lowerBucket), \(split.upperBucket)) of split '\(split.salt)'")
            }
            bucket = value
        }
        let answer: Answer
        switch response {
        case .none:
            // A `none` for every locale answers "everyone else"; a customer whose declared fallback
            // locale is served is not everyone else, so the fallback pass decides first.
            if locales == nil, let fallback = context.pendingFallback {
                trace?.append(RuleTrace(ruleId: id, matched: false,
                                        reason: context.tracePrefix + "answers none for any locale; trying the fallback locale \(fallback) first"))
                return .deferToFallback
            }
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
            trace?.append(RuleTrace(ruleId: id, matched: true,
                                    reason: context.tracePrefix + held.joined(separator: ", ") + " → " + what))
        }
        return answer
    }

    private func missingIdentifier(_ locale: String) -> String {
        "message '\(source.response.message ?? "?")' has no approved identifier for locale \(locale)"
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
