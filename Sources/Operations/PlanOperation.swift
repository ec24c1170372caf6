public import Basics
public import CLIKit
public import Manifests
public import Reconciler
import StateStore
public import Views

/// What `plan` is asked: the environment, what it may delete, when a pending review warrants a
/// warning, and whether to read the evidence of the rules it changes.
public struct PlanRequest: Sendable {
    public var environment: ReconcileTarget
    public var pruneSettings: PruneSettings
    /// `--pending-warn-days`.
    public var warnDays: Int?
    /// `--results`.
    public var withResults: Bool
    /// `--as-of`: the results' time (an emulator's moved clock); nil for now.
    public var resultsAsOf: UTCTime?

    public init(environment: ReconcileTarget, pruneSettings: PruneSettings = PruneSettings(), warnDays: Int? = nil,
                withResults: Bool = false, resultsAsOf: UTCTime? = nil) {
        self.environment = environment
        self.pruneSettings = pruneSettings
        self.warnDays = warnDays
        self.withResults = withResults
        self.resultsAsOf = resultsAsOf
    }
}

/// A plan and everything its views show beside it.
public struct PlanOutcome: Sendable {
    /// What the reads found and what apply would do.
    public var planned: PlanResult
    /// The plan, the manifests it names, review times and evidence: what every format renders.
    public var presentation: PlanPresentation
    public var manifests: ManifestSet

    public var plan: Plan { planned.plan }
}

/// `plan` as a use case: reads the environment once and returns the plan with what its views show;
/// the command (or the demo) chooses the view and the exit code.
public enum PlanOperation {
    public static func plan(_ request: PlanRequest, context: CommandContext, provider: APIProvider) async throws(CommandError) -> PlanOutcome {
        var session = try ReconcileSession.open(request.environment, context: context, provider: provider)
        if let warnDays = request.warnDays { session.reconciler.pendingWarnDays = warnDays }
        let planned = try await session.plan(request.pruneSettings.planOptions)
        var presentation = PlanPresentation(plan: planned.plan, manifests: session.manifests)
        // How long App Review takes for this app, beside a plan whose content waits for it.
        if planned.plan.actions.contains(where: { $0.state == .blocked }), let document = planned.remote.state?.document {
            presentation.reviewTimes = ReviewTimes.measure(document, now: session.reconciler.clock.time(), observed: planned.reviewStates)
        }
        if request.withResults {
            presentation.evidence = await PlanEvidenceReading.read(
                planned.plan, environment: request.environment.environment,
                root: session.workspace.stateLocation.map { StateStores.backend(for: $0).root(of: $0) }, asOf: request.resultsAsOf,
                context: context)
        }
        return PlanOutcome(planned: planned, presentation: presentation, manifests: session.manifests)
    }

    /// 1 on an error of this configuration (content it takes up that App Review had already
    /// REJECTED, a limit, prune protection) and on a missing state, which apply refuses; with
    /// `detailed` (`--detailed-exitcode`), 2 when ready actions are pending, else 3 when a remote
    /// condition needs a person (content rejected after the main branch used it, a realtime URL
    /// waiting for a performance test); otherwise 0 — also when only waiting for review.
    public static func exitCode(_ plan: Plan, detailed: Bool) -> ExitCode {
        if plan.hasErrors || plan.missingState != nil { return .failure }
        if detailed && plan.hasReadyActions { return .changesPending }
        if detailed && plan.needsAttention { return .needsAttention }
        return .success
    }

    /// What the plan says on standard error after it is shown (so that JSON and Markdown on
    /// standard output stay whole): its error, a refusal apply would make, attention and warnings.
    public static func closingLines(_ plan: Plan) -> [String] {
        var lines: [String] = []
        if plan.hasErrors { lines.append("error: " + PlanView.errorLine(plan)) }
        if let missing = plan.missingState { lines.append("error: apply would refuse this plan: " + TerminalText.safe(missing.explanation)) }
        if plan.needsAttention { lines.append("attention: " + PlanView.attentionLine(plan)) }
        for warning in plan.warnings { lines.append("warning: " + TerminalText.safe(PlanWording.warning(warning))) }
        return lines
    }
}
