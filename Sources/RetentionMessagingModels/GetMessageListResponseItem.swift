public struct GetMessageListResponseItem: Codable, Sendable, Hashable {
    public var messageIdentifier: String
    public var messageState: MessageState
    public init(messageIdentifier: String, messageState: MessageState) {
        self.messageIdentifier = messageIdentifier
        self.messageState = messageState
    }
}
