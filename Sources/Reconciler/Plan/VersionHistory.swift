import RetentionMessagingModels
import StateStore

/// The versions of each message localization that the state recorded, newest first, and what an
/// identifier the manifests no longer derive is to them: a rollback target (one of the `keep`
/// most recent approved versions other than the current one that the main branch derived), a
/// pull request's submitted content, or an older or newer version.
/// Counting versions instead of days keeps plans a function of their inputs alone.
struct VersionHistory {
    struct Described {
        var label: InventoryItem.Label
        var name: String
    }

    private struct Key: Hashable {
        var name: String
        var locale: String?
        var productScope: String?
    }

    private var described: [String: Described] = [:]
    /// The identifiers kept as rollback targets.
    private(set) var targets: Set<String> = []

    init(records: [ContentRecord], desired: DesiredState, remote: RemoteState, keep: Int) {
        let derived = Set(desired.messages.map(\.identifier))
        var groups: [Key: [ContentRecord]] = [:]
        for record in records where record.kind == .message {
            groups[Key(name: record.name, locale: record.locale, productScope: record.productScope), default: []].append(record)
        }
        for (key, versions) in groups {
            let newestFirst = versions.sorted { ($0.firstUploadedAt, $0.identifier) > ($1.firstUploadedAt, $1.identifier) }
            let current = newestFirst.first { derived.contains($0.identifier) }
            let label = key.locale.map { "\(key.name) (\($0))" } ?? key.name
            var kept = 0
            for record in newestFirst where !derived.contains(record.identifier) {
                // Only what the main branch derived is a version a revert would use: a pull
                // request's content that was never merged is governed by the prune grace period.
                if record.submissions != nil && record.mergedAt == nil {
                    described[record.identifier] = Described(label: .submitted, name: label)
                } else if kept < keep, remote.messages[record.identifier] == .approved {
                    kept += 1
                    targets.insert(record.identifier)
                    described[record.identifier] = Described(label: .rollbackTarget, name: label)
                } else if let current, record.firstUploadedAt > current.firstUploadedAt {
                    described[record.identifier] = Described(label: .newerVersion, name: label)
                } else {
                    described[record.identifier] = Described(label: .olderVersion, name: label)
                }
            }
        }
    }

    func describe(_ identifier: String) -> Described? { described[identifier] }

    /// The versions the state of a plan's remote recorded, keeping as many as its options say.
    init(_ context: PlanContext) {
        self.init(records: context.remote.state?.document?.content ?? [], desired: context.desired, remote: context.remote,
                  keep: context.options.rollbackVersions)
    }
}
