public import RetentionMessagingModels

/// One notification in an environment's history: what Get Notification History returns
/// (`signedPayload`, `sendAttempts`), with the fields its filters read kept beside it so a query
/// never re-decodes a JWS.
public struct NotificationHistoryRecord: Sendable, Hashable, Codable {
    public var signedPayload: String
    /// The notification's `signedDate`, ms since 1970: history is ordered and windowed by it.
    public var signedDate: Int64
    public var notificationType: String
    public var subtype: String?
    public var notificationUUID: String
    /// The notification's transaction's `transactionId` and `originalTransactionId`.
    public var transactionId: String?
    public var originalTransactionId: String?
    /// Each attempt to push it to the app's notification URL; empty when no URL was set.
    public var sendAttempts: [SendAttemptItem]

    public init(signedPayload: String, signedDate: Int64, notificationType: String, subtype: String?, notificationUUID: String,
                transactionId: String?, originalTransactionId: String?, sendAttempts: [SendAttemptItem]) {
        self.signedPayload = signedPayload
        self.signedDate = signedDate
        self.notificationType = notificationType
        self.subtype = subtype
        self.notificationUUID = notificationUUID
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.sendAttempts = sendAttempts
    }

    /// True unless an attempt succeeded: what `onlyFailures` keeps.
    public var neverDelivered: Bool { !sendAttempts.contains { $0.sendAttemptResult == SendAttemptResult.success.rawValue } }
}
