public struct RealtimeMessage: Codable, Sendable, Hashable {
    public var messageIdentifier: String
    public init(messageIdentifier: String) { self.messageIdentifier = messageIdentifier }
}
