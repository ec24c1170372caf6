public import Basics
public import CLIKit
import EventStore
import Experiments
import Foundation
import HTTPClient
public import Reconciler
public import RetentionMessagingModels
public import StateLocations
import StateStore
public import Views

/// `plan --results`: the current results of the rules (and their split groups) a plan publishes,
/// adds, updates, holds or removes, so that "promote arm B" is reviewed with its evidence beside it.
/// Evidence never fails a plan: without events, or when they cannot be read, it says so and the plan stands.
public enum PlanEvidenceReading {
    /// The `flow/rule` ids whose published form the plan changes.
    public static func touchedRules(_ plan: Plan) -> Set<String> {
        var touched: Set<String> = []
        for action in plan.actions {
            guard let compiled = action.change.as(SnapshotChange.self)?.compiled else { continue }
            for outcome in compiled.outcomes where outcome.outcome != .unchanged { touched.insert(outcome.id) }
        }
        return touched
    }

    /// The evidence for `plan`: read, never shown here (the plan's view words it).
    /// `asOf` reads them as of that time (an emulator's moved clock), as `results --as-of` does.
    public static func read(_ plan: Plan, environment: Environment, root: StateLocation?, asOf: UTCTime? = nil,
                            context: CommandContext) async -> PlanEvidence {
        let touched = touchedRules(plan)
        guard !touched.isEmpty else { return .noRuleChanged }
        guard let root else { return .noStateStore }
        let report: ResultsReport
        let now = asOf ?? SystemClock().time()
        do {
            let folder = try await ResultsOperation.localFolder(root, context: context)
            report = try ResultsReport.compute(source: FolderEventSource(root: folder), environment: environment.rawValue, flow: nil,
                                               since: nil, now: now, breakdown: nil, clock: ResultsOperation.clock(asOf: now)).restricted(to: touched)
        } catch {
            return .unreadable("\(error)")
        }
        guard !report.rows.isEmpty else { return .noDecisions(rules: touched.sorted()) }
        return .results(report, rules: touched.sorted())
    }
}
