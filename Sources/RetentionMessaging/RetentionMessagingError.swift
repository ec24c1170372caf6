public import HTTP

/// Everything that can go wrong talking to the Retention Messaging API.
public enum RetentionMessagingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Apple (or the emulator) answered with an error status; `errorCode`/`errorMessage` come from
    /// the JSON error body when there is one. Unknown codes are kept as they came.
    case api(status: Int, errorCode: Int?, errorMessage: String?)
    /// No answer: the connection failed, timed out or dropped.
    case transport(HTTPError)
    /// Credentials are missing or malformed; nothing was sent. Never contains key material.
    case credentials(String)
    /// The answer could not be decoded.
    case decoding(String)
    /// The request was refused locally before being sent (bad identifier, non-loopback http://, …).
    case invalidRequest(String)

    public var errorCode: Int? {
        if case .api(_, let code, _) = self { return code }
        return nil
    }

    public var status: Int? {
        if case .api(let status, _, _) = self { return status }
        return nil
    }

    public var description: String {
        switch self {
        case .api(let status, let code, let message):
            "HTTP \(status)" + (code.map { " errorCode \($0)" } ?? "") + (message.map { ": \($0)" } ?? "")
        case .transport(let error): "network: \(error)"
        case .credentials(let text): "credentials: \(text)"
        case .decoding(let text): "unexpected answer: \(text)"
        case .invalidRequest(let text): "invalid request: \(text)"
        }
    }
}
