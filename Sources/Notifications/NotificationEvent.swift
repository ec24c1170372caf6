public import Basics
import Foundation
public import RetentionMessagingModels
import StateStore

/// Something a person should hear about, as a value: what happened, to which App and environment,
/// and a key that stays the same for as long as it is the same thing, so it is sent once.
///
/// Every kind of event is made by one factory below, which is the one place its key and wording are
/// defined; the README's "Notifications" section lists them.
public struct NotificationEvent: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable, CaseIterable, Codable {
        case contentRejected = "content_rejected"
        case contentPending = "content_pending"
        case driftCorrected = "drift_corrected"
        case applyFailed = "apply_failed"
        case applyInterrupted = "apply_interrupted"
        case performanceTestResult = "performance_test_result"
        case experimentDistinguishable = "experiment_distinguishable"
        case experimentSampleRatioMismatch = "experiment_sample_ratio_mismatch"
        case splitGroupHeld = "split_group_held"
        case guardrailCrossed = "guardrail_crossed"
    }

    public var kind: Kind
    public var bundleId: String
    public var environment: Environment
    /// Stable across runs for the same occurrence: the ledger keeps it so that no run sends it again.
    public var key: String
    /// One line a person reads in a chat channel.
    public var summary: String
    /// The facts behind the summary, for the JSON format (sorted by key when sent).
    public var details: [String: String]

    public init(kind: Kind, bundleId: String, environment: Environment, key: String, summary: String,
                details: [String: String] = [:]) {
        self.kind = kind
        self.bundleId = bundleId
        self.environment = environment
        self.key = key
        self.summary = summary
        self.details = details
    }

    private static func key(_ kind: Kind, _ bundleId: String, _ environment: Environment, _ parts: String...) -> String {
        ([kind.rawValue, bundleId, environment.rawValue] + parts).joined(separator: ":")
    }

    private static func where_(_ bundleId: String, _ environment: Environment) -> String {
        "\(bundleId) \(environment.rawValue)"
    }

    /// A message or image Apple's review REJECTED; one per identifier, ever (new content is a new identifier).
    public static func contentRejected(bundleId: String, environment: Environment, contentKind: String,
                                       identifier: String, name: String, locale: String?) -> NotificationEvent {
        let label = locale.map { "\(name) (\($0))" } ?? name
        return NotificationEvent(
            kind: .contentRejected, bundleId: bundleId, environment: environment,
            key: key(.contentRejected, bundleId, environment, identifier),
            summary: "\(where_(bundleId, environment)): \(contentKind) \(label) was REJECTED by App Review; change its content and apply again",
            details: ["content_kind": contentKind, "identifier": identifier, "name": name]
                .merging(locale.map { ["locale": $0] } ?? [:]) { a, _ in a })
    }

    /// Content PENDING for longer than the team's threshold; once per identifier and threshold.
    public static func contentPending(bundleId: String, environment: Environment, contentKind: String, identifier: String,
                                      name: String, locale: String?, since: UTCTime, days: Int, thresholdDays: Int) -> NotificationEvent {
        let label = locale.map { "\(name) (\($0))" } ?? name
        var details = ["content_kind": contentKind, "identifier": identifier, "name": name,
                       "pending_since": StateTime.format(since), "pending_days": String(days),
                       "threshold_days": String(thresholdDays)]
        if let locale { details["locale"] = locale }
        return NotificationEvent(
            kind: .contentPending, bundleId: bundleId, environment: environment,
            key: key(.contentPending, bundleId, environment, identifier, "over-\(thresholdDays)d"),
            summary: "\(where_(bundleId, environment)): \(contentKind) \(label) has waited \(days) days for App Review (more than \(thresholdDays))",
            details: details)
    }

    /// A remote value that differed from the last applied one and was set back. `what` names the
    /// thing (`default com.example.monthly/en-US`), `found` what was there; the same drift found
    /// again later is a new occurrence only when what was found differs.
    public static func driftCorrected(bundleId: String, environment: Environment, what: String, found: String,
                                      correctedTo: String, at time: UTCTime) -> NotificationEvent {
        NotificationEvent(
            kind: .driftCorrected, bundleId: bundleId, environment: environment,
            key: key(.driftCorrected, bundleId, environment, what, found, correctedTo),
            summary: "\(where_(bundleId, environment)): \(what) had drifted to \(found); set back to \(correctedTo)",
            details: ["what": what, "found": found, "corrected_to": correctedTo, "at": StateTime.format(time)])
    }

    /// An apply that stopped on an error. `run` identifies the run (a CI run URL or a start time),
    /// so each failed run is told once.
    public static func applyFailed(bundleId: String, environment: Environment, run: String, error: String,
                                   completed: Int, remaining: Int) -> NotificationEvent {
        NotificationEvent(
            kind: .applyFailed, bundleId: bundleId, environment: environment,
            key: key(.applyFailed, bundleId, environment, run),
            summary: "\(where_(bundleId, environment)): apply failed after \(completed) of \(completed + remaining) actions: \(error); the next apply finishes it",
            details: ["run": run, "error": error, "completed": String(completed), "remaining": String(remaining)])
    }

    /// An apply stopped by a signal or its time limit.
    public static func applyInterrupted(bundleId: String, environment: Environment, run: String, reason: String,
                                        completed: Int, remaining: Int) -> NotificationEvent {
        NotificationEvent(
            kind: .applyInterrupted, bundleId: bundleId, environment: environment,
            key: key(.applyInterrupted, bundleId, environment, run),
            summary: "\(where_(bundleId, environment)): apply was interrupted (\(reason)) after \(completed) of \(completed + remaining) actions; the next apply finishes it",
            details: ["run": run, "reason": reason, "completed": String(completed), "remaining": String(remaining)])
    }

    /// The outcome of one sandbox performance test, told once per test request.
    public static func performanceTestResult(bundleId: String, environment: Environment, requestId: String,
                                             result: String, successRate: Double?, target: String?) -> NotificationEvent {
        var details = ["request_id": requestId, "result": result]
        if let successRate { details["success_rate"] = String(format: "%.4f", successRate) }
        if let target { details["target"] = target }
        // Apple's successRate is already a percentage (an integer, 0–100).
        let rate = successRate.map { ", " + Self.percentText($0) + "% answered in time" } ?? ""
        return NotificationEvent(
            kind: .performanceTestResult, bundleId: bundleId, environment: environment,
            key: key(.performanceTestResult, bundleId, environment, requestId),
            summary: "\(where_(bundleId, environment)): performance test \(result)\(rate)",
            details: details)
    }

    /// A rate difference (a fraction) in percentage points with its sign: 0.0795 → "+7.9".
    static func points(_ fraction: Double) -> String {
        let tenths = (fraction * 1000).rounded()
        return (tenths >= 0 ? "+" : "-") + String(format: "%.1f", abs(tenths) / 10)
    }

    /// 100 → "100", 99.5 → "99.5".
    static func percentText(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(format: "%.1f", value)
    }

    /// An experiment arm whose difference from the control became distinguishable: the interval of
    /// the difference (`low`…`high`, in the metric's unit) no longer contains zero. Told once per
    /// flow, rule, arm, metric, direction and period (`period`: the split layout the comparison is of, and
    /// `periodLabel` how results name it), so a result that flips, or holds again in a new period, is told again.
    public static func experimentDistinguishable(bundleId: String, environment: Environment, flow: String, rule: String,
                                                 arm: String, control: String, metric: String, difference: Double,
                                                 low: Double, high: Double, method: String,
                                                 period: String? = nil, periodLabel: String? = nil) -> NotificationEvent {
        let direction = difference >= 0 ? "better" : "worse"
        var details = ["flow": flow, "rule": rule, "arm": arm, "control": control, "metric": metric,
                       "difference": String(format: "%.6f", difference), "interval_low": String(format: "%.6f", low),
                       "interval_high": String(format: "%.6f", high), "method": method, "direction": direction]
        if let periodLabel { details["period"] = periodLabel }
        return NotificationEvent(
            kind: .experimentDistinguishable, bundleId: bundleId, environment: environment,
            key: key(.experimentDistinguishable, bundleId, environment, flow, rule, arm, metric, direction) + (period.map { ":" + $0 } ?? ""),
            // In points, as `results` words differences: +7.9 points (+1.8 to +14.1).
            summary: "\(where_(bundleId, environment)): flow \(flow), rule \(rule)\(periodLabel.map { " (\($0))" } ?? ""): "
                + "arm \(arm) is distinguishably \(direction) than \(control) on \(metric) "
                + "(\(Self.points(difference)) points, interval \(Self.points(low)) to \(Self.points(high)), \(method))",
            details: details)
    }

    /// An arm distinguishably worse than its group's control by more than a guardrail allows (the
    /// always-valid interval's upper end below minus the limit). Told once per flow, group, arm, metric
    /// and limit; promote proposes stopping the arm.
    public static func guardrailCrossed(bundleId: String, environment: Environment, flow: String, group: String, arm: String,
                                        sentence: String, metric: String, limit: Double) -> NotificationEvent {
        NotificationEvent(
            kind: .guardrailCrossed, bundleId: bundleId, environment: environment,
            key: key(.guardrailCrossed, bundleId, environment, flow, group, arm, metric, percentText(limit)),
            summary: "\(where_(bundleId, environment)): flow \(flow), split group \(group): guardrail crossed — \(sentence); "
                + "retention-sync promote \(group) proposes stopping \(arm) (the reconcile job opens that pull request)",
            details: ["flow": flow, "group": group, "arm": arm, "metric": metric, "max_drop": percentText(limit)])
    }

    /// A split group whose exposures per arm do not match its configured percents (a chi-square test at
    /// p < 0.001): the group's verdicts cannot be trusted. Told once per flow, group and configured
    /// percents, so a reconfigured group that mismatches again is told again.
    public static func experimentSampleRatioMismatch(bundleId: String, environment: Environment, flow: String, group: String,
                                                     exposed: String, configured: String, pValue: Double) -> NotificationEvent {
        NotificationEvent(
            kind: .experimentSampleRatioMismatch, bundleId: bundleId, environment: environment,
            key: key(.experimentSampleRatioMismatch, bundleId, environment, flow, group, configured),
            summary: "\(where_(bundleId, environment)): flow \(flow), split group \(group): sample-ratio mismatch — exposed \(exposed) against "
                + "\(configured) configured " + String(format: "(p = %.2g)", pValue)
                + "; do not trust the group's verdicts until the cause is found (see retention-sync results)",
            details: ["flow": flow, "group": group, "exposed": exposed, "configured": configured, "p_value": String(format: "%.6g", pValue)])
    }

    /// A split group that stays as published because some of its arms wait for App Review, so its
    /// ready arms do not go live piecemeal; told once per group, waiting arms and versions.
    public static func splitGroupHeld(bundleId: String, environment: Environment, group: String, readyArms: [String],
                                      heldBy: [String], versions: [String]) -> NotificationEvent {
        NotificationEvent(
            kind: .splitGroupHeld, bundleId: bundleId, environment: environment,
            key: key(.splitGroupHeld, bundleId, environment, group, heldBy.joined(separator: ","), versions.joined(separator: ",")),
            summary: "\(where_(bundleId, environment)): split group \(group) stays as published: \(readyArms.joined(separator: ", ")) "
                + "\(readyArms.count == 1 ? "is" : "are") ready but \(readyArms.count == 1 ? "waits" : "wait") for \(heldBy.joined(separator: ", ")) "
                + "to pass App Review, so no customer changes arm until every arm is approved",
            details: ["group": group, "ready_arms": readyArms.joined(separator: ","), "held_by": heldBy.joined(separator: ",")])
    }
}
