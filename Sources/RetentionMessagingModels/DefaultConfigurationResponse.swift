/// The answer of `GET /default/{productId}/{locale}` (Get Default Message).
public struct DefaultConfigurationResponse: Codable, Sendable, Hashable {
    public var messageIdentifier: String
    public init(messageIdentifier: String) { self.messageIdentifier = messageIdentifier }
}
