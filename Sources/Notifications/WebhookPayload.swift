public import Foundation
import RetentionMessagingModels

/// The body of the one request that carries one event, in the webhook's format. Keys are sorted,
/// so the same event always gives the same bytes.
public enum WebhookPayload {
    public static func body(for event: NotificationEvent, format: Webhook.Format) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data: Data?
        switch format {
        case .slack:
            data = try? encoder.encode(SlackMessage(text: "[retention-sync] " + event.summary))
        case .json:
            data = try? encoder.encode(JSONMessage(event: event.kind.rawValue, key: event.key, bundleId: event.bundleId,
                                                   environment: event.environment.rawValue, summary: event.summary,
                                                   details: event.details))
        }
        // Strings and string maps always encode; the fallback only keeps the signature total.
        return data ?? Data("{}".utf8)
    }

    struct SlackMessage: Encodable {
        var text: String
    }

    struct JSONMessage: Encodable {
        var formatVersion = "1.0"
        var source = "retention-sync"
        var event: String
        var key: String
        var bundleId: String
        var environment: String
        var summary: String
        var details: [String: String]

        enum CodingKeys: String, CodingKey {
            case formatVersion = "format_version", source, event, key, bundleId = "bundle_id", environment, summary, details
        }
    }
}
