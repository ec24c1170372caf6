/// What a decision event says `serve` answered (`answer` in the contract): one of the four kinds of
/// response a rule can give, `none` (the rule answers nothing, or no rule matched), `refused` (the
/// request failed verification), or why no decision was made (`shed`, `not_ready`, `error`).
public enum DecisionAnswer: String, Sendable, CaseIterable, Hashable {
    case message
    case promotionalOffer
    case alternateProduct
    case advancedCommerce
    case none
    case refused
    case shed
    case notReady = "not_ready"
    case error
}
