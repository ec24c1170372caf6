/// `advancedCommerceInfo` in a realtime answer (Retention Messaging API 1.2), for Advanced Commerce API
/// subscriptions only: the message to show and `advancedCommerceData`, the Base64-encoded JSON object
/// holding the signed SubscriptionModifyInAppRequest that describes the offer or switch-plan.
public struct AdvancedCommerceInfo: Codable, Sendable, Hashable {
    public var messageIdentifier: String
    public var advancedCommerceData: String

    public init(messageIdentifier: String, advancedCommerceData: String) {
        self.messageIdentifier = messageIdentifier
        self.advancedCommerceData = advancedCommerceData
    }
}
