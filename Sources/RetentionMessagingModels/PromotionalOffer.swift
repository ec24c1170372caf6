public struct PromotionalOffer: Codable, Sendable, Hashable {
    public var messageIdentifier: String
    public var promotionalOfferSignatureV2: String
    public init(messageIdentifier: String, promotionalOfferSignatureV2: String) {
        self.messageIdentifier = messageIdentifier
        self.promotionalOfferSignatureV2 = promotionalOfferSignatureV2
    }
}
