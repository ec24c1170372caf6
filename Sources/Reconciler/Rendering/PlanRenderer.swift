import Foundation
import RetentionMessaging
import RetentionMessagingModels

/// The three renderings of a plan. Each is a pure function of the plan, so equal plans print
/// equal bytes.
public enum PlanRenderer {
    /// `Plan (production): 3 to upload, 1 to set, 2 blocked, 0 to delete`, plus errors when any.
    public static func summaryLine(_ plan: Plan) -> String {
        let s = plan.summary
        var line = "Plan (\(plan.environment.rawValue)): \(s.toUpload) to upload, \(s.toSet) to set, \(s.blocked) blocked, \(s.toDelete) to delete"
        if s.errors > 0 { line += ", \(s.errors) error\(s.errors == 1 ? "" : "s")" }
        return line
    }

    /// One sentence on sync and health, the two axes.
    public static func statusLine(_ plan: Plan) -> String {
        let sync: String
        if plan.converged {
            sync = "in sync: the environment matches the manifests"
        } else if !plan.hasReadyActions && !plan.hasErrors {
            sync = "nothing to do now: only waiting for App Review"
        } else {
            sync = "out of sync"
        }
        return "Sync: \(sync). Health: \(plan.health.rawValue)."
    }

    public static func json(_ plan: Plan) throws -> String {
        String(decoding: try CanonicalJSON.encodePretty(plan), as: UTF8.self) + "\n"
    }


    public static func text(_ plan: Plan, color: Bool) -> String {
        let paint = Paint(enabled: color)
        var out: [String] = [paint.bold(summaryLine(plan))]
        out.append("Read \(plan.environment.rawValue) with \(plan.apiCalls) API call\(plan.apiCalls == 1 ? "" : "s").")
        if plan.converged && plan.problems.isEmpty {
            out.append("")
            out.append("No changes. \(plan.environment.rawValue) matches the manifests.")
        }
        for group in groups(plan) where !group.actions.isEmpty {
            out.append("")
            out.append(paint.bold("\(group.title) (\(group.actions.count))"))
            for action in group.actions {
                let mark = marker(action)
                out.append("  \(paint.color(mark.color, mark.symbol + " " + action.title))")
                out.append("      \(action.reason)")
                if let error = action.error { out.append("      " + paint.color(.red, "error: \(error)")) }
                if action.error == nil && !action.waitingFor.isEmpty {
                    out.append("      waiting for " + action.waitingFor.map(\.description).joined(separator: "; "))
                }
                if action.kind == .publishSnapshot {
                    for rule in action.rules where rule.outcome != .unchanged {
                        out.append("      rule \(rule.id): \(ruleText(rule))")
                    }
                }
            }
        }
        if !plan.problems.isEmpty {
            out.append("")
            out.append(paint.bold(paint.color(.red, "Problems (\(plan.problems.count))")))
            for problem in plan.problems { out.append("  " + paint.color(.red, "x " + problem.message)) }
        }
        if !plan.inventory.isEmpty {
            out.append("")
            out.append(paint.bold("Not derived by the manifests (\(plan.inventory.count))"))
            for item in plan.inventory { out.append("  " + inventoryText(item)) }
        }
        out.append("")
        out.append(estimateText(plan.estimate))
        out.append(statusLine(plan))
        return out.joined(separator: "\n") + "\n"
    }


    /// The Markdown for a pull-request comment, split into several comments when one would
    /// exceed `maxCharacters` (GitHub's limit is 65,535).
    public static func markdown(_ plan: Plan, maxCharacters: Int = 65_000) -> [String] {
        var head: [String] = []
        head.append("### retention-sync plan · \(plan.environment.rawValue) · `\(plan.bundleId)`")
        head.append("")
        head.append("**\(summaryLine(plan))**")
        head.append("")
        head.append(statusLine(plan) + " The plan read the remote state with \(plan.apiCalls) API call\(plan.apiCalls == 1 ? "" : "s").")
        let deletes = plan.actions.filter { [.deleteDefault, .deleteMessage, .deleteImage].contains($0.kind) && $0.state != .error }
        if !deletes.isEmpty {
            head.append("")
            head.append("> [!WARNING]")
            head.append("> This plan **deletes \(deletes.count) item\(deletes.count == 1 ? "" : "s")**: "
                        + deletes.prefix(5).map { "`\($0.title)`" }.joined(separator: ", ")
                        + (deletes.count > 5 ? " and \(deletes.count - 5) more" : "") + ".")
        }
        let errors = plan.actions.filter { $0.state == .error }
        if !errors.isEmpty || !plan.problems.isEmpty {
            head.append("")
            head.append("> [!CAUTION]")
            head.append("> Errors that need a change in the manifests:")
            for problem in plan.problems { head.append("> - \(markdownEscape(problem.message))") }
            for action in errors { head.append("> - `\(action.title)`: \(markdownEscape(action.error ?? action.reason))") }
        }
        let blocked = plan.actions.filter { $0.state == .blocked }
        if !blocked.isEmpty {
            head.append("")
            head.append("**Blocked until App Review approves (retried by the next reconcile):**")
            for action in blocked.prefix(Self.unfoldedBlocked) {
                head.append("- `\(action.title)` — waiting for "
                            + markdownEscape(action.waitingFor.map(\.description).joined(separator: "; ")))
            }
            if blocked.count > Self.unfoldedBlocked {
                head.append("- …and \(blocked.count - Self.unfoldedBlocked) more (all under “Blocked” below)")
            }
        }
        if plan.converged && plan.problems.isEmpty {
            head.append("")
            head.append("No changes: \(plan.environment.rawValue) matches the manifests.")
        }

        var sections: [Section] = [Section(open: [], lines: head, close: [])]
        for group in groups(plan) where !group.actions.isEmpty && (group.title != "Blocked" || group.actions.count > Self.unfoldedBlocked) {
            var lines = ["| Action | State | Reason |", "|---|---|---|"]
            for action in group.actions {
                var reason = markdownEscape(action.error ?? action.reason)
                if action.state == .blocked {
                    reason = "waiting for " + markdownEscape(action.waitingFor.map(\.description).joined(separator: "; "))
                }
                if action.kind == .publishSnapshot {
                    let rules = action.rules.filter { $0.outcome != .unchanged }
                        .map { "`\($0.id)` \(markdownEscape(ruleText($0)))" }
                    if !rules.isEmpty { reason += "<br>" + rules.joined(separator: "<br>") }
                }
                lines.append("| `\(markdownEscape(action.title))` | \(action.state.rawValue) | \(reason) |")
            }
            sections.append(Section(open: ["", "<details><summary>\(group.title) (\(group.actions.count))</summary>", ""],
                                    lines: lines, close: ["", "</details>"]))
        }
        if !plan.inventory.isEmpty {
            var lines = ["| Kind | Identifier | State | Label | In use | Prune |", "|---|---|---|---|---|---|"]
            for item in plan.inventory {
                lines.append("| \(item.kind.rawValue) | `\(item.identifier)` | \(item.state) | \(labelText(item)) | \(markdownEscape(item.usedBy.joined(separator: ", "))) | \(markdownEscape(item.prune)) |")
            }
            sections.append(Section(open: ["", "<details><summary>Not derived by the manifests (\(plan.inventory.count))</summary>", ""],
                                    lines: lines, close: ["", "</details>"]))
        }
        sections.append(Section(open: ["", "<details><summary>Estimate</summary>", ""],
                                lines: [estimateText(plan.estimate)], close: ["", "</details>"]))
        // The footer "Comment N of M" is added after packing; keep room for it.
        return pack(sections, maxCharacters: max(1_000, maxCharacters) - 40)
    }

    /// Blocked actions listed above the fold; a longer list is folded in full below.
    static let unfoldedBlocked = 10

    struct Section {
        var open: [String]
        var lines: [String]
        var close: [String]
    }

    /// Packs sections into comments; a section too long for one comment is continued in the next,
    /// closing and reopening its `<details>` so every comment is valid on its own.
    static func pack(_ sections: [Section], maxCharacters: Int) -> [String] {
        let continuation = "_(continued)_"
        var comments: [String] = []
        var current = ""
        var hasContent = false
        func size(_ lines: [String]) -> Int { lines.reduce(0) { $0 + $1.count + 1 } }
        func flush() {
            guard hasContent else { return }
            comments.append(current)
            current = continuation + "\n"
            hasContent = false
        }
        for section in sections {
            let whole = section.open + section.lines + section.close
            if current.count + size(whole) <= maxCharacters {
                current += whole.joined(separator: "\n") + "\n"
                hasContent = true
                continue
            }
            if current.count + size(section.open + section.close) + (section.lines.first.map { $0.count + 1 } ?? 0) > maxCharacters {
                flush()
            }
            var chunk = section.open
            let tableHead = section.lines.prefix(2).allSatisfy { $0.hasPrefix("|") } ? Array(section.lines.prefix(2)) : []
            for line in section.lines {
                if current.count + size(chunk + [line] + section.close) > maxCharacters, chunk.count > section.open.count + tableHead.count {
                    current += (chunk + section.close).joined(separator: "\n") + "\n"
                    hasContent = true
                    flush()
                    chunk = section.open + (line.hasPrefix("|") && !tableHead.contains(line) ? tableHead : [])
                }
                chunk.append(line)
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


    struct Group {
        var title: String
        var actions: [PlanAction]
    }

    static func groups(_ plan: Plan) -> [Group] {
        let ready = plan.actions.filter { $0.state == .ready }
        return [
            Group(title: "To upload", actions: ready.filter { [.uploadImage, .uploadMessage].contains($0.kind) }),
            Group(title: "To set", actions: ready.filter { [.setDefault, .publishSnapshot, .setRealtimeURL].contains($0.kind) }),
            Group(title: "To delete", actions: ready.filter { [.deleteDefault, .deleteMessage, .deleteImage].contains($0.kind) }),
            Group(title: "Blocked", actions: plan.actions.filter { $0.state == .blocked }),
            Group(title: "Errors", actions: plan.actions.filter { $0.state == .error }),
        ]
    }

    static func marker(_ action: PlanAction) -> (symbol: String, color: Paint.Color) {
        switch action.state {
        case .error: return ("x", .red)
        case .blocked: return ("!", .yellow)
        case .ready:
            switch action.kind {
            case .uploadImage, .uploadMessage: return ("+", .green)
            case .deleteDefault, .deleteMessage, .deleteImage: return ("-", .red)
            default: return ("~", .yellow)
            }
        }
    }

    static func ruleText(_ rule: RuleOutcome) -> String {
        let waiting = rule.waitingFor.isEmpty ? "" : " (waiting for " + rule.waitingFor.map(\.description).joined(separator: "; ") + ")"
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
        case .olderVersion: "older version" + (item.name.map { " of \($0)" } ?? "")
        }
    }

    static func inventoryText(_ item: InventoryItem) -> String {
        var text = "\(item.kind.rawValue) \(item.identifier) \(item.state): \(labelText(item))"
        if !item.usedBy.isEmpty { text += "; in use by " + item.usedBy.joined(separator: ", ") }
        return text + "; " + item.prune
    }

    static func estimateText(_ estimate: Estimate) -> String {
        let total = estimate.totalRequests
        return "Estimate: \(total) request\(total == 1 ? "" : "s") (\(estimate.configureDefaultRequests) configure-default at \(rate(estimate.configureDefaultRate))/s, \(estimate.otherRequests) other at \(rate(estimate.otherRate))/s), "
            + "at least \(seconds(estimate.minimumSeconds)) under Apple's rate limits; "
            + "messages \(estimate.messagesAfter)/\(estimate.messagesCap), images \(estimate.imagesAfter)/\(estimate.imagesCap) after apply."
    }

    static func rate(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(format: "%.1f", value)
    }

    static func seconds(_ value: Double) -> String {
        if value < 60 { return "\(Int(value.rounded(.up))) s" }
        if value < 3600 { return "\(Int((value / 60).rounded(.up))) min" }
        return String(format: "%.1f h", value / 3600)
    }

    static func markdownEscape(_ text: String) -> String {
        text.replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: "\n", with: " ")
    }
}

/// ANSI colour, only when the console allows it.
struct Paint {
    enum Color: String { case red = "31", green = "32", yellow = "33" }
    var enabled: Bool

    func color(_ color: Color, _ text: String) -> String {
        enabled ? "\u{1B}[\(color.rawValue)m\(text)\u{1B}[0m" : text
    }

    func bold(_ text: String) -> String { enabled ? "\u{1B}[1m\(text)\u{1B}[0m" : text }
}
