public import RetentionMessagingModels

/// How one realtime request of a performance test ended, named as Apple's `SendAttemptResult`.
public struct SendAttemptResult: ForwardCompatibleEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let success = SendAttemptResult(rawValue: "SUCCESS")
    /// No answer within the response-time threshold, or an answer that came too late.
    public static let timedOut = SendAttemptResult(rawValue: "TIMED_OUT")
    /// The TLS handshake or the certificate check failed.
    public static let tlsIssue = SendAttemptResult(rawValue: "TLS_ISSUE")
    public static let circularRedirect = SendAttemptResult(rawValue: "CIRCULAR_REDIRECT")
    /// The connection closed without an answer.
    public static let noResponse = SendAttemptResult(rawValue: "NO_RESPONSE")
    /// No connection (refused, unreachable, name not resolved).
    public static let socketIssue = SendAttemptResult(rawValue: "SOCKET_ISSUE")
    public static let unsupportedCharset = SendAttemptResult(rawValue: "UNSUPPORTED_CHARSET")
    /// HTTP 200 whose body is not a valid RealtimeResponseBody (or names a message that is not APPROVED).
    public static let invalidResponse = SendAttemptResult(rawValue: "INVALID_RESPONSE")
    public static let prematureClose = SendAttemptResult(rawValue: "PREMATURE_CLOSE")
    /// Any status other than 200.
    public static let unsuccessfulHTTPResponseCode = SendAttemptResult(rawValue: "UNSUCCESSFUL_HTTP_RESPONSE_CODE")
    public static let other = SendAttemptResult(rawValue: "OTHER")
}
