public import CLIKit
public import Experiments
import Foundation
public import Manifests
public import Reconciler

/// What `plan --format` takes.
public enum PlanFormat: String, CaseIterable, Sendable, ArgumentValue {
    case text, markdown, json, github
}

/// What `plan --results` found beside the state for the rules a plan changes. Evidence never fails a
/// plan: without events, or when they cannot be read, it says so and the plan stands.
public enum PlanEvidence: Sendable {
    /// The plan changes no published rule.
    case noRuleChanged
    /// The environment has no state store, so there are no events beside it.
    case noStateStore
    /// The events could not be read; the reason, worded for a person.
    case unreadable(String)
    /// No decision is recorded yet for these rules.
    case noDecisions(rules: [String])
    /// The current results of these rules.
    case results(ResultsReport, rules: [String])

    /// The JSON member's `status`.
    var status: String {
        switch self {
        case .noRuleChanged: "no_rule_changed"
        case .noStateStore: "no_state_store"
        case .unreadable: "unreadable"
        case .noDecisions: "no_decisions"
        case .results: "results"
        }
    }

    /// One sentence for the cases without results.
    var sentence: String? {
        switch self {
        case .noRuleChanged: "this plan changes no published rule, so there are no results to show."
        case .noStateStore: "no state store, so no events to read."
        case .unreadable(let reason): "the events beside the state could not be read (\(reason)); the plan above stands."
        case .noDecisions(let rules):
            "no decisions are recorded yet for \(rules.joined(separator: ", ")) (serve records them when RETENTION_SYNC_PSEUDONYM_SECRET is set)."
        case .results: nil
        }
    }
}

/// Everything one `plan` run shows, gathered before any of it is written: the view is chosen once,
/// from `--format`, and words every part, so that no part prints in another format.
public struct PlanPresentation: Sendable {
    public var plan: Plan
    public var manifests: ManifestSet?
    /// How long App Review takes, shown beside a plan whose content waits for it.
    public var reviewTimes: ReviewTimes?
    /// With `--results`.
    public var evidence: PlanEvidence?

    public init(plan: Plan, manifests: ManifestSet? = nil, reviewTimes: ReviewTimes? = nil, evidence: PlanEvidence? = nil) {
        self.plan = plan
        self.manifests = manifests
        self.reviewTimes = reviewTimes
        self.evidence = evidence
    }
}

/// One format of `plan`'s standard output.
public protocol PlanViewing: Sendable {
    /// Everything the run shows, whole.
    func render(_ presentation: PlanPresentation, console: Console) throws -> String
}

extension PlanFormat {
    /// The view of this format. `maxCharacters` bounds each Markdown comment; `base` is the directory
    /// GitHub annotations name files relative to.
    public func view(maxCharacters: Int, base: String) -> any PlanViewing {
        switch self {
        case .text: PlanTextView()
        case .markdown: PlanMarkdownView(maxCharacters: maxCharacters)
        case .json: PlanJSONView()
        case .github: PlanGitHubView(base: base)
        }
    }
}

struct PlanTextView: PlanViewing {
    func render(_ presentation: PlanPresentation, console: Console) throws -> String {
        var text = PlanView.text(presentation.plan, for: console)
        let lines = ReviewTimeView.textLines(presentation.reviewTimes)
        if !lines.isEmpty { text += "\n" + lines.joined(separator: "\n") + "\n" }
        if let evidence = presentation.evidence { text += Self.evidence(evidence) }
        return text
    }

    static func evidence(_ evidence: PlanEvidence) -> String {
        if case .results(let report, _) = evidence {
            return "\nEvidence: current results of the rules this change touches\n" + report.text()
        }
        return "\nEvidence: " + (evidence.sentence ?? "") + "\n"
    }
}

struct PlanMarkdownView: PlanViewing {
    var maxCharacters: Int

    /// Review times and evidence go into the plan's comments, so each comment stays within `maxCharacters`.
    func render(_ presentation: PlanPresentation, console: Console) throws -> String {
        var after: [PlanView.MarkdownBlock] = []
        if let times = ReviewTimeView.markdown(presentation.reviewTimes) {
            after.append(PlanView.MarkdownBlock(open: [""], lines: times.components(separatedBy: "\n")))
        }
        if let evidence = presentation.evidence {
            if case .results(let report, _) = evidence {
                var lines = report.markdown().components(separatedBy: "\n")
                if lines.last == "" { lines.removeLast() }
                after.append(PlanView.MarkdownBlock(open: ["", "#### Evidence: current results of the rules this change touches", ""], lines: lines))
            } else {
                after.append(PlanView.MarkdownBlock(open: ["", "#### Evidence", ""], lines: [evidence.sentence ?? ""]))
            }
        }
        return PlanView.markdown(presentation.plan, maxCharacters: maxCharacters, after: after).joined(separator: PlanView.commentSeparator)
    }
}

/// The plan's JSON document; with `--results`, the evidence is its `evidence` member, so the output
/// stays one JSON document.
struct PlanJSONView: PlanViewing {
    func render(_ presentation: PlanPresentation, console: Console) throws -> String {
        try PlanJSON.encode(presentation.plan, evidence: presentation.evidence)
    }
}

struct PlanGitHubView: PlanViewing {
    var base: String

    func render(_ presentation: PlanPresentation, console: Console) throws -> String {
        let plan = presentation.plan
        var lines = [GitHubActions.group("Plan: " + PlanView.summaryLine(plan))]
        lines.append(PlanView.text(plan, for: console.withoutColor()) + GitHubActions.endGroup)
        lines += GitHubActions.planAnnotations(plan, manifests: presentation.manifests, base: base)
        var text = lines.joined(separator: "\n") + "\n"
        if let evidence = presentation.evidence { text += PlanTextView.evidence(evidence) }
        return text
    }
}
