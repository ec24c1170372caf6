import Foundation
public import RetentionMessaging
public import RetentionMessagingModels
import Runtime

/// `retention-sync status`: every remote message and image with its review state, what the
/// manifests say it is, where it is in use, and what the next reconcile would do with it.
public struct StatusReport: Codable, Sendable, Hashable {
    public var formatVersion: String
    public var environment: Environment
    public var bundleId: String
    public var converged: Bool
    public var health: Health
    /// Sorted by name, locale, then identifier (content the manifests do not derive last).
    public var messages: [StatusEntry]
    /// Sorted the same way.
    public var images: [StatusEntry]
    public var publishedSnapshot: String?
    public var realtimeURL: String?

    enum CodingKeys: String, CodingKey {
        case formatVersion = "format_version", environment, bundleId = "bundle_id", converged, health, messages, images
        case publishedSnapshot = "published_snapshot", realtimeURL = "realtime_url"
    }
}

public struct StatusEntry: Codable, Sendable, Hashable {
    public var identifier: String
    /// `APPROVED`, `PENDING`, `REJECTED`, or `NOT_UPLOADED` for content the manifests derive that is not there yet.
    public var state: String
    /// Whether the current manifests derive this identifier.
    public var derived: Bool
    public var name: String?
    public var locale: String?
    /// Message content version, or the image size.
    public var version: String?
    /// `default <product>/<locale>`, `rule <flow>/<rule> (<locale>)`.
    public var inUse: [String]
    /// What the next reconcile would do with it.
    public var next: String

    enum CodingKeys: String, CodingKey {
        case identifier, state, derived, name, locale, version, inUse = "in_use", next
    }
}

public enum Status {
    public static func report(_ planned: PlanResult) -> StatusReport {
        let desired = planned.desired
        let remote = planned.remote
        let plan = planned.plan

        var inUse: [String: Set<String>] = [:]
        for (pair, id) in remote.defaults { inUse[id, default: []].insert("default \(pair)") }
        for rule in remote.publishedSnapshot?.rules ?? [] {
            for (locale, id) in rule.response.messageIdentifiers ?? [:] {
                inUse[id, default: []].insert("rule \(rule.id) (\(locale))")
            }
        }
        var imageUsers: [String: Set<String>] = [:]
        for message in desired.messages where inUse[message.identifier] != nil {
            for image in message.imageIdentifiers { imageUsers[image, default: []].insert("message \(message.label)") }
        }
        var upcoming: [String: [String]] = [:]
        for action in plan.actions {
            switch action.kind {
            case .setDefault:
                if let id = action.messageIdentifier {
                    upcoming[id, default: []].append(action.state == .ready ? "set as default \(action.productId ?? "")/\(action.locale ?? "")"
                                                    : "then becomes default \(action.productId ?? "")/\(action.locale ?? "")")
                }
            case .publishSnapshot:
                let now = action.state == .ready
                for rule in action.rules where [.added, .updated, .held, .leftOut].contains(rule.outcome) {
                    let waits = !now || rule.outcome == .held || rule.outcome == .leftOut
                    if let compiled = desired.rules.first(where: { $0.id == rule.id }) {
                        for id in Set((compiled.response.messageIdentifiers ?? [:]).values) {
                            upcoming[id, default: []].append((waits ? "then published in rule " : "published in rule ") + rule.id)
                        }
                    }
                }
            default:
                break
            }
        }
        let deletes = Set(plan.actions.filter { $0.kind == .deleteMessage || $0.kind == .deleteImage }.compactMap(\.identifier))
        let inventory = Dictionary(plan.inventory.map { ($0.identifier, $0) }, uniquingKeysWith: { a, _ in a })

        func next(derived: Bool, state: String, identifier: String) -> String {
            if deletes.contains(identifier) { return "delete (--prune)" }
            if !derived {
                return inventory[identifier].map { $0.prune == "deleted by --prune" ? "delete with --prune" : $0.prune } ?? "keep"
            }
            switch state {
            case "NOT_UPLOADED": return "upload"
            case MessageState.rejected.rawValue: return "nothing: REJECTED by App Review; change the content"
            case MessageState.pending.rawValue: return "wait for App Review" + (upcoming[identifier].map { "; " + $0.joined(separator: "; ") } ?? "")
            default: return upcoming[identifier]?.joined(separator: "; ") ?? "nothing"
            }
        }

        var messages: [StatusEntry] = []
        var seen = Set<String>()
        for message in desired.messages {
            seen.insert(message.identifier)
            let state = remote.messages[message.identifier]?.rawValue ?? "NOT_UPLOADED"
            messages.append(StatusEntry(identifier: message.identifier, state: state, derived: true, name: message.name,
                                        locale: message.locale, version: message.contentVersion,
                                        inUse: (inUse[message.identifier] ?? []).sorted(),
                                        next: next(derived: true, state: state, identifier: message.identifier)))
        }
        for (id, state) in remote.messages.sorted(by: { $0.key < $1.key }) where !seen.contains(id) {
            messages.append(StatusEntry(identifier: id, state: state.rawValue, derived: false, name: inventory[id]?.name,
                                        locale: nil, version: nil, inUse: (inUse[id] ?? []).sorted(),
                                        next: next(derived: false, state: state.rawValue, identifier: id)))
        }

        var images: [StatusEntry] = []
        seen = []
        for image in desired.images {
            seen.insert(image.identifier)
            let state = remote.images[image.identifier]?.state.rawValue ?? "NOT_UPLOADED"
            images.append(StatusEntry(identifier: image.identifier, state: state, derived: true,
                                      name: image.names.joined(separator: ", "), locale: nil, version: image.size.rawValue,
                                      inUse: (imageUsers[image.identifier] ?? []).sorted(),
                                      next: next(derived: true, state: state, identifier: image.identifier)))
        }
        for (id, image) in remote.images.sorted(by: { $0.key < $1.key }) where !seen.contains(id) {
            images.append(StatusEntry(identifier: id, state: image.state.rawValue, derived: false, name: nil, locale: nil,
                                      version: image.size?.rawValue, inUse: [],
                                      next: next(derived: false, state: image.state.rawValue, identifier: id)))
        }

        return StatusReport(formatVersion: Plan.currentFormatVersion, environment: desired.environment,
                            bundleId: desired.bundleId, converged: plan.converged, health: plan.health,
                            messages: messages, images: images, publishedSnapshot: remote.publishedSnapshot?.digest,
                            realtimeURL: remote.realtimeURL)
    }

    public static func text(_ report: StatusReport, color: Bool) -> String {
        let paint = Paint(enabled: color)
        var out: [String] = []
        out.append(paint.bold("Status (\(report.environment.rawValue)) of \(report.bundleId): \(report.converged ? "in sync" : "not in sync"), health \(report.health.rawValue)"))
        out.append("Published snapshot: \(report.publishedSnapshot ?? "none")")
        out.append("Realtime URL: \(report.realtimeURL ?? "none")")
        for (title, entries) in [("Messages", report.messages), ("Images", report.images)] {
            out.append("")
            out.append(paint.bold("\(title) (\(entries.count))"))
            for entry in entries {
                let label = entry.derived
                    ? [entry.name, entry.locale, entry.version].compactMap { $0 }.joined(separator: " ")
                    : "not derived by the manifests" + (entry.name.map { " (older version of \($0))" } ?? "")
                let stateColor: Paint.Color = entry.state == "APPROVED" ? .green : (entry.state == "REJECTED" ? .red : .yellow)
                out.append("  \(entry.identifier)  \(paint.color(stateColor, entry.state.padding(toLength: 12, withPad: " ", startingAt: 0)))  \(label)")
                if !entry.inUse.isEmpty { out.append("      in use: " + entry.inUse.joined(separator: ", ")) }
                out.append("      next: \(entry.next)")
            }
        }
        return out.joined(separator: "\n") + "\n"
    }

    public static func json(_ report: StatusReport) throws -> String {
        String(decoding: try CanonicalJSON.encodePretty(report), as: UTF8.self) + "\n"
    }
}
