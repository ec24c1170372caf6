/// What the developer's realtime endpoint answers: exactly one of the members is set.
public struct RealtimeResponseBody: Codable, Sendable, Hashable {
    public var message: RealtimeMessage?
    public var alternateProduct: AlternateProduct?
    public var promotionalOffer: PromotionalOffer?

    public init(message: RealtimeMessage? = nil, alternateProduct: AlternateProduct? = nil,
                promotionalOffer: PromotionalOffer? = nil) {
        self.message = message
        self.alternateProduct = alternateProduct
        self.promotionalOffer = promotionalOffer
    }
}
