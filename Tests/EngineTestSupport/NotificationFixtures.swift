import Basics
import Foundation
import HTTPClient
import Notifications
import RetentionMessagingModels
import StateStore
import TestSupport

/// The secret part of a Slack-style webhook URL; it must never show up in anything a run prints.
let secretPath = "/services/T0ACME/B0RETAIN/s3cr3tT0k3nNeverPrinted"

let now = StateTime.parse("2026-11-20T09:00:00.000Z")!

/// One event of every kind, as a run of apply/status/results would find them.
func everyKindOfEvent() -> [NotificationEvent] {
    let bundle = "com.example.app"
    return [
        .contentRejected(bundleId: bundle, environment: .production, contentKind: "message",
                         identifier: "5f0c6b7e-0000-5000-8000-000000000001", name: "winback", locale: "de-DE"),
        .contentPending(bundleId: bundle, environment: .production, contentKind: "message",
                        identifier: "5f0c6b7e-0000-5000-8000-000000000002", name: "winback", locale: "fr-FR",
                        since: now - 9 * UTCTime.day, days: 9, thresholdDays: 7),
        .driftCorrected(bundleId: bundle, environment: .production, what: "default com.example.monthly/en-US",
                        found: "5f0c6b7e-0000-5000-8000-00000000000a", correctedTo: "5f0c6b7e-0000-5000-8000-00000000000b", at: now),
        .applyFailed(bundleId: bundle, environment: .production, run: "https://github.com/acme/app/actions/runs/42",
                     error: "HTTP 500 on PUT /message", completed: 3, remaining: 2),
        .applyInterrupted(bundleId: bundle, environment: .sandbox, run: "2026-11-20T08:00:00.000Z",
                          reason: "SIGTERM", completed: 1, remaining: 4),
        .performanceTestResult(bundleId: bundle, environment: .sandbox, requestId: "perf-1", result: "PASS",
                               successRate: 100, target: "https://realtime.example.com/retention"),
        .experimentDistinguishable(bundleId: bundle, environment: .production, flow: "cancel-flow", rule: "offer-split",
                                   arm: "offer", control: "none", metric: "kept_24h", difference: 0.042,
                                   low: 0.011, high: 0.073, method: "always-valid sequential interval"),
        .splitGroupHeld(bundleId: bundle, environment: .production, group: "save-test", readyArms: ["retention/arm-standard"],
                        heldBy: ["retention/arm-winback"], versions: ["0123456789abcdef"]),
        .experimentSampleRatioMismatch(bundleId: bundle, environment: .production, flow: "cancel-flow", group: "offer-split",
                                       exposed: "offer 9600 / control 10400", configured: "offer 50.0% / control 50.0%", pValue: 1.5e-8),
        .guardrailCrossed(bundleId: bundle, environment: .production, flow: "cancel-flow", group: "offer-split", arm: "offer",
                          sentence: "offer renewed is distinguishably more than 2 points below control, the interval's upper end at −3.1 points",
                          metric: "renewed", limit: 2),
    ]
}

func notifier(_ url: URL, format: Webhook.Format = .slack, ledger: FileNotificationLedger) -> Notifier {
    var notifier = Notifier(webhook: Webhook(url: url, format: format), ledger: ledger, transport: CurlHTTPClient())
    notifier.pause = { _ in }
    return notifier
}

func temporaryFolder() throws -> String { try temporaryFolder("retention-sync-notify").path }
