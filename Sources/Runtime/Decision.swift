public import RetentionMessagingModels

/// What to answer Apple's realtime request with.
public enum Decision: Sendable, Hashable {
    /// Send this body; `ruleId` is the snapshot rule that chose it.
    case respond(RealtimeResponseBody, ruleId: String)
    /// Answer nothing (or an empty 200), so that Apple shows the default message.
    case noAnswer(reason: String)
    /// The rule `ruleId` matched and answers `none`: an empty 200, so that Apple shows the default
    /// message — recorded as that rule's answer (a `none` arm is an experiment's natural holdout).
    case ruleAnswersNone(ruleId: String)
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
            "rule \(ruleId) answers with a promotional offer, which must be signed with the App's In-App Purchase "
                + "key: give the engine a PromotionalOfferSigner (key id, issuer id and the .p8 private key)"
        case .signingFailed(let ruleId, let reason):
            "rule \(ruleId): cannot sign the promotional offer: \(reason)"
        }
    }
}
