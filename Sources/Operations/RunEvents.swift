public import Basics
public import Experiments
import Foundation
public import Notifications
public import Reconciler
public import RetentionMessagingModels
import Runtime
public import StateStore

/// What a run tells the team's webhook (`RETENTION_SYNC_WEBHOOK_URL`): the events of a plan,
/// apply, status, results or performance test, from the values the run already has. Nothing here
/// decides anything else, and nothing here sends (the commands do, through `Notifier`).
public enum RunEvents {
    /// Every arm whose difference from its group's control is distinguishable now (kept at 24 h and
    /// renewed), told once per arm, metric and direction by the ledger.
    public static func events(results report: ResultsReport, bundleId: String, environment: Environment) -> [NotificationEvent] {
        var events: [NotificationEvent] = []
        for comparison in report.comparisons {
            if let check = comparison.sampleRatio, check.mismatch, let p = check.pValue {
                let rules = check.configuredPercents.keys.sorted()
                events.append(.experimentSampleRatioMismatch(
                    bundleId: bundleId, environment: environment, flow: comparison.flow, group: comparison.splitGroup,
                    exposed: rules.map { "\($0) \(check.exposed[$0] ?? 0)" }.joined(separator: " / "),
                    configured: rules.map { "\($0) \(check.configuredPercents[$0] ?? 0)%" }.joined(separator: " / "), pValue: p))
            }
            guard let control = comparison.control else { continue }
            for check in comparison.guardrails ?? [] where check.crossed {
                events.append(.guardrailCrossed(bundleId: bundleId, environment: environment, flow: comparison.flow, group: comparison.splitGroup,
                                                arm: check.rule, sentence: ResultsReport.sentence(check, control: control),
                                                metric: check.metric + (check.currency.map { " " + $0 } ?? ""), limit: check.maxDrop))
            }
            for arm in comparison.arms {
                for (metric, difference) in [("kept at 24 h", arm.kept24h), ("renewed", arm.renewed)] {
                    guard difference.verdict == .better || difference.verdict == .worse,
                          let value = difference.difference, let interval = difference.interval else { continue }
                    events.append(.experimentDistinguishable(bundleId: bundleId, environment: environment, flow: comparison.flow,
                                                             rule: arm.rule, arm: arm.arm ?? arm.rule, control: control, metric: metric,
                                                             difference: value, low: interval.low, high: interval.high,
                                                             method: "always-valid 95% interval", period: comparison.splitLayout,
                                                             periodLabel: ResultsReport.periodLabel(comparison.splitLayout, since: comparison.periodSince)))
                }
            }
        }
        return events
    }

    /// What a status run tells: its report's events and the state's last performance-test result.
    public static func events(_ report: StatusReport, planned: PlanResult) -> [NotificationEvent] {
        events(report) + events(performanceTest: planned.remote.state?.document?.performanceTest, owner: planned.desired.owner)
            + events(splitGroups: planned)
    }

    /// Split groups whose ready arms wait for other arms' review: the group stays as published.
    public static func events(splitGroups planned: PlanResult) -> [NotificationEvent] {
        let groups = Dictionary(planned.desired.rules.compactMap { rule in rule.match.split.map { (rule.id, $0.salt) } },
                                uniquingKeysWith: { first, _ in first })
        var held: [String: (ready: [String], heldBy: [String], versions: [String])] = [:]
        for rule in planned.snapshot?.outcomes ?? [] where !rule.heldBy.isEmpty {
            guard let group = groups[rule.id] else { continue }
            held[group, default: ([], rule.heldBy, [])].ready.append(rule.id)
            held[group]?.versions.append(rule.version ?? "")
        }
        let owner = planned.desired.owner
        return held.keys.sorted().compactMap { group in
            held[group].map {
                .splitGroupHeld(bundleId: owner.bundleId, environment: owner.environment, group: group, readyArms: $0.ready,
                                heldBy: $0.heldBy, versions: $0.versions)
            }
        }
    }

    /// REJECTED content the manifests derive, and derived content PENDING longer than the report's threshold.
    public static func events(_ report: StatusReport) -> [NotificationEvent] {
        var events: [NotificationEvent] = []
        for kind in ContentKind.allCases {
            let entries = report.content[kind] ?? []
            for entry in entries where entry.derived {
                let name = entry.name ?? entry.identifier
                if entry.state == .rejected {
                    events.append(.contentRejected(bundleId: report.bundleId, environment: report.environment, contentKind: kind.rawValue,
                                                   identifier: entry.identifier, name: name, locale: entry.locale))
                } else if entry.state == .pending, entry.needsAttention, let since = entry.stateSince, let days = entry.stateAgeDays {
                    events.append(.contentPending(bundleId: report.bundleId, environment: report.environment, contentKind: kind.rawValue,
                                                  identifier: entry.identifier, name: name, locale: entry.locale, since: since,
                                                  days: days, thresholdDays: report.pendingWarnDays))
                }
            }
        }
        return events
    }

    /// The last performance-test result a state document records, once it is decided.
    public static func events(performanceTest record: PerformanceTestRecord?, owner: StateOwner) -> [NotificationEvent] {
        guard let record, let result = record.result.result, result != .pending else { return [] }
        return [.performanceTestResult(bundleId: owner.bundleId, environment: owner.environment, requestId: record.requestId,
                                       result: result.rawValue, successRate: record.result.successRate, target: record.result.target)]
    }

    /// What an apply tells: drift it set back, how it stopped if it did not finish, and what review says
    /// about the content the manifests derive (as `status` would).
    public static func events(apply report: ApplyReport, failure: String?, planned: PlanResult, now: UTCTime,
                       pendingWarnDays: Int, environment: [String: String]) -> [NotificationEvent] {
        let owner = planned.desired.owner
        let document = planned.remote.state?.document
        var events = events(Status.report(planned, now: now, pendingWarnDays: pendingWarnDays), planned: planned)
        let byId = Dictionary(planned.plan.actions.map { ($0.id.rawValue, $0) }, uniquingKeysWith: { a, _ in a })
        for result in report.results where result.outcome == .done {
            guard let action = byId[result.id] else { continue }
            if let drift = action.change.drift(against: document) {
                events.append(.driftCorrected(bundleId: owner.bundleId, environment: owner.environment,
                                              what: drift.what, found: drift.found, correctedTo: drift.correctedTo, at: now))
            }
        }
        let done = report.results.filter { $0.outcome == .done || $0.outcome == .alreadyDone }.count
        let attempted = report.results.count
        let total = planned.plan.actions.filter { $0.state == .ready }.count
        let run = StateWriter.current(environment: environment).url ?? StateTime.format(now)
        if let failure {
            events.append(.applyFailed(bundleId: owner.bundleId, environment: owner.environment, run: run, error: failure,
                                       completed: done, remaining: max(0, total - done)))
        } else if let stop = report.stopped {
            events.append(.applyInterrupted(bundleId: owner.bundleId, environment: owner.environment, run: run, reason: stop.rawValue,
                                            completed: done, remaining: report.remaining ?? max(0, total - attempted)))
        }
        return events
    }
}
