import Basics
public import CLIKit
import Foundation
import Manifests
public import Reconciler
import RetentionMessaging
import RetentionMessagingModels
import Runtime
import StateStore

/// `retention-sync status` as a person and a program read it.
public enum StatusView {
    /// Coloured only where the console allows it.
    public static func text(_ report: StatusReport, for console: Console) -> String { text(report, painter: Painter(console)) }

    static func text(_ report: StatusReport, painter: Painter) -> String {
        let safe = TerminalText.safe
        var out: [String] = []
        out.append(painter.bold(safe("Status (\(report.environment.rawValue)) of \(report.bundleId): \(report.converged ? "in sync" : "not in sync"), health \(report.health.rawValue)")))
        out.append(safe("Published snapshot: \(report.publishedSnapshot ?? "none")"))
        out.append(safe("Realtime URL: \(report.realtimeURL ?? "none")"))
        if let waiting = report.realtimeURLAwaitingTest {
            out.append(safe("  \(waiting) waits for a sandbox performance test to pass (Apple refused it: 403 4030026); run '\(PerformanceTestView.invocation)', then apply"))
        }
        out.append(safe("State store: \(report.stateStore ?? "none (review ages are not recorded)")"))
        let attention = report.needingAttention
        if !attention.isEmpty {
            out.append(painter.color(.red, "Needs attention: \(attention.count) item\(attention.count == 1 ? "" : "s") REJECTED or PENDING longer than \(report.pendingWarnDays) days"))
        }
        for problem in report.inherited {
            out.append(painter.color(.red, "Needs attention (held before these manifests): " + safe(problem.description)))
        }
        for (title, entries) in sections(report) {
            out.append("")
            out.append(painter.bold("\(title) (\(entries.count))"))
            for entry in entries {
                let label = entry.derived || entry.external ? Self.label(entry)
                    : "not derived by the manifests" + (entry.name.map { " (older version of \($0))" } ?? "")
                let color: Painter.Color = entry.state == .approved ? .green : (entry.state == .rejected ? .red : .yellow)
                out.append("  \(safe(entry.identifier))  \(painter.color(color, safe(entry.state.rawValue).padding(toLength: 12, withPad: " ", startingAt: 0)))  \(safe(label))"
                           + (entry.needsAttention ? painter.color(.red, "  ⚠ \(attentionReason(entry, report))") : ""))
                if let age = age(entry) { out.append("      \(age)") }
                let uses = inUse(entry)
                if !uses.isEmpty { out.append("      in use: " + safe(uses.joined(separator: ", "))) }
                out.append("      next: \(safe(next(entry.next)))")
            }
        }
        return out.joined(separator: "\n") + "\n"
    }

    /// `PENDING for 9 days (since 2026-01-31)`; nil without a record.
    static func age(_ entry: StatusEntry) -> String? {
        guard let days = entry.stateAgeDays, let since = entry.stateSince else { return nil }
        return "\(entry.state.rawValue) for \(days) day\(days == 1 ? "" : "s") (since \(since.formatted(.date)))"
    }

    static func attentionReason(_ entry: StatusEntry, _ report: StatusReport) -> String {
        entry.state == .rejected ? "REJECTED: change the content to upload a new version"
            : "PENDING longer than \(report.pendingWarnDays) days"
    }

    /// For a pull-request or job-summary comment: what needs attention first, then every item.
    public static func markdown(_ report: StatusReport) -> String {
        func cell(_ text: String) -> String {
            TerminalText.safe(text).replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "\n", with: " ")
        }
        var out: [String] = []
        let attention = report.needingAttention
        out.append("### retention-sync status (\(report.environment.rawValue)) of `\(cell(report.bundleId))`")
        out.append("")
        out.append("**\(report.converged ? "In sync" : "Not in sync")**, health **\(report.health.rawValue)**. "
                   + (attention.isEmpty ? (report.inherited.isEmpty ? "Nothing needs attention." : "")
                      : "**⚠ \(attention.count) item\(attention.count == 1 ? "" : "s") need\(attention.count == 1 ? "s" : "") attention** (REJECTED, or PENDING longer than \(report.pendingWarnDays) days)."))
        out.append("")
        for problem in report.inherited {
            out.append("**⚠ Needs attention** (held before these manifests): \(cell(problem.description))")
            out.append("")
        }
        out.append("Published snapshot: `\(report.publishedSnapshot ?? "none")` · realtime URL: `\(cell(report.realtimeURL ?? "none"))` · state store: `\(cell(report.stateStore ?? "none"))`")
        for (title, entries) in sections(report) where !entries.isEmpty {
            out.append("")
            out.append("#### \(title) (\(entries.count))")
            out.append("")
            out.append("| | Identifier | State | Since | Name | Next |")
            out.append("|---|---|---|---|---|---|")
            for entry in entries {
                let label = entry.derived || entry.external ? Self.label(entry) : "not derived"
                let since = entry.stateAgeDays.map { "\($0) d" } ?? ""
                out.append("| \(entry.needsAttention ? "⚠" : "") | `\(entry.identifier)` | \(entry.state.rawValue) | \(since) | \(cell(label)) | \(cell(next(entry.next))) |")
            }
        }
        return out.joined(separator: "\n") + "\n"
    }

    public static func json(_ report: StatusReport) throws -> String {
        String(decoding: try CanonicalJSON.encodePretty(Document(report)), as: UTF8.self) + "\n"
    }

    /// How an entry the manifests know is named: derived content by name, locale and version;
    /// external content by name, as what it is.
    static func label(_ entry: StatusEntry) -> String {
        entry.derived ? [entry.name, entry.locale, entry.version].compactMap { $0 }.joined(separator: " ")
            : (entry.name.map { "\($0) " } ?? "") + "external (content unknown)"
    }

    static func inUse(_ entry: StatusEntry) -> [String] {
        Set(entry.inUse.map { use in
            switch use {
            case .defaultMessage(let pair): "default \(pair)"
            case .publishedRule(let rule, let locale): "rule \(rule) (\(locale))"
            case .shownBy(let label): "message \(label)"
            }
        }).sorted()
    }

    static func next(_ next: StatusEntry.Next) -> String {
        switch next {
        case .delete: return "delete (--prune)"
        case .prune(.deletable): return "delete with --prune"
        case .prune(let verdict): return PlanWording.prune(verdict)
        case .keep: return "keep"
        case .upload: return "upload"
        case .rejected: return "nothing: REJECTED by App Review; change the content"
        case .waitForReview(let then): return "wait for App Review" + (then.isEmpty ? "" : "; " + upcoming(then))
        case .proceed(let then): return then.isEmpty ? "nothing" : upcoming(then)
        }
    }

    static func upcoming(_ steps: [StatusEntry.Upcoming]) -> String {
        steps.map { step in
            switch step {
            case .becomesDefault(let pair, let now): (now ? "set as default " : "then becomes default ") + pair.description
            case .publishedInRule(let rule, let now): (now ? "published in rule " : "then published in rule ") + rule
            case .publishedWithGroup(let rule, let heldBy):
                "then published in rule \(rule) with its split group, which waits for " + heldBy.joined(separator: ", ")
            }
        }.joined(separator: "; ")
    }

    /// One section per content kind, in the kinds' declared order: "Messages", "Images".
    static func sections(_ report: StatusReport) -> [(String, [StatusEntry])] {
        ContentKind.allCases.map { kind in (kind.rawValue.prefix(1).uppercased() + kind.rawValue.dropFirst() + "s", report.content[kind] ?? []) }
    }

    struct Document: Encodable {
        var formatVersion: String
        var environment: Environment
        var bundleId: String
        var converged: Bool
        var health: Health
        /// Under `<kind>s` (`messages`, `images`).
        var content: [ContentKind: [Entry]]
        var publishedSnapshot: String?
        var realtimeURL: String?
        var realtimeURLAwaitingTest: String?
        var stateStore: String?
        var pendingWarnDays: Int
        var needsAttention: Int
        var inherited: [String]

        enum CodingKeys: String, CodingKey {
            case formatVersion = "format_version", environment, bundleId = "bundle_id", converged, health
            case publishedSnapshot = "published_snapshot", realtimeURL = "realtime_url"
            case stateStore = "state_store", pendingWarnDays = "pending_warn_days", needsAttention = "needs_attention", inherited
            case realtimeURLAwaitingTest = "realtime_url_awaiting_performance_test"
        }

        init(_ report: StatusReport) {
            formatVersion = report.formatVersion
            environment = report.environment
            bundleId = report.bundleId
            converged = report.converged
            health = report.health
            content = Dictionary(uniqueKeysWithValues: ContentKind.allCases.map { ($0, (report.content[$0] ?? []).map(Entry.init)) })
            publishedSnapshot = report.publishedSnapshot
            realtimeURLAwaitingTest = report.realtimeURLAwaitingTest
            realtimeURL = report.realtimeURL
            stateStore = report.stateStore
            pendingWarnDays = report.pendingWarnDays
            needsAttention = report.needingAttention.count + report.inherited.count
            inherited = report.inherited.map(\.description)
        }

        func encode(to encoder: any Encoder) throws {
            var entries = encoder.container(keyedBy: ContentKindKey.self)
            for (kind, list) in content { try entries.encode(list, forKey: ContentKindKey(kind)) }
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(formatVersion, forKey: .formatVersion)
            try container.encode(environment, forKey: .environment)
            try container.encode(bundleId, forKey: .bundleId)
            try container.encode(converged, forKey: .converged)
            try container.encode(health, forKey: .health)
            try container.encodeIfPresent(publishedSnapshot, forKey: .publishedSnapshot)
            try container.encodeIfPresent(realtimeURL, forKey: .realtimeURL)
            try container.encodeIfPresent(realtimeURLAwaitingTest, forKey: .realtimeURLAwaitingTest)
            try container.encodeIfPresent(stateStore, forKey: .stateStore)
            try container.encode(pendingWarnDays, forKey: .pendingWarnDays)
            try container.encode(needsAttention, forKey: .needsAttention)
            if !inherited.isEmpty { try container.encode(inherited, forKey: .inherited) }
        }
    }

    struct Entry: Encodable {
        var identifier: String
        var state: ReviewState
        var derived: Bool
        var name: String?
        var locale: String?
        var version: String?
        var inUse: [String]
        var next: String
        var stateSince: String?
        var stateAgeDays: Int?
        var needsAttention: Bool
        /// True for content an `ExternalMessage` or `ExternalImage` declares; absent otherwise.
        var external: Bool?

        enum CodingKeys: String, CodingKey {
            case identifier, state, derived, name, locale, version, inUse = "in_use", next
            case stateSince = "state_since", stateAgeDays = "state_age_days", needsAttention = "needs_attention"
            case external
        }

        init(_ entry: StatusEntry) {
            identifier = entry.identifier
            state = entry.state
            derived = entry.derived
            name = entry.name
            locale = entry.locale
            version = entry.version
            inUse = StatusView.inUse(entry)
            next = StatusView.next(entry.next)
            stateSince = entry.stateSince.map(StateTime.format)
            stateAgeDays = entry.stateAgeDays
            needsAttention = entry.needsAttention
            external = entry.external ? true : nil
        }
    }
}
