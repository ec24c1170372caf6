/// The decoded payload of Apple's realtime "Get Retention Message" request.
public struct DecodedRealtimeRequestBody: Codable, Sendable, Hashable {
    public var originalTransactionId: String
    public var appAppleId: Int64
    public var productId: String
    public var userLocale: String
    public var requestIdentifier: String
    /// `Sandbox` or `Production`, as Apple spells it.
    public var environment: String
    /// UNIX time in milliseconds.
    public var signedDate: Int64

    public init(originalTransactionId: String, appAppleId: Int64, productId: String, userLocale: String,
                requestIdentifier: String, environment: String, signedDate: Int64) {
        self.originalTransactionId = originalTransactionId
        self.appAppleId = appAppleId
        self.productId = productId
        self.userLocale = userLocale
        self.requestIdentifier = requestIdentifier
        self.environment = environment
        self.signedDate = signedDate
    }
}
