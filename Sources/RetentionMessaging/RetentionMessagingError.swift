public import HTTPCore
import RetentionMessagingModels

/// Everything that can go wrong talking to the Retention Messaging API.
public enum RetentionMessagingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Apple (or the emulator) answered with an error status; `errorCode`/`errorMessage` come from
    /// the JSON error body when there is one. Unknown codes are kept as they came.
    case api(status: Int, errorCode: Int?, errorMessage: String?)
    /// 401: the token was refused. `bundleId` is the app the token was for (its `bid`); `refusal` is
    /// the emulator's reason when it gave one (Apple's 401 has no body and no reason).
    case unauthorized(bundleId: String?, refusal: String?)
    /// Apple answered 404 without an `errorCode` on an endpoint whose page documents that answer as
    /// "this developer account has no access to the Retention Messaging API": a setup problem, not a
    /// missing resource. `endpoint` is the path that answered (`PUT /realtime/url`).
    case noAPIAccess(endpoint: String)
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
        switch self {
        case .api(let status, _, _): status
        case .unauthorized: 401
        case .noAPIAccess: 404
        default: nil
        }
    }

    /// A DELETE found nothing to delete (404 4040015 for a message, 404 4040014 for an image): the
    /// thing is gone, which is what the delete wanted, so apply counts it as done.
    public var isAlreadyGone: Bool {
        guard case .api(404, let code?, _) = self else { return false }
        return code == AppleErrorCode.messageNotFound || code == AppleErrorCode.imageNotFound
    }

    /// The app holds Apple's maximum of messages or images (403 4030016 or 4030014). Apple's Upload
    /// Image page labels its 403 with both codes, so the two are treated alike.
    public var isMaximumReached: Bool {
        guard case .api(403, let code?, _) = self else { return false }
        return code == AppleErrorCode.maximumMessagesReached || code == AppleErrorCode.maximumImagesReached
    }

    /// Apple refused the token (401): see `description` for the likely causes.
    public var isUnauthorized: Bool {
        switch self {
        case .api(401, _, _), .unauthorized: return true
        default: return false
        }
    }

    /// The account lacks API access (404 without `errorCode` on the realtime-URL or performance-test endpoints).
    public var isNoAPIAccess: Bool {
        if case .noAPIAccess = self { return true }
        return false
    }

    /// What to do about a missing API access, shared by every place that reports it.
    public static let requestAccessHint = """
    The Account Holder of the developer account must request access to the Retention Messaging API from Apple, \
    as the API's documentation on developer.apple.com describes; until Apple grants it, these endpoints answer \
    404 without an error code. Nothing in the manifests needs to change.
    """

    /// The causes of a 401, most likely first.
    public static let unauthorizedCauses = unauthorizedCauses(bundleId: nil)

    /// The causes of a 401, most likely first, naming the app the token was for.
    public static func unauthorizedCauses(bundleId: String?) -> String {
        let app = bundleId.map { "the bundle id \($0) (the App's bundleId, sent as the token's bid)" } ?? "the App's bundle id (the token's bid)"
        return """
        likely causes, most likely first: (1) the key is an App Store Connect API key, not an In-App Purchase key \
        (App Store Connect → Users and Access → Integrations → In-App Purchase); (2) the key id (\(Credentials.keyIdVariable)) \
        or the issuer id (\(Credentials.issuerIdVariable)) does not belong to that key; (3) \(app) is not an app of that \
        developer account (check the manifest's bundleId); (4) this machine's clock is more than a minute off (check NTP)
        """
    }

    public var description: String {
        switch self {
        case .api(401, _, _):
            "HTTP 401: Apple refused the request's token; " + Self.unauthorizedCauses
        case .unauthorized(let bundleId, let refusal?):
            "HTTP 401: the emulator refused the request's token" + (bundleId.map { " for \($0)" } ?? "") + ": " + refusal
        case .unauthorized(let bundleId, nil):
            "HTTP 401: Apple refused the request's token" + (bundleId.map { " for \($0)" } ?? "") + "; "
                + Self.unauthorizedCauses(bundleId: bundleId)
        case .api(let status, let code, let message):
            // Apple's messages end with a period; callers add their own punctuation after this text.
            "HTTP \(status)" + (code.map { " errorCode \($0)" } ?? "") + (message.map { ": \(Self.withoutFinalPeriod($0))" } ?? "")
        case .noAPIAccess(let endpoint):
            "no access to the Retention Messaging API (\(endpoint) answered 404 without an error code). " + Self.requestAccessHint
        case .transport(let error): "network: \(error)"
        case .credentials(let text): "credentials: \(text)"
        case .decoding(let text): "unexpected answer: \(text)"
        case .invalidRequest(let text): "invalid request: \(text)"
        }
    }

    private static func withoutFinalPeriod(_ text: String) -> String {
        var text = Substring(text)
        while let last = text.last, last == "." || last == " " { text.removeLast() }
        return String(text)
    }
}
