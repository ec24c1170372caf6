/// The review state of an uploaded message (`messageState`).
public struct MessageState: ForwardCompatibleEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let pending = MessageState(rawValue: "PENDING")
    public static let approved = MessageState(rawValue: "APPROVED")
    public static let rejected = MessageState(rawValue: "REJECTED")
}
