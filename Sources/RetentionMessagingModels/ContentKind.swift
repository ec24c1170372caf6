/// The kinds of content Apple reviews before it may be shown: each is uploaded under an identifier
/// the developer chooses, listed with its review state, and counted against a cap. Plans, the
/// inventory, review items and the state record all name content by this one vocabulary.
public enum ContentKind: String, Codable, Sendable, Hashable, CaseIterable, Comparable {
    case message, image

    /// Apple's cap on how many of this kind one app may hold in one environment.
    public var cap: Int {
        switch self {
        case .message: RetentionLimits.messages
        case .image: RetentionLimits.images
        }
    }

    public static func < (lhs: ContentKind, rhs: ContentKind) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// A JSON key named after a content kind, for documents that hold one member per kind:
/// `messages`, `images`, `messages_after`, `images_cap`.
public struct ContentKindKey: CodingKey {
    public var stringValue: String
    public var intValue: Int? { nil }

    public init(stringValue: String) { self.stringValue = stringValue }
    public init?(intValue: Int) { nil }

    /// `<kind>s` followed by `suffix`.
    public init(_ kind: ContentKind, suffix: String = "") { stringValue = "\(kind.rawValue)s\(suffix)" }
}
