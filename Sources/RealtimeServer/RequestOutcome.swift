import EventContract
import EventStore
import Runtime

/// How one realtime request ended, decided once and worded from here for the request log
/// (`outcome`), the metrics and the decision event (`answer`), so the three never disagree.
enum RequestOutcome {
    /// Waited in the queue past `--shed-after`: answered `{}` at once.
    case shed
    /// No signed payload in the body.
    case badRequest
    /// The signed payload failed verification.
    case unauthorized(reason: String)
    /// No snapshot is loaded yet.
    case notReady
    /// The engine could not produce the answer a rule chose (a promotional offer it cannot sign).
    case internalError
    /// No rule matched: Apple shows the default message.
    case noAnswer
    /// A rule matched and answers `none` (an experiment's holdout).
    case ruleAnswersNone(Answered)
    /// A rule answered with a message, a promotional offer or an alternate product.
    case answered(Answered)

    /// The request log's and the metrics' word for it.
    var logName: String {
        switch self {
        case .shed: "shed"
        case .badRequest: "bad_request"
        case .unauthorized: "unauthorized"
        case .notReady: "not_ready"
        case .internalError: "internal_error"
        case .noAnswer, .ruleAnswersNone: "no_answer"
        case .answered: "answered"
        }
    }

    /// The decision event's word for it.
    var answer: DecisionAnswer {
        switch self {
        case .shed: .shed
        case .badRequest, .unauthorized: .refused
        case .notReady: .notReady
        case .internalError: .error
        case .noAnswer, .ruleAnswersNone: .none
        case .answered(let answered): DecisionAnswer(answered.kind)
        }
    }

    /// The rule that answered, if one did.
    var answered: Answered? {
        switch self {
        case .ruleAnswersNone(let answered), .answered(let answered): answered
        case .shed, .badRequest, .unauthorized, .notReady, .internalError, .noAnswer: nil
        }
    }

    func describe(into entry: inout RequestLogEntry) {
        entry.outcome = logName
        if case .unauthorized(let reason) = self { entry.reason = reason }
        guard let answered else { return }
        entry.rule = answered.ruleId
        guard case .answered = self else { return }
        entry.kind = answer.rawValue
        entry.messageIdentifier = answered.messageIdentifier
        if let split = answered.split {
            entry.splitGroup = split.salt
            entry.splitBuckets = "\(split.lowerBucket)-\(split.upperBucket)"
        }
    }

    func describe(into facts: inout DecisionFacts) {
        facts.answer = answer
        guard let answered else { return }
        facts.flow = answered.flow
        facts.rule = answered.rule
        facts.messageIdentifier = answered.messageIdentifier
        facts.localeServed = answered.localeServed
        facts.offerIdentifier = answered.offerIdentifier
        facts.alternateProductId = answered.alternateProductId
        if let split = answered.split {
            facts.splitGroup = split.salt
            facts.splitControl = split.control == true
            facts.splitLayout = answered.splitLayout
        }
    }
}

extension DecisionAnswer {
    /// The answer a kind of rule response gives.
    init(_ kind: SnapshotResponse.Kind) {
        switch kind {
        case .message: self = .message
        case .promotionalOffer: self = .promotionalOffer
        case .alternateProduct: self = .alternateProduct
        case .advancedCommerce: self = .advancedCommerce
        case .none: self = .none
        }
    }
}
