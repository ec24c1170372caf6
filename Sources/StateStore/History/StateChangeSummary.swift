import Foundation
import RetentionMessagingModels
import Runtime

/// One line saying what a version of the state document changed from the one before it, for
/// `state history`: the facts a person scans for (a publish, uploads, review decisions, defaults,
/// the realtime URL), in a fixed order.
public enum StateChangeSummary {
    public static func line(from previous: StateDocument?, to current: StateDocument) -> String {
        guard let previous else { return "first version" + (current.snapshot.map { ": published \(short($0.digest))" } ?? "") }
        var parts: [String] = []
        if previous.snapshot?.digest != current.snapshot?.digest {
            parts.append(current.snapshot.map { "published \(short($0.digest))" } ?? "unpublished the snapshot")
        }
        let before = Dictionary(previous.content.map { ($0.identifier, $0) }, uniquingKeysWith: { a, _ in a })
        let after = Set(current.content.map(\.identifier))
        let added = current.content.filter { before[$0.identifier] == nil }
        let messages = added.filter { $0.kind == .message }.count
        let images = added.count - messages
        if messages > 0 { parts.append("uploaded \(messages) message\(messages == 1 ? "" : "s")") }
        if images > 0 { parts.append("uploaded \(images) image\(images == 1 ? "" : "s")") }
        var decisions: [String: Int] = [:]
        // Review states newly observed on content that was already recorded.
        for record in current.content {
            guard let old = before[record.identifier], record.reviewStates.count > old.reviewStates.count,
                  let state = record.reviewStates.last?.state else { continue }
            decisions[state, default: 0] += 1
        }
        if !decisions.isEmpty {
            parts.append(decisions.sorted { $0.key < $1.key }.map { "\($0.value) now \($0.key)" }.joined(separator: ", "))
        }
        let removed = previous.content.filter { !after.contains($0.identifier) }.count
        if removed > 0 { parts.append("removed \(removed) record\(removed == 1 ? "" : "s")") }
        let changedDefaults = Set(current.defaults.map { "\($0.productId)/\($0.locale)=\($0.messageIdentifier ?? "")" })
            .symmetricDifference(previous.defaults.map { "\($0.productId)/\($0.locale)=\($0.messageIdentifier ?? "")" })
        let defaultPairs = Set(changedDefaults.map { $0.split(separator: "=", maxSplits: 1)[0] }).count
        if defaultPairs > 0 { parts.append("\(defaultPairs) default\(defaultPairs == 1 ? "" : "s") set") }
        if previous.realtimeURL?.url != current.realtimeURL?.url {
            parts.append(current.realtimeURL?.url == nil ? "realtime URL removed" : "realtime URL set")
        }
        if previous.performanceTest != current.performanceTest, let test = current.performanceTest {
            parts.append("performance test \(test.result.result?.rawValue ?? "seen")")
        }
        return parts.isEmpty ? "no content change (review states re-checked)" : parts.joined(separator: "; ")
    }

    /// `sha256:0123456789ab` — enough to tell versions apart in a list.
    static func short(_ digest: String) -> String {
        digest.hasPrefix("sha256:") ? String(digest.prefix(19)) : String(digest.prefix(12))
    }
}
