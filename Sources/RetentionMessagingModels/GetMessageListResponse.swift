/// `GET /message/list`: identifiers and states only, never content.
public struct GetMessageListResponse: Codable, Sendable, Hashable {
    public var messageIdentifiers: [GetMessageListResponseItem]
    public init(messageIdentifiers: [GetMessageListResponseItem]) { self.messageIdentifiers = messageIdentifiers }
}
