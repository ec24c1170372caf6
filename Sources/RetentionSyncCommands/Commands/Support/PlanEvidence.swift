import Basics
import CLIKit
import EventStore
import Experiments
import Foundation
import HTTPClient
import Reconciler
import RetentionMessagingModels
import StateLocations
import StateStore

/// `plan --results`: the current results of the rules (and their split groups) a plan publishes,
/// adds, updates, holds or removes, so that "promote arm B" is reviewed with its evidence beside it.
/// Evidence never fails a plan: without events, or when they cannot be read, it says so and the plan stands.
enum PlanEvidence {
    /// The `flow/rule` ids whose published form the plan changes.
    static func touchedRules(_ plan: Plan) -> Set<String> {
        var touched: Set<String> = []
        for action in plan.actions {
            guard let compiled = action.change.as(SnapshotChange.self)?.compiled else { continue }
            for outcome in compiled.outcomes where outcome.outcome != .unchanged { touched.insert(outcome.id) }
        }
        return touched
    }

    static func show(_ plan: Plan, format: PlanFormat, environment: Environment, root: StateLocation?, context: CommandContext) async {
        let touched = touchedRules(plan)
        let markdown = format == .markdown
        func say(_ text: String) {
            context.console.print(markdown ? "\n#### Evidence\n\n" + text : "\nEvidence: " + text)
        }
        guard !touched.isEmpty else {
            say("this plan changes no published rule, so there are no results to show.")
            return
        }
        guard let root else {
            say("no state store, so no events to read.")
            return
        }
        let report: ResultsReport
        do {
            let folder = try await ResultsCommand.localFolder(root, context: context)
            report = try ResultsReport.compute(source: FolderEventSource(root: folder), environment: environment.rawValue, flow: nil,
                                               since: nil, now: SystemClock().date(), breakdown: nil).restricted(to: touched)
        } catch {
            say("the events beside the state could not be read (\(error)); the plan above stands.")
            return
        }
        guard !report.rows.isEmpty else {
            say("no decisions are recorded yet for \(touched.sorted().joined(separator: ", ")) (serve records them when RETENTION_SYNC_PSEUDONYM_SECRET is set).")
            return
        }
        if markdown {
            context.console.print("\n#### Evidence: current results of the rules this change touches\n")
            context.console.write(report.markdown())
        } else {
            context.console.print("\nEvidence: current results of the rules this change touches")
            context.console.write(report.text())
        }
    }
}
