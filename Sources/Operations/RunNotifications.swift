import Basics
public import CLIKit
import Foundation
public import HTTPCore
public import HTTPClient
public import Notifications
public import StateStore

/// The sending of what a run tells the team's webhook (`RETENTION_SYNC_WEBHOOK_URL`); the events
/// themselves are `RunEvents`'.
public enum RunNotifications {
    /// Sends `events` when a webhook is configured; warnings go to standard error and never fail the run.
    public static func send(_ events: [NotificationEvent], store: (any StateSideDocuments)?, context: CommandContext,
                     transport: @autoclosure () -> any HTTPTransport = CurlHTTPClient()) async {
        let webhook: Webhook
        do {
            guard let configured = try Webhook.fromEnvironment(context.environment) else { return }
            webhook = configured
        } catch {
            context.console.error("warning: notifications: \(error.message)")
            return
        }
        guard !events.isEmpty else { return }
        guard let ledger = ledger(for: store, context: context) else {
            context.console.error("warning: notifications: not sent: telling each event once needs a state store (the ledger lives beside "
                                  + "the state document); set environments.<env>.stateStore in the App manifest")
            return
        }
        let outcome = await Notifier(webhook: webhook, ledger: ledger, transport: transport()).send(events, now: SystemClock().time())
        for warning in outcome.warnings { context.console.error("warning: " + warning) }
        if !outcome.sent.isEmpty {
            context.console.error("Notified the \(webhook.format.rawValue) webhook of \(outcome.sent.count) event(s)"
                                  + (outcome.alreadySent.isEmpty ? "." : " (\(outcome.alreadySent.count) told before)."))
        }
    }

    static func ledger(for store: (any StateSideDocuments)?, context: CommandContext) -> (any NotificationLedger)? {
        store.map { StateStoreNotificationLedger(store: $0) }
    }
}
