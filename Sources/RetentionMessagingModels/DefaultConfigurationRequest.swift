/// The body of `PUT /default/{productId}/{locale}` (Configure Default Message).
public struct DefaultConfigurationRequest: Codable, Sendable, Hashable {
    public var messageIdentifier: String
    public init(messageIdentifier: String) { self.messageIdentifier = messageIdentifier }
}
