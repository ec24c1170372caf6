import Basics
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
    /// Makes `advancedCommerceData` for (change, transactionId).
    public typealias AdvancedCommerceSigning = @Sendable (_ change: AdvancedCommerceChange,
                                                          _ transactionId: String) throws -> String

    private let current: Mutex<CompiledSnapshot>
    private let signOffer: OfferSigning?
    private let signAdvancedCommerce: AdvancedCommerceSigning?

    public convenience init(snapshot: RuntimeSnapshot, signer: PromotionalOfferSigner?) {
        var signing: OfferSigning?
        var commerce: AdvancedCommerceSigning?
        if let signer {
            signing = { productId, offerIdentifier, transactionId in
                try signer.sign(productId: productId, offerIdentifier: offerIdentifier, transactionId: transactionId)
            }
            commerce = { change, transactionId in try signer.signAdvancedCommerce(change, transactionId: transactionId) }
        }
        self.init(snapshot: snapshot, offerSigning: signing, advancedCommerceSigning: commerce)
    }

    /// For signing somewhere else (a key service) or, in previews, not at all.
    public init(snapshot: RuntimeSnapshot, offerSigning: OfferSigning?,
                advancedCommerceSigning: AdvancedCommerceSigning? = nil) {
        current = Mutex(CompiledSnapshot(snapshot))
        signOffer = offerSigning
        signAdvancedCommerce = advancedCommerceSigning
    }

    /// Atomic: decisions already running finish on the snapshot they started with.
    public func swap(to snapshot: RuntimeSnapshot) {
        // Compiled outside the lock, so swapping never holds up decisions.
        let compiled = CompiledSnapshot(snapshot)
        current.withLock { $0 = compiled }
    }

    public var snapshot: RuntimeSnapshot { current.withLock { $0 }.snapshot }

    /// `customer`: what Apple signed about the customer (nil when nothing is known); rules with
    /// `match.customer` conditions read it.
    public func decide(_ request: DecodedRealtimeRequestBody, customer: CustomerFacts? = nil) throws -> Decision {
        var trace: [RuleTrace]? = nil
        return try evaluate(request, customer: customer, trace: &trace)
    }

    /// The decision, and for each rule evaluated until one answered, why it did or did not.
    public func explain(_ request: DecodedRealtimeRequestBody, customer: CustomerFacts? = nil) throws -> (decision: Decision, trace: [RuleTrace]) {
        var trace: [RuleTrace]? = []
        let decision = try evaluate(request, customer: customer, trace: &trace)
        return (decision, trace ?? [])
    }

    private func evaluate(_ request: DecodedRealtimeRequestBody, customer: CustomerFacts?, trace: inout [RuleTrace]?) throws -> Decision {
        let compiled = current.withLock { $0 }
        // The verifier already refuses these; an engine fed unverified requests must not answer them either.
        guard request.environment == compiled.environmentName else {
            return .noAnswer(reason: "the request is for environment \(request.environment), "
                             + "but the snapshot serves \(compiled.environmentName)")
        }
        if let appAppleId = compiled.snapshot.appAppleId, request.appAppleId != appAppleId {
            return .noAnswer(reason: "the request is for appAppleId \(request.appAppleId), "
                             + "but the snapshot serves appAppleId \(appAppleId)")
        }

        var locales = [request.userLocale]
        if let fallback = compiled.fallback(for: request.userLocale) { locales.append(fallback) }

        // Explaining walks every rule to say why each did not answer; deciding walks the indexed
        // table, which a property test holds to the same decisions.
        let found = trace == nil ? compiled.table.firstAnswer(request, customer: customer, locales: locales, compiled: compiled)
                                 : compiled.firstAnswerExplained(request, customer: customer, locales: locales, trace: &trace)
        if let (rule, answer, locale) = found {
            switch answer {
            case .none:
                return .ruleAnswersNone(rule.answered)
            case .body(let body, let messageIdentifier):
                return .respond(body, rule.answered.served(messageIdentifier, in: locale))
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
                return .respond(RealtimeResponseBody(promotionalOffer: offer), rule.answered.served(messageIdentifier, in: locale))
            case .advancedCommerce(let messageIdentifier, let change):
                guard let signAdvancedCommerce else { throw DecisionError.signerMissing(ruleId: rule.id) }
                let data: String
                do {
                    data = try signAdvancedCommerce(change, request.originalTransactionId)
                } catch {
                    throw DecisionError.signingFailed(ruleId: rule.id, reason: "\(error)")
                }
                let info = AdvancedCommerceInfo(messageIdentifier: messageIdentifier, advancedCommerceData: data)
                return .respond(RealtimeResponseBody(advancedCommerceInfo: info), rule.answered.served(messageIdentifier, in: locale))
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
    let table: RuleTable

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
        let layouts = snapshot.splitLayouts
        for rule in snapshot.rules {
            let match = rule.match
            compiled.append(CompiledRule(
                rule,
                products: match.products.map { IdSet($0.map { number($0, in: &products) }) },
                locales: match.locales.map { IdSet($0.map { number($0, in: &locales) }) },
                splitGroup: match.split.map { number($0.salt, in: &salts) },
                splitLayout: match.split.flatMap { layouts[$0.salt] }))
        }
        productIds = products
        localeIds = locales
        splitSalts = salts.sorted { $0.value < $1.value }.map(\.key)
        rules = compiled
        table = RuleTable(compiled, productCount: products.count, localeCount: locales.count)
    }

    /// The first rule that answers, walking every rule and recording why each did or did not.
    func firstAnswerExplained(_ request: DecodedRealtimeRequestBody, customer: CustomerFacts?, locales: [String],
                              trace: inout [RuleTrace]?) -> (CompiledRule, CompiledRule.Answer, String)? {
        var context = EvaluationContext(request: request, customer: customer, product: productIds[request.productId],
                                        splitGroups: splitSalts.count)
        for (pass, locale) in locales.enumerated() {
            context.locale = locale
            context.localeId = localeIds[locale]
            context.tracePrefix = pass == 0 ? "" : "with fallback locale \(locale): "
            context.pendingFallback = pass + 1 < locales.count ? locales[pass + 1] : nil
            rules: for rule in rules {
                switch rule.evaluate(&context, trace: &trace) {
                case .skip: continue
                case .deferToFallback: break rules
                case .answer(let answer): return (rule, answer, locale)
                }
            }
        }
        return nil
    }

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

/// The rules' conditions as flat arrays for deciding without a trace: one bit per rule for each
/// product and each locale (a rule naming none has its bit in every row), so one AND per 64 rules
/// leaves only the rules that can match, walked in order with integer compares and no ARC traffic.
private struct RuleTable: Sendable {
    let words: Int
    /// Row `p` (0..<productCount) for numbered products, row `productCount` for any other product.
    let productRows: [UInt64]
    let localeRows: [UInt64]
    let otherProductRow: Int
    let otherLocaleRow: Int
    let notBefore: [Int64]
    let notAfter: [Int64]
    /// For each rule, its place in `conditions`, or -1 when it asks nothing about the customer: a flat
    /// integer per rule, so the walk over rules that ask nothing copies no conditions.
    let customerSlot: [Int]
    let conditions: [CustomerConditions]
    /// -1 for a rule without a split.
    let splitGroup: [Int]
    let lowerBucket: [Int]
    let upperBucket: [Int]

    init(_ rules: [CompiledRule], productCount: Int, localeCount: Int) {
        let words = (rules.count + 63) / 64
        self.words = words
        func rows(_ count: Int, _ ids: (CompiledRule) -> IdSet?) -> [UInt64] {
            var bits = [UInt64](repeating: 0, count: (count + 1) * words)
            for (index, rule) in rules.enumerated() {
                let word = index / 64
                let bit = UInt64(1) << UInt64(index % 64)
                for row in ids(rule)?.members ?? Array(0...count) { bits[row * words + word] |= bit }
            }
            return bits
        }
        productRows = rows(productCount, \.products)
        localeRows = rows(localeCount, \.locales)
        otherProductRow = productCount
        otherLocaleRow = localeCount
        notBefore = rules.map { $0.notBefore ?? .min }
        notAfter = rules.map { $0.notAfter ?? .max }
        var slots: [Int] = [], conditions: [CustomerConditions] = []
        for rule in rules {
            if let customer = rule.customer {
                slots.append(conditions.count)
                conditions.append(customer)
            } else {
                slots.append(-1)
            }
        }
        customerSlot = slots
        self.conditions = conditions
        splitGroup = rules.map { $0.split == nil ? -1 : $0.splitGroup }
        lowerBucket = rules.map { $0.split?.lowerBucket ?? 0 }
        upperBucket = rules.map { $0.split?.upperBucket ?? 0 }
    }

    /// The same walk as the explained one, over only the rules whose product and locale match.
    func firstAnswer(_ request: DecodedRealtimeRequestBody, customer facts: CustomerFacts?, locales: [String],
                     compiled: CompiledSnapshot) -> (CompiledRule, CompiledRule.Answer, String)? {
        let productRow = compiled.productIds[request.productId] ?? otherProductRow
        let signedDate = request.signedDate
        var buckets = [Int](repeating: -1, count: compiled.splitSalts.count)
        for (pass, locale) in locales.enumerated() {
            let localeRow = compiled.localeIds[locale] ?? otherLocaleRow
            let hasPendingFallback = pass + 1 < locales.count
            let found: (CompiledRule, CompiledRule.Answer, String)?? = productRows.withUnsafeBufferPointer { products in
                localeRows.withUnsafeBufferPointer { localeBits in
                    for word in 0..<words {
                        var bits = products[productRow * words + word] & localeBits[localeRow * words + word]
                        while bits != 0 {
                            let index = word * 64 + bits.trailingZeroBitCount
                            bits &= bits - 1
                            guard notBefore[index] <= signedDate, signedDate < notAfter[index] else { continue }
                            let slot = customerSlot[index]
                            if slot >= 0, !conditions[slot].holds(for: facts, at: signedDate) { continue }
                            let group = splitGroup[index]
                            if group >= 0 {
                                if buckets[group] < 0 {
                                    buckets[group] = TrafficBucket.bucket(salt: compiled.splitSalts[group],
                                                                          originalTransactionId: request.originalTransactionId)
                                }
                                guard lowerBucket[index] <= buckets[group], buckets[group] < upperBucket[index] else { continue }
                            }
                            let rule = compiled.rules[index]
                            switch rule.answer(locale: locale, fallbackPending: hasPendingFallback) {
                            case .skip: continue
                            case .deferToFallback: return .some(nil)
                            case .answer(let answer): return (rule, answer, locale)
                            }
                        }
                    }
                    return .some(nil)
                }
            }
            if case .some(let answer?) = found { return answer }
        }
        return nil
    }
}

/// A small set of numbers; most rules name a handful of products or locales, where a linear scan
/// beats hashing.
private struct IdSet: Sendable {
    /// Ascending, without repeats.
    let members: [Int]
    private let small: [Int]
    private let large: Set<Int>?

    init(_ ids: [Int]) {
        let unique = Array(Set(ids)).sorted()
        members = unique
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
    let customer: CustomerFacts?
    let product: Int?
    var locale = ""
    var localeId: Int?
    var tracePrefix = ""
    /// The fallback locale still to try after this pass, if any.
    var pendingFallback: String?
    private var buckets: [Int]

    init(request: DecodedRealtimeRequestBody, customer: CustomerFacts?, product: Int?, splitGroups: Int) {
        self.request = request
        self.customer = customer
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
        case body(RealtimeResponseBody, messageIdentifier: String)
        case promotionalOffer(messageIdentifier: String, offerIdentifier: String)
        case advancedCommerce(messageIdentifier: String, change: AdvancedCommerceChange)
    }

    enum Outcome {
        /// The rule does not answer; try the next.
        case skip
        /// Stop this pass and try the fallback locale.
        case deferToFallback
        case answer(Answer)
    }

    enum Response: Sendable {
        case none
        /// Locale → the finished body and the message it shows.
        case fixed([String: (body: RealtimeResponseBody, messageIdentifier: String)])
        /// Locale → message identifier; the signature is made per request.
        case promotionalOffer([String: String], offerIdentifier: String)
        /// Locale → message identifier; `advancedCommerceData` is signed per request.
        case advancedCommerce([String: String], change: AdvancedCommerceChange)
    }

    let id: String
    let products: IdSet?
    let locales: IdSet?
    let notBefore: Int64?
    let notAfter: Int64?
    let customer: CustomerConditions?
    let split: SnapshotSplit?
    let splitGroup: Int
    let response: Response
    let source: SnapshotRule
    /// What this rule answers, before the request says which locale.
    let answered: Answered

    init(_ rule: SnapshotRule, products: IdSet?, locales: IdSet?, splitGroup: Int?, splitLayout: String?) {
        id = rule.id
        source = rule
        var answered = Answered(rule: rule)
        answered.splitLayout = splitLayout
        self.answered = answered
        self.products = products
        self.locales = locales
        notBefore = rule.match.notBefore
        notAfter = rule.match.notAfter
        customer = rule.match.customer
        split = rule.match.split
        self.splitGroup = splitGroup ?? -1
        let identifiers = rule.response.messageIdentifiers ?? [:]
        switch rule.response.kind {
        case .none:
            response = .none
        case .message:
            response = .fixed(identifiers.mapValues {
                (RealtimeResponseBody(message: RealtimeMessage(messageIdentifier: $0)), $0)
            })
        case .alternateProduct:
            let productId = rule.response.productId ?? ""
            let plan = rule.response.billingPlanType
            response = .fixed(identifiers.mapValues {
                (RealtimeResponseBody(alternateProduct: AlternateProduct(messageIdentifier: $0, productId: productId,
                                                                         billingPlanType: plan)), $0)
            })
        case .promotionalOffer:
            response = .promotionalOffer(identifiers, offerIdentifier: rule.response.offerIdentifier ?? "")
        case .advancedCommerce:
            // Sealing refuses a snapshot without the change, so the empty change is never signed.
            response = .advancedCommerce(identifiers, change: rule.response.advancedCommerce ?? AdvancedCommerceChange(
                sku: "", currentSku: "", displayName: "", description: "", price: 0, reason: "", effective: "",
                retainBillingCycle: true))
        }
    }

    /// What this rule answers in `locale` once its conditions hold.
    func answer(locale: String, fallbackPending: Bool) -> Outcome {
        switch response {
        case .none:
            // A `none` for every locale answers "everyone else"; a customer whose declared fallback
            // locale is served is not everyone else, so the fallback pass decides first.
            return locales == nil && fallbackPending ? .deferToFallback : .answer(.none)
        case .fixed(let bodies):
            return bodies[locale].map { .answer(.body($0.body, messageIdentifier: $0.messageIdentifier)) } ?? .skip
        case .promotionalOffer(let identifiers, let offerIdentifier):
            return identifiers[locale].map { .answer(.promotionalOffer(messageIdentifier: $0, offerIdentifier: offerIdentifier)) } ?? .skip
        case .advancedCommerce(let identifiers, let change):
            return identifiers[locale].map { .answer(.advancedCommerce(messageIdentifier: $0, change: change)) } ?? .skip
        }
    }

    /// Whether this rule answers the request in the context's locale, and why, into `trace`.
    func evaluate(_ context: inout EvaluationContext, trace: inout [RuleTrace]?) -> Outcome {
        let request = context.request
        let locale = context.locale
        func fail(_ reason: @autoclosure () -> String) -> Outcome {
            trace?.append(RuleTrace(ruleId: id, matched: false, reason: context.tracePrefix + reason()))
            return .skip
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
        if let customer, let failure = customer.firstFailure(for: context.customer, at: request.signedDate) {
            return fail("customer: \(failure)")
        }
        var bucket: Int?
        if let split {
            let value = context.bucket(group: splitGroup, salt: split.salt)
            guard split.lowerBucket <= value, value < split.upperBucket else {
                return fail("bucket \(value) not in [\(split.lowerBucket), \(split.upperBucket)) of split '\(split.salt)'")
            }
            bucket = value
        }
        let outcome = answer(locale: locale, fallbackPending: context.pendingFallback != nil)
        switch outcome {
        case .skip:
            return fail(missingIdentifier(locale))
        case .deferToFallback:
            trace?.append(RuleTrace(ruleId: id, matched: false, reason: context.tracePrefix
                                    + "answers none for any locale; trying the fallback locale \(context.pendingFallback ?? "") first"))
        case .answer:
            if trace != nil {
                var held = [products == nil ? "any product" : "product \(request.productId)",
                            locales == nil ? "any locale (\(locale))" : "locale \(locale)"]
                if notBefore != nil || notAfter != nil { held.append("signedDate \(timestamp(request.signedDate)) in window") }
                if let customer { held.append("customer: \(customer.summary)") }
                if let bucket, let split {
                    held.append("bucket \(bucket) in [\(split.lowerBucket), \(split.upperBucket)) of split '\(split.salt)'")
                }
                let what = source.response.message.map { "\(source.response.kind.rawValue) '\($0)'" }
                    ?? source.response.kind.rawValue
                trace?.append(RuleTrace(ruleId: id, matched: true,
                                        reason: context.tracePrefix + held.joined(separator: ", ") + " → " + what))
            }
        }
        return outcome
    }

    private func missingIdentifier(_ locale: String) -> String {
        "message '\(source.response.message ?? "?")' has no approved identifier for locale \(locale)"
    }
}

private func list(_ values: [String]?) -> String { "[" + (values ?? []).joined(separator: ", ") + "]" }

/// UNIX milliseconds as RFC 3339 UTC, for explanations people read.
private func timestamp(_ milliseconds: Int64) -> String {
    UTCTime(milliseconds: milliseconds).formatted()
}
