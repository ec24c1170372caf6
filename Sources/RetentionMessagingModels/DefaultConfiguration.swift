/// The body of `PUT /default/{productId}/{locale}` and the answer of `GET` on the same path.
public struct DefaultConfigurationRequest: Codable, Sendable, Hashable {
    public var messageIdentifier: String
    public init(messageIdentifier: String) { self.messageIdentifier = messageIdentifier }
}

/// The body of `PUT /realtime/url` and the answer of `GET` on the same path.
public struct RealtimeURLRequest: Codable, Sendable, Hashable {
    public var realtimeURL: String
    public init(realtimeURL: String) { self.realtimeURL = realtimeURL }
}
