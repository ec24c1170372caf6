public import Foundation
public import HTTPCore
import RetentionMessagingModels
import Synchronization

/// Posts each verified notification's body to a team's own endpoint (`serve --forward-notifications`),
/// at most `limit` at a time: more are dropped with a log line, since Apple's retries and Notification
/// History still have them. Failures are logged, never retried here.
public struct NotificationForwarder: Sendable {
    public let target: URL
    public let transport: any HTTPTransport
    public let limit: Int
    /// One JSON log line per event (`notification_not_forwarded`, `notification_forward_failed`).
    public let log: @Sendable (String) -> Void
    private let inFlight = InFlight()

    public init(target: URL, transport: any HTTPTransport, limit: Int = 64, log: @escaping @Sendable (String) -> Void) {
        self.target = target
        self.transport = transport
        self.limit = limit
        self.log = log
    }

    /// Starts forwarding `body` and returns at once.
    public func forward(_ body: Data) {
        guard inFlight.count.add(1, ordering: .relaxed).newValue <= limit else {
            inFlight.count.subtract(1, ordering: .relaxed)
            log(#"{"event":"notification_not_forwarded","message":"\#(limit) forwards are in flight; this one was not forwarded"}"#)
            return
        }
        let (transport, target, log, inFlight) = (transport, target, log, inFlight)
        Task {
            defer { inFlight.count.subtract(1, ordering: .relaxed) }
            let request = HTTPRequest(method: "POST", url: target, headers: [("Content-Type", "application/json")], body: body)
            do {
                let response = try await transport.send(request)
                if !(200..<300).contains(response.status) {
                    log(#"{"event":"notification_forward_failed","message":"the forward target answered HTTP \#(response.status)"}"#)
                }
            } catch {
                log(#"{"event":"notification_forward_failed","message":"# + JSONLogText.string("\(error)") + "}")
            }
        }
    }

    /// Forwards in flight, shared by the forwarding tasks.
    final class InFlight: Sendable {
        let count = Atomic(0)
    }
}

/// Text as a JSON string, written as every other JSON line serve logs is.
public enum JSONLogText {
    public static func string(_ text: String) -> String {
        var json = CanonicalJSONWriter(capacity: text.utf8.count + 2)
        json.string(text)
        return String(decoding: json.bytes, as: UTF8.self)
    }
}
