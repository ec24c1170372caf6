import Basics
import Foundation
import Manifests
import Reconciler
import RetentionMessaging
import RetentionMessagingModels
import Runtime

/// What a person watching an apply sees: one line per finished action, the re-list, the outcome.
struct ApplyProgressView: Sendable {
    var console: Console

    func starting(_ planned: PlanResult) {
        console.print("Applying to \(planned.desired.environment.rawValue):")
    }

    func nothingToApply(_ plan: Plan) {
        console.print(plan.converged ? "No changes. Nothing to apply." : "Nothing to apply now.")
    }

    func show(_ event: ApplyEvent) {
        switch event {
        case .finished(let result, let done, let total):
            guard result.outcome != .blocked else { return }
            console.print(TerminalText.safe("  [\(done)/\(total)] \(result.title): \(Self.outcomeText(result))"))
        case .relisted(let messages, let images):
            console.print("  re-listed: \(messages) message\(messages == 1 ? "" : "s") and \(images) image\(images == 1 ? "" : "s") approved since upload")
        }
    }

    func finished(_ report: ApplyReport) {
        let blocked = report.count(.blocked)
        console.print("")
        console.print("Apply complete: \(report.count(.done)) done, \(report.count(.alreadyDone)) already there, \(blocked) blocked"
                      + (blocked > 0 ? " (retried by the next reconcile once App Review approves)" : "")
                      + (report.count(.error) > 0 ? ", \(report.count(.error)) in error" : "")
                      + "; \(report.requests.total) API request\(report.requests.total == 1 ? "" : "s").")
    }

    static func outcomeText(_ result: ActionResult) -> String {
        switch result.outcome {
        case .done: "done"
        case .alreadyDone: "already there"
        case .skipped: "skipped (\(result.detail ?? ""))"
        case .failed: "FAILED (\(result.detail ?? ""))"
        case .blocked: "blocked"
        case .error: "error (\(result.detail ?? ""))"
        }
    }
}
