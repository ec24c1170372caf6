import Basics
import Foundation
public import Experiments
public import Manifests
import Views
import YAML

/// Ending a split group the GitOps way: when the evidence names one winner, the edit of the Flow file
/// that gives it the group's customers (its `split` removed, every other arm's rule removed — they stay
/// in git's history, and reverting the commit restores them), and the evidence as a pull request's
/// body. Nothing here writes a file, applies or publishes: the command writes the edit for a person to
/// review and merge.
public enum Promotion {
    /// What decides: renewed (the default), kept at 24 h, or paid per customer (every currency agreeing).
    public enum Metric: String, Sendable, CaseIterable {
        case renewed
        case kept24h = "kept24h"
        case paid
    }

    public struct Decision: Sendable, Equatable {
        public var flow: String
        public var group: String
        public var winner: String
        public var losers: [String]
        /// The pull request body: what was compared, what it showed, what the change does.
        public var evidence: String
        /// Set when a guardrail stops arms (`losers`) while others run on: the control keeps its split
        /// with this share. Nil when the winner takes the whole group (its split removed).
        public var controlPercent: Double? = nil
        /// The losers are stopped because a guardrail was crossed: a person should look (exit 3).
        public var guardrail = false
    }

    /// Why no promotion is proposed.
    public struct Refusal: Error, CustomStringConvertible {
        public var description: String
    }

    /// The winner the report supports for `group`, or why none: the group's current period must have a
    /// control, pass its sample-ratio check, come from data without clock or key problems, and name
    /// exactly one arm distinguishably better than the control with every other arm distinguishably
    /// worse (or every arm distinguishably worse: the control wins). `rules` are the group's rules as
    /// the manifests have them now.
    public static func decide(_ report: ResultsReport, flow: String, group: String, rules: [ResolvedRule],
                              metric: Metric) throws(Refusal) -> Decision {
        let total = rules.reduce(0) { $0 + ($1.match.split?.percent ?? 0) }
        guard abs(total - 100) < 0.001 else {
            throw Refusal(description: "split group \(group) shares \(ResultsReport.percentText(total)) of its customers, not 100%: "
                          + "where the rest go is another rule's business, so give the winner its share by hand")
        }
        let periods = report.comparisons.filter { $0.flow == flow && $0.splitGroup == group }
        guard let comparison = periods.max(by: { ($0.periodSince ?? "") < ($1.periodSince ?? "") }) else {
            throw Refusal(description: "no customer of \(report.environment) was exposed to split group \(group) in the window read")
        }
        guard let control = comparison.control else {
            throw Refusal(description: comparison.note ?? "split group \(group) has no control to compare with")
        }
        if let warning = comparison.verdictWarning { throw Refusal(description: warning) }
        let checks = report.checks
        if checks.outcomesAfterClock > 0 || !checks.outcomesBeforeFirstDecision.isEmpty || !checks.outcomeKeysWithoutDecisions.isEmpty {
            throw Refusal(description: "the events have clock or pseudonym-key problems (see the warnings of retention-sync results): "
                          + "no verdict from them is evidence")
        }
        let names = Set(rules.map(\.name))
        let compared = Set(comparison.arms.map(\.rule) + [control])
        guard names == compared else {
            throw Refusal(description: "the manifests' arms of \(group) (\(names.sorted().joined(separator: ", "))) are not the ones the current "
                          + "period compared (\(compared.sorted().joined(separator: ", "))): apply the manifests and let results catch up first")
        }
        if let stop = stop(report, comparison: comparison, control: control, rules: rules) { return stop }
        let verdicts = comparison.arms.map { (arm: $0.rule, verdict: verdict($0, metric), sentence: sentence($0, metric, report)) }
        let better = verdicts.filter { $0.verdict == .better }
        let undecided = verdicts.filter { $0.verdict != .better && $0.verdict != .worse }
        let winner: String
        if better.count == 1, undecided.isEmpty {
            winner = better[0].arm
        } else if better.isEmpty, undecided.isEmpty {
            winner = control
        } else if better.count > 1 {
            throw Refusal(description: "\(better.map(\.arm).joined(separator: " and ")) both beat \(control) on \(metric.rawValue); which of them is "
                          + "better is not established by comparing each with the control")
        } else {
            let open = undecided.map { "\($0.arm): \($0.sentence)" }.joined(separator: "; ")
            throw Refusal(description: "the evidence does not name a winner on \(metric.rawValue) yet — \(open)")
        }
        let losers = rules.map(\.name).filter { $0 != winner }.sorted()
        return Decision(flow: flow, group: group, winner: winner, losers: losers,
                        evidence: evidence(report, comparison: comparison, control: control, winner: winner, losers: losers, metric: metric))
    }

    /// The Flow file's text with the promotion made: the losers' rules removed, the winner's split
    /// removed (or, when `winnerPercent` is given, its percent set to it), every other line as written
    /// (see `PromotionEdit`).
    public static func edit(_ text: String, file: String, winner: String, losers: [String], winnerPercent: Double? = nil,
                            group: String? = nil) throws(Refusal) -> String {
        do {
            // A group that ends takes its guardrails with it.
            return try PromotionEdit.apply(to: text, file: file, winner: winner, losers: losers, winnerPercent: winnerPercent,
                                           endedGroup: winnerPercent == nil ? group : nil)
        } catch {
            throw Refusal(description: error.description)
        }
    }

    /// The arms a crossed guardrail stops, whatever the verdicts on the metric decided: each goes, and
    /// its customers go back to the control (which takes the whole group when no other arm is left).
    static func stop(_ report: ResultsReport, comparison: ResultsReport.SplitComparison, control: String,
                     rules: [ResolvedRule]) -> Decision? {
        let crossed = (comparison.guardrails ?? []).filter(\.crossed)
        let stopped = Set(crossed.map(\.rule)).sorted()
        guard !stopped.isEmpty else { return nil }
        let left = rules.filter { !stopped.contains($0.name) }
        let percent = left.first { $0.name == control }.map { controlRule in
            (controlRule.match.split?.percent ?? 0) + rules.filter { stopped.contains($0.name) }.reduce(0) { $0 + ($1.match.split?.percent ?? 0) }
        }
        let alone = left.count == 1
        var lines = ["## Stop \(stopped.map(code).joined(separator: ", ")) in \(code(comparison.flow)) / \(code(comparison.splitGroup)): guardrail crossed", ""]
        lines.append("Evidence: `retention-sync results --env \(report.environment)` as of \(report.now), always-valid 95% intervals (the group's "
                     + "comparisons share 5%), so checking every hour does not inflate false alarms.")
        lines.append("")
        lines += crossed.map { "- " + ResultsReport.sentence($0, control: control) }
        lines.append("")
        lines.append("The change: \(stopped.map(code).joined(separator: ", ")) \(stopped.count == 1 ? "is" : "are") removed and \(code(control)) "
                     + (alone ? "answers every customer the group had (its `split` is removed)"
                        : "takes \(stopped.count == 1 ? "its" : "their") share (now \(ResultsReport.percentText(percent ?? 0))%)")
                     + "; reverting this commit restores the arm. Nothing is applied until this is merged and the reconcile job runs.")
        return Decision(flow: comparison.flow, group: comparison.splitGroup, winner: control, losers: stopped,
                        evidence: lines.joined(separator: "\n") + "\n", controlPercent: alone ? nil : percent, guardrail: true)
    }

    static func code(_ text: String) -> String { "`" + text.replacingOccurrences(of: "`", with: "'") + "`" }

    static func verdict(_ arm: ResultsReport.ArmComparison, _ metric: Metric) -> Verdict {
        switch metric {
        case .renewed: return arm.renewed.verdict
        case .kept24h: return arm.kept24h.verdict
        case .paid:
            let verdicts = Set(arm.paidPerCustomer.values.map(\.verdict))
            return verdicts.count == 1 ? verdicts.first! : .notDistinguishableYet
        }
    }

    static func sentence(_ arm: ResultsReport.ArmComparison, _ metric: Metric, _ report: ResultsReport) -> String {
        switch metric {
        case .renewed: return "renewed \(ResultsReport.sentence(arm.renewed))"
        case .kept24h: return "kept at 24 h \(ResultsReport.sentence(arm.kept24h))"
        case .paid: return report.paidSentence(arm.paidPerCustomer) ?? "paid per customer: no data yet"
        }
    }

    /// The pull request's body: the group and period, every arm's figures against the control, the
    /// sample-ratio check, and what the change does. Names from the manifests are written as code.
    static func evidence(_ report: ResultsReport, comparison: ResultsReport.SplitComparison, control: String, winner: String,
                         losers: [String], metric: Metric) -> String {
        var lines = ["## Promote \(code(winner)) in \(code(comparison.flow)) / \(code(comparison.splitGroup))", ""]
        let period = ResultsReport.periodLabel(comparison.splitLayout, since: comparison.periodSince).map { ", \($0)" } ?? ""
        lines.append("Evidence: `retention-sync results --env \(report.environment)` as of \(report.now)\(period); decided on **\(metric.rawValue)**; "
                     + "each arm against the control \(code(control)) with always-valid 95% intervals (the group's comparisons share 5%), "
                     + "so reading the results every day did not inflate the chance of a false winner.")
        lines.append("")
        for arm in comparison.arms {
            lines.append("- \(code(arm.rule)) vs \(code(control)): kept at 24 h \(ResultsReport.sentence(arm.kept24h)); renewed "
                         + "\(ResultsReport.sentence(arm.renewed))" + (report.paidSentence(arm.paidPerCustomer).map { "; \($0)" } ?? ""))
        }
        if let ratio = comparison.sampleRatio {
            lines.append("- sample ratio: \(ResultsReport.sampleRatioSentence(ratio))")
        }
        for row in report.rows where row.flow == comparison.flow && row.splitGroup == comparison.splitGroup && row.splitLayout == comparison.splitLayout {
            lines.append("- \(code(row.rule)): \(ResultsReport.count(row.exposed)) exposed; renewed \(ResultsReport.describe(row.renewed))")
        }
        lines.append("")
        lines.append("The change: \(code(winner)) answers every customer the group had (its `split` is removed); "
                     + (losers.isEmpty ? "" : "\(losers.map(code).joined(separator: ", ")) \(losers.count == 1 ? "is" : "are") removed — ")
                     + "reverting this commit restores the experiment. Nothing is applied until this is merged and the reconcile job runs.")
        let caveats = report.warnings.filter { $0.contains(comparison.splitGroup) }
        if !caveats.isEmpty {
            lines.append("")
            lines.append("Caveats:")
            lines += caveats.map { "- \($0)" }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
