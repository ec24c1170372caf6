public import RetentionMessagingModels

/// Apple's review state of a piece of content, or that it is not uploaded yet.
public enum ReviewState: Sendable, Hashable, Codable, CustomStringConvertible {
    case notUploaded, pending, approved, rejected
    case unknown(String)

    public init(rawValue: String) {
        switch rawValue {
        case "NOT_UPLOADED": self = .notUploaded
        case "PENDING": self = .pending
        case "APPROVED": self = .approved
        case "REJECTED": self = .rejected
        default: self = .unknown(rawValue)
        }
    }

    public init(_ state: MessageState?) { self = state.map { ReviewState(rawValue: $0.rawValue) } ?? .notUploaded }
    public init(_ state: ImageState?) { self = state.map { ReviewState(rawValue: $0.rawValue) } ?? .notUploaded }

    public var rawValue: String {
        switch self {
        case .notUploaded: "NOT_UPLOADED"
        case .pending: "PENDING"
        case .approved: "APPROVED"
        case .rejected: "REJECTED"
        case .unknown(let raw): raw
        }
    }

    public var description: String { rawValue }

    public init(from decoder: any Decoder) throws { self.init(rawValue: try decoder.singleValueContainer().decode(String.self)) }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// A message or image whose review state matters to an action.
public struct ReviewItem: Codable, Sendable, Hashable, Comparable, CustomStringConvertible {
    public typealias Kind = ContentKind

    public var kind: Kind
    public var identifier: String
    public var name: String?
    public var locale: String?
    public var state: ReviewState

    public init(kind: Kind, identifier: String, name: String?, locale: String?, state: ReviewState) {
        self.kind = kind
        self.identifier = identifier
        self.name = name
        self.locale = locale
        self.state = state
    }

    public static func < (lhs: ReviewItem, rhs: ReviewItem) -> Bool {
        (lhs.kind.rawValue, lhs.name ?? "", lhs.locale ?? "", lhs.identifier) < (rhs.kind.rawValue, rhs.name ?? "", rhs.locale ?? "", rhs.identifier)
    }

    public var description: String {
        let label = "\(kind.rawValue) \(name.map { "'\($0)'" } ?? identifier)" + (locale.map { " (\($0))" } ?? "")
        switch state {
        case .notUploaded: return "\(label): not uploaded yet, then review"
        case .pending: return "\(label): PENDING review"
        default: return "\(label): \(state.rawValue)"
        }
    }
}
