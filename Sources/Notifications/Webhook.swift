import Basics
public import Foundation

/// Where notifications go and in which shape, read from the environment:
/// `RETENTION_SYNC_WEBHOOK_URL` (an `https://` or `http://` URL) and
/// `RETENTION_SYNC_WEBHOOK_FORMAT` (`slack`, the default, or `json`).
///
/// The URL is a secret — a Slack incoming webhook's path is its credential — so no description,
/// dump or error of this type contains it; `redact` takes it out of any text from below.
public struct Webhook: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public enum Format: String, Sendable, Hashable, CaseIterable {
        /// A Slack-compatible incoming webhook: `{"text": "…"}` (also taken by Mattermost, Rocket.Chat, Teams workflows).
        case slack
        /// `{"event": …, "key": …, "summary": …, "details": {…}}` for any receiver.
        case json
    }

    public static let urlVariable = "RETENTION_SYNC_WEBHOOK_URL"
    public static let formatVariable = "RETENTION_SYNC_WEBHOOK_FORMAT"

    public let url: URL
    public let format: Format

    public init(url: URL, format: Format) {
        self.url = url
        self.format = format
    }

    /// The webhook the environment configures (`RETENTION_SYNC_WEBHOOK_URL`, or the file
    /// `RETENTION_SYNC_WEBHOOK_URL_FILE` names), nil when neither is set or empty.
    public static func fromEnvironment(_ environment: [String: String]) throws(WebhookConfigurationError) -> Webhook? {
        let secret: String?
        do { secret = try EnvironmentSecret.value(urlVariable, in: environment) } catch { throw WebhookConfigurationError(error.description) }
        guard let text = secret?.trimmingCharacters(in: .whitespacesAndNewlines), !text.isEmpty else {
            return nil
        }
        // The value is never echoed: a typo in it is still a secret.
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http",
              let host = url.host, !host.isEmpty else {
            throw WebhookConfigurationError("\(urlVariable) is not an http(s) URL; set it to the webhook's full URL")
        }
        let formatText = environment[formatVariable]?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
        let format: Format
        if formatText.isEmpty {
            format = .slack
        } else if let chosen = Format(rawValue: formatText) {
            format = chosen
        } else {
            throw WebhookConfigurationError("\(formatVariable)=\(formatText) is not a format; use slack or json")
        }
        return Webhook(url: url, format: format)
    }

    /// `text` with the URL and each part of it that could carry its secret replaced by `<webhook>`.
    public func redact(_ text: String) -> String {
        var result = text
        var secrets = [url.absoluteString, url.absoluteString.removingPercentEncoding ?? ""]
        if let components = URLComponents(url: url, resolvingAgainstBaseURL: false) {
            secrets += [components.percentEncodedPath, components.path, components.percentEncodedQuery ?? "",
                        components.query ?? "", components.user ?? "", components.password ?? ""]
        }
        // Longest first, so a part of a longer secret does not leave the rest behind.
        for secret in Set(secrets).filter({ $0.count > 1 }).sorted(by: { ($0.count, $0) > ($1.count, $1) }) {
            result = result.replacingOccurrences(of: secret, with: "<webhook>")
        }
        return result
    }

    public var description: String { "\(format.rawValue) webhook from \(Self.urlVariable)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["format": format.rawValue], displayStyle: .struct) }
}

public struct WebhookConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
