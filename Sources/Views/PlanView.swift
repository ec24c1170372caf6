import Basics
public import CLIKit
import Foundation
import Manifests
public import Reconciler
import RetentionMessaging
import RetentionMessagingModels
import Runtime
import StateStore

/// The plan as a person reads it: on a terminal, and as Markdown for a pull-request comment.
/// Each rendering is a pure function of the plan, so equal plans print equal bytes.
public enum PlanView {
    /// `Plan (production): 3 to upload, 1 to set, 2 blocked, 0 to delete`, plus errors when any; in
    /// sandbox `… 2 to set and 6 more after these uploads, 0 blocked …` for what the same apply does
    /// once sandbox approved its uploads.
    public static func summaryLine(_ plan: Plan) -> String {
        let s = plan.summary
        var line = "Plan (\(plan.environment.rawValue)): \(s.toUpload) to upload, \(s.toSet) to set"
            + (s.afterUploads > 0 ? " and \(s.afterUploads) more after these uploads" : "")
            + ", \(s.blocked) blocked, \(s.toDelete) to delete"
        if s.errors > 0 { line += ", \(s.errors) error\(s.errors == 1 ? "" : "s")" }
        if s.attention > 0 { line += ", \(s.attention) needing attention" }
        return line
    }

    /// The `error:` line (without the prefix) of a plan with errors: how many, the first, and
    /// that they are this configuration's to fix.
    public static func errorLine(_ plan: Plan) -> String {
        let problems = plan.problems.filter { $0.severity == .error }.map(\.message)
        let actions = plan.actions.filter { $0.state == .error }.map { "\($0.title): " + ($0.error.map(PlanWording.error) ?? PlanWording.reason($0.reason)) }
        let all = problems + actions
        let more = all.count > 1 ? " (and \(all.count - 1) more, listed above)" : ""
        return "the plan has \(all.count) error\(all.count == 1 ? "" : "s") these manifests must fix: " + TerminalText.safe(all.first ?? "") + more
    }

    /// The `attention:` line (without the prefix): remote conditions a person must act on, not
    /// caused by the configuration planned.
    public static func attentionLine(_ plan: Plan) -> String {
        let all = plan.attention.map(\.description)
        let more = all.count > 1 ? " (and \(all.count - 1) more, under “Needs attention” above)" : ""
        return "\(all.count) remote condition\(all.count == 1 ? "" : "s") need\(all.count == 1 ? "s" : "") a person (not caused by this change): "
            + TerminalText.safe(all.first ?? "") + more
    }

    /// `Review progressed since the plan was saved: publishing sha256:dc4e… instead of waiting (the saved plan showed sha256:85c8… blocked).`
    public static func progressLine(_ progress: SavedPlan.Progress) -> String {
        let safe = TerminalText.safe
        if let digest = progress.digest {
            let before = progress.savedDigest.map { $0 == digest ? "the saved plan showed it blocked" : "the saved plan showed \(PlanAction.shortDigest($0)) blocked" }
                ?? "the saved plan showed it blocked"
            return "Review progressed since the plan was saved: publishing \(PlanAction.shortDigest(digest)) instead of waiting (\(before))."
        }
        return "Review progressed since the plan was saved: \(safe(progress.title)) is ready now and is applied instead of waiting."
    }

    /// `Pruning: read every default (18 pairs; 8 calls more than without --prune), …`: what a prune's "in use" rests on, and its cost.
    static func pruneReadText(_ read: PruneRead) -> String {
        let extra = read.extraCalls == 0 ? "no call more than without --prune"
            : "\(read.extraCalls) call\(read.extraCalls == 1 ? "" : "s") more than without --prune"
        return "Pruning: read every default (\(read.pairs) pair\(read.pairs == 1 ? "" : "s"); \(extra)), "
            + "so nothing a default shows is deleted on an older reading."
    }

    /// What the manifests stopped declaring that no action changes at Apple, in a warning box.
    static func markdownSettingWarnings(_ plan: Plan) -> [String] {
        guard !plan.warnings.isEmpty else { return [] }
        return ["", "> [!WARNING]"] + plan.warnings.map { "> " + MarkdownText.escape(PlanWording.warning($0)) }
    }

    /// `Not deleted: message … — the saved plan deleted it, but it is in use by default …; kept: in use`.
    public static func keptLine(_ item: InventoryItem) -> String {
        var text = "Not deleted: \(item.kind.rawValue) \(item.identifier)" + (item.name.map { " (\($0))" } ?? "")
            + " — the saved plan deleted it, but"
        if !item.usedBy.isEmpty { text += " it is in use by " + item.usedBy.map(\.description).joined(separator: ", ") + " now;" }
        return TerminalText.safe(text + " " + PlanWording.prune(item.prune))
    }

    /// One sentence on sync and health, the two axes.
    static func statusLine(_ plan: Plan) -> String {
        let sync: String
        if plan.converged {
            sync = "in sync: the environment matches the manifests"
        } else if !plan.hasReadyActions && !plan.hasErrors && plan.needsAttention {
            sync = "nothing this run can do: waiting for a person (see “Needs attention”)"
        } else if !plan.hasReadyActions && !plan.hasErrors {
            sync = "nothing to do now: only waiting for App Review"
        } else {
            sync = "out of sync"
        }
        return "Sync: \(sync). Health: \(plan.health.rawValue)."
    }

    static func title(_ action: PlanAction, in plan: Plan) -> String {
        guard action.kind == .publishSnapshot, plan.snapshotDigestChangesInApply else { return action.title }
        return action.title + " (for now: sandbox approves this apply's uploads at once, and apply publishes the snapshot compiled after that)"
    }

    /// Coloured only where the console allows it.
    /// `PENDING for 9 days (since 2026-01-22)`.
    static func ageText(_ age: ReviewAge) -> String {
        guard let days = age.days, let since = age.since else { return "\(age.state.rawValue) (newly seen; the next apply records since when)" }
        return "\(age.state.rawValue) for \(days) day\(days == 1 ? "" : "s") (since \(since.formatted(.date)))"
    }

    /// `header: "Before you go" → "Wait — before you go"`.
    static func fieldChange(_ change: FieldChange) -> String {
        func quoted(_ text: String?) -> String { text.map { "\"\($0)\"" } ?? "(none)" }
        return "\(change.field): \(quoted(change.before)) → \(quoted(change.after))"
    }

    public static func text(_ plan: Plan, for console: Console) -> String { text(plan, painter: Painter(console)) }

    static func text(_ plan: Plan, painter: Painter) -> String {
        let safe = TerminalText.safe
        var out: [String] = [painter.bold(summaryLine(plan))]
        out.append("Read \(plan.environment.rawValue) with \(plan.apiCalls) API call\(plan.apiCalls == 1 ? "" : "s").")
        if let read = plan.pruneRead { out.append(pruneReadText(read)) }
        if let missing = plan.missingState {
            out.append("")
            out.append(painter.color(.red, "! Missing state: " + safe(missing.explanation)))
        }
        if !plan.warnings.isEmpty { out.append("") }
        for warning in plan.warnings { out.append(painter.color(.yellow, "warning: " + safe(PlanWording.warning(warning)))) }
        if plan.converged && plan.problems.isEmpty {
            out.append("")
            out.append("No changes. \(plan.environment.rawValue) matches the manifests.")
        }
        var waits = WaitingLists()
        for group in groups(plan) where !group.actions.isEmpty {
            out.append("")
            out.append(painter.bold("\(group.title) (\(group.actions.count))"))
            for action in group.actions {
                let mark = marker(action, in: plan)
                let title = safe(title(action, in: plan))
                out.append("  \(painter.color(mark.color, mark.symbol + " " + title))")
                out.append("      \(safe(PlanWording.reason(action.reason)))")
                if let error = action.error { out.append("      " + painter.color(.red, "error: \(safe(PlanWording.error(error)))")) }
                if let changes = action.textChanges {
                    out.append("      replaces \(safe(changes.replaces)):")
                    for field in changes.fields { out.append("        " + safe(Self.fieldChange(field))) }
                }
                if let compiled = action.change.as(SnapshotChange.self)?.compiled {
                    // Each rule says what it waits for; the action's list would repeat them.
                    for rule in compiled.outcomes where rule.outcome != .unchanged {
                        out.append("      rule \(safe(rule.id)): \(safe(ruleText(rule, waits: &waits)))")
                        for change in rule.changes { out.append("        " + safe(Self.fieldChange(change))) }
                    }
                    for group in compiled.groupChanges {
                        out.append("      " + painter.color(.yellow, "! " + safe(groupChangeText(group))))
                    }
                } else if action.error == nil && !action.waitingFor.isEmpty {
                    out.append("      waiting for " + safe(waits.text(action.waitingFor, for: action.title)))
                }
            }
        }
        let attention = plan.attention
        if !attention.isEmpty {
            out.append("")
            out.append(painter.bold(painter.color(.yellow, "Needs attention (\(attention.count)), not caused by this change")))
            for item in attention { out.append("  " + painter.color(.yellow, "! " + safe(item.description))) }
        }
        let errorProblems = plan.problems.filter { $0.severity == .error }
        if !errorProblems.isEmpty {
            out.append("")
            out.append(painter.bold(painter.color(.red, "Problems (\(errorProblems.count))")))
            for problem in errorProblems { out.append("  " + painter.color(.red, "x " + safe(problem.message))) }
        }
        if !plan.reviewAges.isEmpty {
            out.append("")
            out.append(painter.bold("In review (\(plan.reviewAges.count))"))
            for age in plan.reviewAges {
                let line = "\(age.flagged ? "⚠" : "·") \(age.kind.rawValue) \(safe(age.label)) \(Self.ageText(age))"
                out.append("  " + (age.flagged ? painter.color(.red, line) : line))
            }
        }
        if !plan.inventory.isEmpty {
            out.append("")
            out.append(painter.bold("Not derived by the manifests (\(plan.inventory.count))"))
            for line in inventoryLines(plan.inventory) { out.append("  " + safe(line)) }
        }
        out.append("")
        out.append(estimateText(plan.estimate))
        out.append(statusLine(plan))
        return out.joined(separator: "\n") + "\n"
    }

    /// The separator between Markdown comments when the plan does not fit in one.
    public static let commentSeparator = "\n<!-- retention-sync: next comment -->\n"

    /// The least `--markdown-max-chars` that leaves room for a section's fold, a table head and a line.
    public static let minimumMarkdownCharacters = 500

    /// The Markdown for a pull-request comment, split into several comments when one would
    /// exceed `maxCharacters` (GitHub's limit is 65,535); no comment ever does.
    /// `after`: what the run shows below the plan (review times, evidence), packed into the same
    /// comments, so that it counts against `maxCharacters` too.
    public static func markdown(_ plan: Plan, maxCharacters: Int = 65_000, after: [MarkdownBlock] = []) -> [String] {
        var sections = [Section(open: [], lines: markdownHead(plan), close: [])] + markdownActionTables(plan)
        sections += [markdownReviewAges(plan), markdownTextChanges(plan), markdownRuleChanges(plan), markdownInventory(plan)].compactMap { $0 }
        sections.append(Section(open: ["", "<details><summary>Estimate</summary>", ""],
                                lines: [estimateText(plan.estimate)], close: ["", "</details>"]))
        sections += after.map { Section(open: $0.open, lines: $0.lines, close: $0.close) }
        return pack(sections, maxCharacters: max(minimumMarkdownCharacters, maxCharacters))
    }

    /// A block of Markdown below the plan: `open` and `close` are repeated around each part when it is
    /// continued in the next comment (a heading, a `<details>` fold).
    public struct MarkdownBlock: Sendable {
        public var open: [String]
        public var lines: [String]
        public var close: [String]

        public init(open: [String], lines: [String], close: [String] = []) {
            self.open = open
            self.lines = lines
            self.close = close
        }
    }

    /// Above the folds: the summary, what needs a person (missing state, deletions, errors), what
    /// waits for a performance test or for App Review, and what sandbox approves in the same apply.
    static func markdownHead(_ plan: Plan) -> [String] {
        let escape = MarkdownText.escape
        var waits = WaitingLists()
        var head: [String] = []
        head.append("### retention-sync plan · \(plan.environment.rawValue) · \(MarkdownText.code(plan.bundleId))")
        head.append("")
        head.append("**\(summaryLine(plan))**")
        head.append("")
        head.append(statusLine(plan) + " The plan read the remote state with \(plan.apiCalls) API call\(plan.apiCalls == 1 ? "" : "s").")
        if let read = plan.pruneRead { head.append(""); head.append(MarkdownText.escape(pruneReadText(read))) }
        head += markdownSettingWarnings(plan)
        if let missing = plan.missingState {
            head.append("")
            head.append("> [!CAUTION]")
            head.append("> **Missing state.** " + escape(missing.explanation))
        }
        head += markdownWarnings(plan)
        // A realtime URL that waits for a performance test is not waiting for App Review: it has a
        // heading of its own, with the whole reason (what to run).
        let allBlocked = plan.actions.filter { $0.state == .blocked && !plan.runsAfterRelist($0) }
        let waitingForTest = allBlocked.filter { $0.reason.wait == .performanceTest }
        let waitingForVersion = allBlocked.filter { if case .newVersion = $0.reason.wait { true } else { false } }
        let blocked = allBlocked.filter { $0.reason.wait != .performanceTest && !waitingForVersion.contains($0) }
        let rejectedInMain = plan.problems.filter { $0.severity == .attention }
        if !rejectedInMain.isEmpty {
            head.append("")
            head.append("> [!WARNING]")
            head.append("> **Needs attention** (App Review rejected content the main branch already uses; not caused by this change):")
            for problem in rejectedInMain { head.append("> - \(escape(problem.message))") }
            for action in waitingForVersion {
                head.append("> - \(MarkdownText.code(action.title)) stays as it is until then")
            }
        }
        if !plan.inherited.isEmpty {
            head.append("")
            head.append("> [!WARNING]")
            head.append("> **Needs attention** (the environment was like this before these manifests; no action of this plan changes it):")
            for problem in plan.inherited { head.append("> - \(escape(problem.description))") }
        }
        if !waitingForTest.isEmpty {
            head.append("")
            head.append("**Waiting for a sandbox performance test to pass:**")
            for action in waitingForTest {
                head.append("- \(MarkdownText.code(action.title)) — \(escape(PlanWording.reason(action.reason)))")
            }
        }
        if !blocked.isEmpty {
            head.append("")
            head.append("**Blocked until App Review approves (retried by the next reconcile):**")
            for action in blocked.prefix(Self.unfoldedBlocked) {
                head.append("- \(MarkdownText.code(action.title)) — waiting for "
                            + escape(waits.text(action.waitingFor, for: action.title)))
            }
            if blocked.count > Self.unfoldedBlocked {
                head.append("- …and \(blocked.count - Self.unfoldedBlocked) more (all under “Blocked” below)")
            }
        }
        let afterRelist = plan.actions.filter { plan.runsAfterRelist($0) }
        if !afterRelist.isEmpty {
            head.append("")
            head.append("**Done by this apply once sandbox approves its uploads:** \(afterRelist.count) action\(afterRelist.count == 1 ? "" : "s") (under “\(afterRelistTitle)” below)")
        }
        if plan.snapshotDigestChangesInApply {
            head.append("")
            head.append("The snapshot digest shown is the one publishable now; apply publishes the snapshot compiled after sandbox approves this apply's uploads, with another digest.")
        }
        if plan.converged && plan.problems.isEmpty {
            head.append("")
            head.append("No changes: \(plan.environment.rawValue) matches the manifests.")
        }

        return head
    }

    /// The alerts a reviewer must not miss: deletions, a running experiment changed, errors.
    static func markdownWarnings(_ plan: Plan) -> [String] {
        let escape = MarkdownText.escape
        var head: [String] = []
        let deletes = plan.actions.filter { $0.kind.effect == .delete && $0.state != .error }
        if !deletes.isEmpty {
            head.append("")
            head.append("> [!WARNING]")
            head.append("> This plan **deletes \(deletes.count) item\(deletes.count == 1 ? "" : "s")**: "
                        + deletes.prefix(5).map { MarkdownText.code($0.title) }.joined(separator: ", ")
                        + (deletes.count > 5 ? " and \(deletes.count - 5) more" : "") + ".")
        }
        let groupChanges = plan.actions.compactMap { $0.change.as(SnapshotChange.self)?.compiled.groupChanges }.flatMap { $0 }
        for whenPublished in [false, true] {
            let changes = groupChanges.filter { $0.whenPublished == whenPublished }
            guard !changes.isEmpty else { continue }
            head.append("")
            head.append("> [!WARNING]")
            head.append(whenPublished
                ? "> This plan holds back a change to a running experiment until the content it waits for is approved; when published:"
                : "> This plan changes a running experiment:")
            for change in changes { head.append("> - " + escape(groupChangeText(change))) }
        }
        let errors = plan.actions.filter { $0.state == .error }
        let errorProblems = plan.problems.filter { $0.severity == .error }
        if !errors.isEmpty || !errorProblems.isEmpty {
            head.append("")
            head.append("> [!CAUTION]")
            head.append("> Errors that need a change in the manifests:")
            for problem in errorProblems { head.append("> - \(escape(problem.message))") }
            for action in errors {
                head.append("> - \(MarkdownText.code(action.title)): \(escape(action.error.map(PlanWording.error) ?? PlanWording.reason(action.reason)))")
            }
        }
        return head
    }

    /// One folded table per group of actions, with each rule a published snapshot changes.
    static func markdownActionTables(_ plan: Plan) -> [Section] {
        let escape = MarkdownText.escape
        var tableWaits = WaitingLists()
        var sections: [Section] = []
        for group in groups(plan) where !group.actions.isEmpty && (group.title != "Blocked" || group.actions.count > Self.unfoldedBlocked) {
            var lines = ["| Action | State | Reason |", "|---|---|---|"]
            for action in group.actions {
                var reason = escape(action.error.map(PlanWording.error) ?? PlanWording.reason(action.reason))
                if action.state == .blocked && action.kind != .publishSnapshot && !action.waitingFor.isEmpty {
                    reason = "waiting for " + escape(tableWaits.text(action.waitingFor, for: action.title))
                }
                if let compiled = action.change.as(SnapshotChange.self)?.compiled {
                    let rules = compiled.outcomes.filter { $0.outcome != .unchanged }
                        .map { "\(MarkdownText.code($0.id, inTable: true)) \(escape(ruleText($0, waits: &tableWaits)))" }
                    if !rules.isEmpty { reason += "<br>" + rules.joined(separator: "<br>") }
                }
                lines.append("| \(MarkdownText.code(title(action, in: plan), inTable: true)) | \(action.state.rawValue) | \(reason) |")
            }
            sections.append(Section(open: ["", "<details><summary>\(group.title) (\(group.actions.count))</summary>", ""],
                                    lines: lines, close: ["", "</details>"]))
        }
        return sections
    }

    /// Derived content in review and for how long (format 1.1), folded.
    static func markdownReviewAges(_ plan: Plan) -> Section? {
        let escape = MarkdownText.escape
        guard !plan.reviewAges.isEmpty else { return nil }
        let flagged = plan.reviewAges.filter(\.flagged).count
        var lines = ["| | Kind | Content | State | For |", "|---|---|---|---|---|"]
        for age in plan.reviewAges {
            lines.append("| \(age.flagged ? "⚠" : "") | \(age.kind.rawValue) | \(escape(age.label)) | \(age.state.rawValue) | \(escape(Self.ageText(age))) |")
        }
        return Section(open: ["", "<details><summary>In review (\(plan.reviewAges.count)\(flagged > 0 ? ", ⚠ \(flagged) need attention" : ""))</summary>", ""],
                       lines: lines, close: ["", "</details>"])
    }

    /// What each replaced message's text changes, as one-line diffs, folded.
    static func markdownTextChanges(_ plan: Plan) -> Section? {
        let changed = plan.actions.filter { $0.textChanges != nil }
        guard !changed.isEmpty else { return nil }
        var lines: [String] = []
        for action in changed {
            guard let changes = action.textChanges else { continue }
            lines.append("")
            lines.append("\(MarkdownText.code(title(action, in: plan), inTable: false)) replaces \(MarkdownText.code(changes.replaces, inTable: false)):")
            lines += diffBlock(changes.fields, absentSides: false)
        }
        return Section(open: ["", "<details><summary>Text changes (\(changed.count))</summary>"],
                       lines: lines, close: ["", "</details>"])
    }

    /// A ```` ```diff ```` block with one `- field: before` / `+ field: after` pair per change; a side
    /// that is absent is written `(none)` when `absentSides`, else left out.
    static func diffBlock(_ fields: [FieldChange], absentSides: Bool) -> [String] {
        // One line each, so no text can close the fence or start a new diff line.
        func line(_ text: String?) -> String {
            (text ?? "(none)").replacingOccurrences(of: "\n", with: "⏎").replacingOccurrences(of: "```", with: "ʼʼʼ")
        }
        var lines = ["", "```diff"]
        for field in fields {
            if absentSides || field.before != nil { lines.append("- \(field.field): \(line(field.before))") }
            if absentSides || field.after != nil { lines.append("+ \(field.field): \(line(field.after))") }
        }
        return lines + ["```"]
    }

    /// What each new version of a published rule changes, attribute by attribute, folded.
    static func markdownRuleChanges(_ plan: Plan) -> Section? {
        let rules = plan.actions.compactMap { $0.change.as(SnapshotChange.self)?.compiled.outcomes }.flatMap { $0 }.filter { !$0.changes.isEmpty }
        guard !rules.isEmpty else { return nil }
        var lines: [String] = []
        for rule in rules {
            lines.append("")
            lines.append("rule \(MarkdownText.code(rule.id, inTable: false)) (\(rule.outcome.rawValue)):")
            lines += diffBlock(rule.changes, absentSides: true)
        }
        return Section(open: ["", "<details><summary>Rule changes (\(rules.count))</summary>"], lines: lines, close: ["", "</details>"])
    }

    /// Remote content the manifests do not derive, and what a prune would do with it, folded.
    static func markdownInventory(_ plan: Plan) -> Section? {
        let escape = MarkdownText.escape
        guard !plan.inventory.isEmpty else { return nil }
        var lines = ["| Kind | Identifier | State | Label | In use | Prune |", "|---|---|---|---|---|---|"]
        for item in plan.inventory {
            lines.append("| \(item.kind.rawValue) | \(MarkdownText.code(item.identifier, inTable: true)) | \(escape(item.state.rawValue)) | \(escape(labelText(item))) | \(escape(item.usedBy.map(\.description).joined(separator: ", "))) | \(escape(PlanWording.prune(item.prune))) |")
        }
        return Section(open: ["", "<details><summary>Not derived by the manifests (\(plan.inventory.count))</summary>", ""],
                       lines: lines, close: ["", "</details>"])
    }

    /// Blocked actions listed above the fold; a longer list is folded in full below.
    static let unfoldedBlocked = 10

    struct Section {
        var open: [String]
        var lines: [String]
        var close: [String]
    }

    /// Room kept for the footer "Comment N of M" that is added after packing.
    static let footerRoom = 40
    static let continuation = "_(continued)_"

    /// GitHub counts characters; UTF-16 code units are never fewer, so a comment measured in them fits.
    static func length(_ text: String) -> Int { text.utf16.count }

    /// Packs sections into comments of at most `maxCharacters`; a section too long for one comment
    /// is continued in the next, closing and reopening its `<details>` so every comment is valid on
    /// its own, and a single line too long for any comment is cut into pieces.
    static func pack(_ sections: [Section], maxCharacters: Int) -> [String] {
        let budget = maxCharacters - footerRoom
        var comments: [String] = []
        var current = ""
        var hasContent = false
        func size(_ lines: [String]) -> Int { lines.reduce(0) { $0 + length($1) + 1 } }
        func flush() {
            guard hasContent else { return }
            comments.append(current)
            current = continuation + "\n"
            hasContent = false
        }
        for section in sections {
            let tableHead = section.lines.prefix(2).allSatisfy { $0.hasPrefix("|") } ? Array(section.lines.prefix(2)) : []
            // The longest line that fits a fresh comment beside its fold and table head.
            let lineRoom = max(1, budget - length(continuation) - 1 - size(section.open + section.close + tableHead) - 1)
            let lines = section.lines.flatMap { cut($0, to: lineRoom) }
            let whole = section.open + lines + section.close
            if length(current) + size(whole) <= budget {
                current += whole.joined(separator: "\n") + "\n"
                hasContent = true
                continue
            }
            // Start in a fresh comment unless the fold, the table head and one line fit here.
            let firstLine = lines.first { !tableHead.contains($0) }.map { [$0] } ?? []
            if length(current) + size(section.open + tableHead + firstLine + section.close) > budget {
                flush()
            }
            var chunk = section.open
            var chunkHasLines = false
            for line in lines {
                if length(current) + size(chunk + [line] + section.close) > budget, chunkHasLines {
                    current += (chunk + section.close).joined(separator: "\n") + "\n"
                    hasContent = true
                    flush()
                    chunk = section.open + (line.hasPrefix("|") && !tableHead.contains(line) ? tableHead : [])
                    chunkHasLines = false
                }
                chunk.append(line)
                if !tableHead.contains(line) { chunkHasLines = true }
            }
            current += (chunk + section.close).joined(separator: "\n") + "\n"
            hasContent = true
        }
        if hasContent { comments.append(current) }
        if comments.count > 1 {
            comments = comments.enumerated().map { index, text in
                text + "\n<sub>Comment \(index + 1) of \(comments.count)</sub>\n"
            }
        }
        return comments
    }

    /// A line cut into pieces of at most `room` UTF-16 code units, never inside a character.
    static func cut(_ line: String, to room: Int) -> [String] {
        guard length(line) > room else { return [line] }
        var pieces: [String] = []
        var piece = ""
        for character in line {
            if length(piece) + character.utf16.count > room, !piece.isEmpty {
                pieces.append(piece)
                piece = ""
            }
            piece.append(character)
        }
        if !piece.isEmpty { pieces.append(piece) }
        return pieces
    }

    struct Group {
        var title: String
        var actions: [PlanAction]
    }

    static let afterRelistTitle = "After this apply's uploads"

    static func groups(_ plan: Plan) -> [Group] {
        let ready = plan.actions.filter { $0.state == .ready }
        return [
            Group(title: "To upload", actions: ready.filter { $0.kind.effect == .upload }),
            Group(title: "To set", actions: ready.filter { $0.kind.effect == .set }),
            Group(title: "To delete", actions: ready.filter { $0.kind.effect == .delete }),
            Group(title: afterRelistTitle, actions: plan.actions.filter { plan.runsAfterRelist($0) }),
            Group(title: "Blocked", actions: plan.actions.filter { $0.state == .blocked && !plan.runsAfterRelist($0) }),
            Group(title: "Errors", actions: plan.actions.filter { $0.state == .error }),
        ]
    }

    static func marker(_ action: PlanAction, in plan: Plan) -> (symbol: String, color: Painter.Color) {
        switch action.state {
        case .error: return ("x", .red)
        case .blocked: return plan.runsAfterRelist(action) ? ("~", .yellow) : ("!", .yellow)
        case .ready:
            switch action.kind.effect {
            case .upload: return ("+", .green)
            case .delete: return ("-", .red)
            case .set: return ("~", .yellow)
            }
        }
    }

    /// Lists of what actions wait for, each written out the first time and referred to after.
    struct WaitingLists {
        var seen: [[ReviewItem]: String] = [:]

        mutating func text(_ items: [ReviewItem], for owner: String) -> String {
            if let first = seen[items] { return "the same as \(first)" }
            seen[items] = owner
            return Self.shortList(items.map(\.description))
        }

        /// At most `shown` items, then `and N more` (plan JSON lists them all).
        static let shown = 5

        static func shortList(_ items: [String]) -> String {
            guard items.count > shown + 1 else { return items.joined(separator: "; ") }
            return items.prefix(shown).joined(separator: "; ") + "; and \(items.count - shown) more (plan --format json lists them all)"
        }
    }

    /// `split group yearly-upsell: 45/45/10 → 60/30/10; about 15% of its customers change arm …`; a
    /// change held for review says what happens when it is published.
    static func groupChangeText(_ change: SplitGroupChange) -> String {
        let percent = SplitGroupChange.percentText(change.reassignedBuckets)
        let arms = change.after.map(\.rule).joined(separator: ", ")
        var text = "split group \(change.group)\(change.whenPublished ? " (held for review)" : ""): "
            + "\(SplitGroupChange.layout(change.before)) → \(SplitGroupChange.layout(change.after)) (\(arms)); "
        if change.whenPublished {
            text += "when published: " + (change.reassignedBuckets == 0
                ? "no customer of group \(change.group) changes arm"
                : "about \(percent)% of group \(change.group)'s customers change arm in a running experiment")
        } else {
            text += change.reassignedBuckets == 0
                ? "no customer of the running experiment changes arm"
                : "about \(percent)% of its customers change arm in a running experiment"
        }
        if !change.matchChanged.isEmpty {
            let one = change.matchChanged.count == 1
            text += "; what \(one ? "arm" : "arms") \(change.matchChanged.joined(separator: ", ")) \(one ? "matches" : "match") changes"
            if change.armsMatchDifferently {
                text += ", so the arms match different customers: results do not compare them as a fair split — the period's "
                    + "comparisons carry a warning instead of a recommendation and its sample ratio is not tested"
            }
        }
        if change.changesSegments {
            func list(_ segments: [String]?) -> String { segments.flatMap { $0.isEmpty ? nil : $0.joined(separator: ", ") } ?? "none" }
            text += "; declared segments \(list(change.segmentsBefore)) → \(list(change.segmentsAfter)): a new period starts, and only "
                + "its decisions count the new declaration as confirmatory"
        }
        return text + (change.newPeriod
            ? "; results report each configuration of the group as a period of its own"
            : "; the arms still match alike and keep their buckets, so results go on with the same period")
    }

    static func ruleText(_ rule: RuleOutcome, waits: inout WaitingLists) -> String {
        let waiting = rule.waitingFor.isEmpty ? "" : " (waiting for " + waits.text(rule.waitingFor, for: "rule \(rule.id)") + ")"
        if !rule.heldBy.isEmpty {
            // An arm of a split group that waits for another arm: the group goes live whole.
            let arms = "split group held back by " + rule.heldBy.joined(separator: ", ")
            switch rule.outcome {
            case .held where rule.version == nil:
                return "kept at version \(rule.publishedVersion ?? "") with its group until it publishes (removed from the manifests); \(arms)" + waiting
            case .held:
                return "held at previous version \(rule.publishedVersion ?? "") with its group; new version \(rule.version ?? "") ready; \(arms)" + waiting
            case .leftOut:
                return "left out with its group; \(arms)" + waiting
            case .added, .updated, .unchanged, .removed:
                break
            }
        }
        switch rule.outcome {
        case .added: return "added at version \(rule.version ?? "")"
        case .updated: return "updated \(rule.publishedVersion ?? "") → \(rule.version ?? "")"
        case .unchanged: return "unchanged at \(rule.version ?? "")"
        case .held: return "held at previous version \(rule.publishedVersion ?? ""); new version \(rule.version ?? "") blocked" + waiting
        case .leftOut: return "left out: not approved yet" + waiting
        case .removed: return "removed (was \(rule.publishedVersion ?? ""))"
        }
    }

    static func labelText(_ item: InventoryItem) -> String {
        switch item.label {
        case .unmanaged: "unmanaged"
        case .external: (item.name.map { "\($0) " } ?? "") + "external (content unknown)"
        case .olderVersion: "older version" + (item.name.map { " of \($0)" } ?? "")
        case .newerVersion: "newer version" + (item.name.map { " of \($0)" } ?? "")
        case .rollbackTarget: "rollback target" + (item.name.map { " for \($0)" } ?? "")
        case .submitted: "submitted by " + item.submittedBy.joined(separator: ", ") + (item.name.map { " for \($0)" } ?? "")
        }
    }

    /// More external items than this are one summary line in the terminal (JSON and Markdown list each).
    public static let externalItemsListed = 3

    /// The inventory as the terminal shows it: every item on its line, except that a team's many
    /// declared external messages and images (a vendor's content after an import) are one line that
    /// counts them by kind and review state — each is kept, and `--format json` lists every one.
    static func inventoryLines(_ inventory: [InventoryItem]) -> [String] {
        let external = inventory.filter { $0.label == .external }
        guard external.count > externalItemsListed else { return inventory.map(inventoryText) }
        var lines = inventory.filter { $0.label != .external }.map(inventoryText)
        let kinds = ContentKind.allCases.compactMap { kind -> String? in
            let items = external.filter { $0.kind == kind }
            guard !items.isEmpty else { return nil }
            let states = Dictionary(grouping: items, by: \.state.rawValue).map { "\($0.value.count) \($0.key)" }.sorted()
            return "\(items.count) \(kind.rawValue)\(items.count == 1 ? "" : "s") (\(states.joined(separator: ", ")))"
        }
        let inUse = external.filter { !$0.usedBy.isEmpty }.count
        lines.append("external (declared, content unknown): " + kinds.joined(separator: ", ")
                     + (inUse > 0 ? "; \(inUse) in use" : "")
                     + "; kept, deleted only when named with --prune-id (--format json lists each)")
        return lines
    }

    static func inventoryText(_ item: InventoryItem) -> String {
        var text = "\(item.kind.rawValue) \(item.identifier) \(item.state.rawValue): \(labelText(item))"
        if !item.usedBy.isEmpty { text += "; in use by " + item.usedBy.map(\.description).joined(separator: ", ") }
        return text + "; " + PlanWording.prune(item.prune)
    }

    static func estimateText(_ estimate: Estimate) -> String {
        let total = estimate.totalRequests
        let environment = estimate.otherRate < RateLimits.apple.perSecond(.other, in: .production) ? "sandbox" : "production"
        let paced = "~\(seconds(estimate.sustainedSeconds)) at \(environment)'s \(rate(estimate.configureDefaultRate)) configure-default request\(estimate.configureDefaultRate == 1 ? "" : "s")/s "
            + "and \(rate(estimate.otherRate)) other request\(estimate.otherRate == 1 ? "" : "s")/s"
        return "Estimate: \(total) request\(total == 1 ? "" : "s") (\(estimate.configureDefaultRequests) configure-default, \(estimate.otherRequests) other): "
            // Within the hour's budget the floor is 0 s: the apply is as fast as Apple answers, and the
            // paced figure only holds when earlier runs already spent the budget.
            + (estimate.minimumSeconds > 0
                ? paced + " once this hour's budget is spent, at least \(seconds(estimate.minimumSeconds)) while it lasts; "
                : "within this hour's budget, so as fast as Apple answers (\(paced) only if earlier runs this hour spent it); ")
            + ContentKind.allCases.compactMap { kind in
                estimate.content[kind].map { "\(kind.rawValue)s \($0.after)/\($0.cap)" }
            }.joined(separator: ", ") + " after apply."
    }

    static func rate(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(format: "%.1f", value)
    }

    public static func seconds(_ value: Double) -> String {
        if value < 60 { return "\(Int(value.rounded(.up))) s" }
        if value < 3600 { return "\(Int((value / 60).rounded(.up))) min" }
        return String(format: "%.1f h", value / 3600)
    }
}
