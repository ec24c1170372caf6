/// The two event streams of the contract (`events/v1/<stream>/…`).
public enum EventStream: String, Sendable, CaseIterable, Hashable {
    case decisions
    case outcomes

    /// The `type` member of every line of the stream.
    public var lineType: String {
        switch self {
        case .decisions: "decision"
        case .outcomes: "outcome"
        }
    }

    /// The members of every line of the stream, in the order a line writes them (bytewise by name).
    public var fields: [EventField] {
        switch self {
        case .decisions: EventField.decisionLine
        case .outcomes: EventField.outcomeLine
        }
    }
}
