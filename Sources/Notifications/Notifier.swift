public import Basics
import Foundation
public import HTTPCore
import HTTPClient

/// Sends each event a run found to the webhook, once: events already in the ledger are skipped,
/// events of the same key in one run are sent once, and each delivered event is recorded.
///
/// A notification is never worth failing a run for. Nothing here throws: a webhook that is down, a
/// receiver that refuses, or a ledger that cannot be read or written becomes a warning, and what was
/// not delivered is tried again by the next run.
public struct Notifier: Sendable {
    public var webhook: Webhook
    public var ledger: any NotificationLedger
    public var transport: any HTTPTransport
    /// Attempts per event for failures that may pass (network, 429, 5xx).
    public var attempts: Int = 3
    /// Waits before attempt `n` (2, 3, …); half a second, doubling, by default.
    public var pause: @Sendable (_ attempt: Int) async -> Void = { attempt in
        try? await Task.sleep(nanoseconds: UInt64(500_000_000) << UInt64(max(0, attempt - 2)))
    }

    public init(webhook: Webhook, ledger: any NotificationLedger, transport: any HTTPTransport) {
        self.webhook = webhook
        self.ledger = ledger
        self.transport = transport
    }

    public func send(_ events: [NotificationEvent], now: UTCTime) async -> NotificationOutcome {
        var outcome = NotificationOutcome()
        var seen = Set<String>()
        // One message per key per run, in a stable order.
        let unique = events.filter { seen.insert($0.key).inserted }
            .sorted { ($0.kind.order, $0.key) < ($1.kind.order, $1.key) }
        guard !unique.isEmpty else { return outcome }

        var document: NotificationLedgerDocument
        do {
            document = try await ledger.load()
        } catch {
            // Without the ledger every run would tell everything again: better to tell nothing this time.
            outcome.warnings.append("notifications: nothing sent: cannot read the ledger: \(webhook.redact(error.message))")
            outcome.failed = unique.map(\.key)
            return outcome
        }

        var webhookDown: String?
        for event in unique {
            if document.contains(event.key) {
                outcome.alreadySent.append(event.key)
                continue
            }
            if webhookDown != nil {
                outcome.failed.append(event.key)
                continue
            }
            switch await deliver(event) {
            case .delivered:
                document.record(event.key, at: now)
                outcome.sent.append(event.key)
            case .refused(let reason):
                outcome.failed.append(event.key)
                outcome.warnings.append("the webhook refused the \(event.kind.rawValue) notification (\(reason)); check \(Webhook.urlVariable) and \(Webhook.formatVariable)")
            case .unreachable(let reason):
                outcome.failed.append(event.key)
                webhookDown = reason
            }
        }
        if let webhookDown {
            outcome.warnings.append("the webhook did not answer after \(attempts) attempts (\(webhookDown)); "
                + "\(outcome.failed.count) notification(s) are sent by the next run")
        }
        if !outcome.sent.isEmpty {
            document.expire(now: now)
            do {
                try await ledger.save(document)
            } catch {
                outcome.warnings.append("cannot record the notifications sent in the ledger (\(error.message)); the next run may send them again")
            }
        }
        outcome.warnings = outcome.warnings.map { "notifications: " + webhook.redact($0) }
        return outcome
    }

    enum Delivery {
        case delivered
        /// The receiver answered and will not take it: trying again would not help.
        case refused(String)
        /// No answer, or an answer that says "later", on every attempt.
        case unreachable(String)
    }

    func deliver(_ event: NotificationEvent) async -> Delivery {
        let request = HTTPRequest(method: "POST", url: webhook.url,
                                  headers: [("Content-Type", "application/json"), ("User-Agent", "retention-sync")],
                                  body: WebhookPayload.body(for: event, format: webhook.format),
                                  connectTimeout: 5, timeout: 15)
        var last = ""
        for attempt in 1...max(1, attempts) {
            if attempt > 1 { await pause(attempt) }
            do {
                let response = try await transport.send(request)
                if (200..<300).contains(response.status) { return .delivered }
                let body = String(decoding: response.body.prefix(200), as: UTF8.self)
                    .trimmingCharacters(in: .whitespacesAndNewlines)
                last = "HTTP \(response.status)" + (body.isEmpty ? "" : ": \(body)")
                guard response.status == 429 || response.status >= 500 else { return .refused(webhook.redact(last)) }
            } catch {
                last = webhook.redact(error.description)
                guard error.isTransient else { return .refused(last) }
            }
        }
        return .unreachable(webhook.redact(last))
    }
}

/// What one `send` did, by event key.
public struct NotificationOutcome: Sendable, Hashable {
    public var sent: [String] = []
    /// Told by an earlier run (in the ledger).
    public var alreadySent: [String] = []
    /// Not delivered; the next run tries again.
    public var failed: [String] = []
    /// For the run's output, each starting with `notifications:`; never containing the URL.
    public var warnings: [String] = []

    public init() {}
}

extension NotificationEvent.Kind {
    /// The order events are sent in: what needs a person first.
    var order: Int { Self.allCases.firstIndex(of: self) ?? 0 }
}
