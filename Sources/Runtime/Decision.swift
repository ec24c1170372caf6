public import RetentionMessagingModels

/// What to answer Apple's realtime request with.
public enum Decision: Sendable, Hashable {
    /// Send this body; `answered` says which rule chose it and what it is.
    case respond(RealtimeResponseBody, Answered)
    /// Answer nothing (or an empty 200), so that Apple shows the default message.
    case noAnswer(reason: String)
    /// A rule matched and answers `none`: an empty 200, so that Apple shows the default message —
    /// recorded as that rule's answer (a `none` arm is an experiment's natural holdout).
    case ruleAnswersNone(Answered)

    /// The rule that answered, if one did.
    public var answered: Answered? {
        switch self {
        case .respond(_, let answered), .ruleAnswersNone(let answered): answered
        case .noAnswer: nil
        }
    }
}

/// What the engine decided when a rule answered: everything the server logs, counts and records,
/// so nothing downstream works it back out of the body or the rule's id.
public struct Answered: Sendable, Hashable {
    /// `<flow>/<rule>`.
    public var ruleId: String
    public var flow: String?
    public var rule: String
    public var kind: SnapshotResponse.Kind
    /// The message shown; nil for `none`.
    public var messageIdentifier: String?
    /// The locale whose message was served: the customer's, or its declared fallback; nil for `none`.
    public var localeServed: String?
    /// The split arm the customer's bucket fell in, when the rule is one.
    public var split: SnapshotSplit?
    /// The layout of that arm's whole group in this snapshot (`RuntimeSnapshot.splitLayouts`): what
    /// tells one configuration of an experiment from the next.
    public var splitLayout: String?
    public var offerIdentifier: String?
    public var alternateProductId: String?

    public init(ruleId: String, kind: SnapshotResponse.Kind, messageIdentifier: String? = nil, localeServed: String? = nil,
                split: SnapshotSplit? = nil, offerIdentifier: String? = nil, alternateProductId: String? = nil) {
        self.ruleId = ruleId
        let slash = ruleId.firstIndex(of: "/")
        flow = slash.map { String(ruleId[..<$0]) }
        rule = slash.map { String(ruleId[ruleId.index(after: $0)...]) } ?? ruleId
        self.kind = kind
        self.messageIdentifier = messageIdentifier
        self.localeServed = localeServed
        self.split = split
        self.offerIdentifier = offerIdentifier
        self.alternateProductId = alternateProductId
    }

    /// What a rule answers, before the request says which locale.
    init(rule: SnapshotRule) {
        let response = rule.response
        self.init(ruleId: rule.id, kind: response.kind, split: rule.match.split,
                  offerIdentifier: response.kind == .promotionalOffer ? response.offerIdentifier : nil,
                  alternateProductId: response.kind == .alternateProduct ? response.productId : nil)
    }

    /// This rule's answer served in `locale` with `messageIdentifier`.
    func served(_ messageIdentifier: String, in locale: String) -> Answered {
        var answered = self
        answered.messageIdentifier = messageIdentifier
        answered.localeServed = locale
        return answered
    }
}

/// Why one rule did or did not answer a request, for `explain` and `retention-sync decide --explain`.
public struct RuleTrace: Sendable, Hashable {
    public var ruleId: String
    public var matched: Bool
    /// e.g. "product com.x.yearly not in [com.x.monthly]", "bucket 7312 not in [0, 5000)".
    public var reason: String

    public init(ruleId: String, matched: Bool, reason: String) {
        self.ruleId = ruleId
        self.matched = matched
        self.reason = reason
    }
}

/// A rule matched but its answer could not be produced.
public enum DecisionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A promotional offer must be signed, and the engine was given no signer.
    case signerMissing(ruleId: String)
    /// The signer refused (the text never contains key material).
    case signingFailed(ruleId: String, reason: String)

    public var description: String {
        switch self {
        case .signerMissing(let ruleId):
            "rule \(ruleId) answers with a promotional offer or Advanced Commerce data, which must be signed with the App's "
                + "In-App Purchase key: give the engine a PromotionalOfferSigner (key id, issuer id and the .p8 private key)"
        case .signingFailed(let ruleId, let reason):
            "rule \(ruleId): cannot sign the answer: \(reason)"
        }
    }
}
