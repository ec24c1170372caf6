import Basics
import Foundation
import Manifests
import Reconciler
import RetentionMessaging
import RetentionMessagingModels
import Runtime

/// `retention-sync status` as a person and a program read it.
enum StatusView {
    /// Coloured only where the console allows it.
    static func text(_ report: StatusReport, for console: Console) -> String { text(report, painter: Painter(console)) }

    static func text(_ report: StatusReport, painter: Painter) -> String {
        let safe = TerminalText.safe
        var out: [String] = []
        out.append(painter.bold(safe("Status (\(report.environment.rawValue)) of \(report.bundleId): \(report.converged ? "in sync" : "not in sync"), health \(report.health.rawValue)")))
        out.append(safe("Published snapshot: \(report.publishedSnapshot ?? "none")"))
        out.append(safe("Realtime URL: \(report.realtimeURL ?? "none")"))
        for (title, entries) in [("Messages", report.messages), ("Images", report.images)] {
            out.append("")
            out.append(painter.bold("\(title) (\(entries.count))"))
            for entry in entries {
                let label = entry.derived
                    ? [entry.name, entry.locale, entry.version].compactMap { $0 }.joined(separator: " ")
                    : "not derived by the manifests" + (entry.name.map { " (older version of \($0))" } ?? "")
                let color: Painter.Color = entry.state == .approved ? .green : (entry.state == .rejected ? .red : .yellow)
                out.append("  \(safe(entry.identifier))  \(painter.color(color, safe(entry.state.rawValue).padding(toLength: 12, withPad: " ", startingAt: 0)))  \(safe(label))")
                let uses = inUse(entry)
                if !uses.isEmpty { out.append("      in use: " + safe(uses.joined(separator: ", "))) }
                out.append("      next: \(safe(next(entry.next)))")
            }
        }
        return out.joined(separator: "\n") + "\n"
    }

    static func json(_ report: StatusReport) throws -> String {
        String(decoding: try CanonicalJSON.encodePretty(Document(report)), as: UTF8.self) + "\n"
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
            }
        }.joined(separator: "; ")
    }

    struct Document: Encodable {
        var formatVersion: String
        var environment: Environment
        var bundleId: String
        var converged: Bool
        var health: Health
        var messages: [Entry]
        var images: [Entry]
        var publishedSnapshot: String?
        var realtimeURL: String?

        enum CodingKeys: String, CodingKey {
            case formatVersion = "format_version", environment, bundleId = "bundle_id", converged, health, messages, images
            case publishedSnapshot = "published_snapshot", realtimeURL = "realtime_url"
        }

        init(_ report: StatusReport) {
            formatVersion = report.formatVersion
            environment = report.environment
            bundleId = report.bundleId
            converged = report.converged
            health = report.health
            messages = report.messages.map(Entry.init)
            images = report.images.map(Entry.init)
            publishedSnapshot = report.publishedSnapshot
            realtimeURL = report.realtimeURL
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

        enum CodingKeys: String, CodingKey {
            case identifier, state, derived, name, locale, version, inUse = "in_use", next
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
        }
    }
}
