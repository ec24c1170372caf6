import Foundation
import Reconciler
import RetentionMessagingModels

/// Remembers, next to the manifests, that Apple refused the production realtime URL for want of a
/// passed sandbox performance test, so that later plans show it waiting (exit 0) instead of ready.
/// A passed `performance-test` or a successful set clears it. It is the one place that would move
/// into a shared state document.
struct GoLiveRecord: Sendable {
    let url: URL

    /// `<manifests>/.retention-sync/production-realtime-url.json`.
    init(manifests: URL) {
        url = manifests.appendingPathComponent(".retention-sync/production-realtime-url.json")
    }

    private struct Document: Codable {
        var refusedURL: String
        var reason: String
    }

    /// The refused URL, or nil.
    func read() -> String? {
        guard let data = FileManager.default.contents(atPath: url.path) else { return nil }
        return (try? JSONDecoder().decode(Document.self, from: data))?.refusedURL
    }

    func recordRefusal(of realtimeURL: String) throws(CommandError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        do {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            let data = try encoder.encode(Document(refusedURL: realtimeURL, reason: "403 4030026: no sandbox performance test has passed"))
            try data.write(to: url, options: .atomic)
        } catch {
            throw CommandError("cannot write \(url.path): \(error.localizedDescription)")
        }
    }

    func clear() {
        try? FileManager.default.removeItem(at: url)
    }

    /// Keeps the record true after an apply: refused → recorded, set → cleared.
    func update(after report: ApplyReport, plan: Plan) throws(CommandError) {
        guard report.environment == .production else { return }
        for result in report.results where result.kind == .setRealtimeURL {
            guard let action = plan.actions.first(where: { $0.id.rawValue == result.id }),
                  case .setRealtimeURL(let target, _) = action.change else { continue }
            if result.isRealtimeURLAwaitingTest {
                try recordRefusal(of: target)
            } else if result.outcome == .done {
                clear()
            }
        }
    }
}
