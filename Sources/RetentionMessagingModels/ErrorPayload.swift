/// Apple's error body: `{"errorCode": <int>, "errorMessage": "<text>"}`.
public struct ErrorPayload: Codable, Sendable, Hashable {
    public var errorCode: Int
    public var errorMessage: String
    public init(errorCode: Int, errorMessage: String) {
        self.errorCode = errorCode
        self.errorMessage = errorMessage
    }
}

/// Apple's numeric error codes for the Retention Messaging API, as the spec lists them.
public enum AppleErrorCode {
    public static let invalidTransactionId = 4000006
    public static let invalidProductId = 4000023
    public static let appTransactionIdNotSupported = 4000048
    public static let familyTransactionNotSupported = 4000185
    public static let transactionIdNotOriginal = 4000187
    public static let invalidImage = 4000161
    public static let headerTooLong = 4000162
    public static let bodyTooLong = 4000163
    public static let invalidLocale = 4000164
    public static let altTextTooLong = 4000175
    public static let invalidPerformanceTestRequest = 4000211
    public static let invalidPerformanceTestRequestId = 4000212
    public static let performanceTestAlreadyRunning = 4000213
    public static let invalidRealtimeURL = 4000215
    public static let invalidImageSize = 4000216
    public static let tooManyBulletPoints = 4000218
    public static let bulletPointTextTooLong = 4000219
    public static let headerPositionNeedsImage = 4000224
    public static let maximumImagesReached = 4030014
    public static let maximumMessagesReached = 4030016
    public static let messageNotApproved = 4030017
    public static let imageNotApproved = 4030018
    public static let imageInUse = 4030019
    public static let realtimeURLNeedsPerformanceTest = 4030026
    public static let imageNotFound = 4040014
    public static let messageNotFound = 4040015
    public static let performanceTestNotFound = 4040018
    public static let defaultNotFound = 4040020
    public static let realtimeURLNotFound = 4040021
    public static let imageAlreadyExists = 4090000
    public static let messageAlreadyExists = 4090001
    public static let rateLimitExceeded = 4290000
    public static let generalInternal = 5000000
    /// Also a general internal error; retried like 5000000.
    public static let generalInternalRetryable = 5000001
}
