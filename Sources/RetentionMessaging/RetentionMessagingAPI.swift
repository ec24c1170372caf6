public import RetentionMessagingModels
/// The Retention Messaging endpoints the reconciler uses, as a role: the libcurl-backed
/// `RetentionMessagingClient` plays it against Apple or the emulator; tests may wrap it.
///
/// Every call spends Apple's rate-limit budget. Errors are `RetentionMessagingError`.
public protocol RetentionMessagingAPI: Sendable {
    var environment: Environment { get }

    func uploadMessage(identifier: String, body: UploadMessageRequestBody) async throws
    func deleteMessage(identifier: String) async throws
    func getMessageList() async throws -> GetMessageListResponse

    func uploadImage(identifier: String, size: ImageSize, png: [UInt8]) async throws
    func deleteImage(identifier: String) async throws
    func getImageList() async throws -> GetImageListResponse

    func configureDefaultMessage(productId: String, locale: String, messageIdentifier: String) async throws
    /// nil when no default is set (404 4040020).
    func getDefaultMessage(productId: String, locale: String) async throws -> DefaultConfigurationResponse?
    func deleteDefaultMessage(productId: String, locale: String) async throws

    func configureRealtimeURL(_ url: String) async throws
    /// nil when no realtime URL is configured (404 4040021).
    func getRealtimeURL() async throws -> String?
    func deleteRealtimeURL() async throws

    /// How many requests this client has sent, per endpoint class, since it was made.
    var requestCounts: RequestCounts { get }
}

/// Requests sent, by the rate-limit class Apple applies to them.
public struct RequestCounts: Sendable, Hashable, Codable {
    /// `PUT /default/...` (10/s in production).
    public var configureDefault: Int
    /// Every other endpoint (1/s in production).
    public var other: Int
    /// Attempts that were retries of an earlier attempt (included in the two counts above).
    public var retries: Int

    public init(configureDefault: Int = 0, other: Int = 0, retries: Int = 0) {
        self.configureDefault = configureDefault
        self.other = other
        self.retries = retries
    }

    public var total: Int { configureDefault + other }
}
