import Foundation
import Reconciler
import RetentionMessaging
import RetentionMessagingModels
import Runtime

struct ApplyCommand: Command {
    static let name = "apply"
    static let summary = "Make the environment match the manifests"
    static let planOption = Option("--plan", value: "FILE", completion: .file, help: ["Apply this saved plan"])
    static let prune = Option("--prune", help: ["Delete remote content that nothing derives or uses"])
    static let pruneForce = Option("--prune-force", help: ["Allow a prune that deletes more than 25% of the remote content"])
    static let report = Option("--report", value: "FILE", completion: .file,
                               help: ["Write a JSON report of what was done (also after a failure)"])
    static let autoApprove = Option("--auto-approve", help: [
        "Do not ask for confirmation (only a terminal is asked; CI never is)",
    ])

    static let helpPage = HelpPage(
        usage: "Usage: retention-sync apply --env sandbox|production [--plan FILE] [options]",
        about: """
        Without --plan, plans and applies in one go (the plan is printed first). With --plan, applies
        a plan saved by 'plan --out FILE', and refuses when the manifests changed since, or when the
        remote changed so that the plan no longer holds; actions already done are skipped.
        Order: images, messages, (sandbox: re-list to use auto-approved content at once), defaults,
        the runtime snapshot, the realtime URL, then deletions (only with --prune). Blocked actions
        wait for App Review and are retried by the next run. A run that stops half-way is finished
        by running apply again.
        """,
        options: EnvironmentOptions.options + [planOption, prune, pruneForce, report, autoApprove],
        footer: EnvironmentOptions.credentialsHelp)

    static func run(_ arguments: inout Arguments, context: CommandContext) async throws -> ExitCode {
        try await execute(&arguments, context: context, provider: .live)
    }

    static func execute(_ arguments: inout Arguments, context: CommandContext, provider: APIProvider,
                        printPlan: Bool = true) async throws(CommandError) -> ExitCode {
        let options = try EnvironmentOptions.parse(&arguments, context: context)
        let planPath = try arguments.value(Self.planOption)
        let reportPath = try arguments.value(Self.report)
        let prune = arguments.flag(Self.prune)
        let pruneForce = arguments.flag(Self.pruneForce)
        let autoApprove = arguments.flag(Self.autoApprove)
        try arguments.finish()

        var saved: SavedPlan?
        if let planPath {
            if prune || pruneForce {
                throw CommandError("--prune and --prune-force do not go with --plan: the saved plan decides what is deleted "
                                   + "(make it with 'plan --prune --out FILE')", exitCode: .usage)
            }
            saved = try readSavedPlan(planPath, context: context)
        }

        let session = try ReconcileSession.open(options, context: context, provider: provider)
        let planned = try await session.plan(saved?.planOptions ?? PlanOptions(prune: prune || pruneForce, pruneForce: pruneForce))
        var allowed: Set<ActionID>?
        if let saved, let planPath {
            do {
                allowed = try SavedPlan.check(saved: saved, fresh: planned.plan)
            } catch {
                throw CommandError("\(planPath): \(PlanWording.describe(error))")
            }
            context.console.print("Applying the saved plan \(planPath).")
        }
        if printPlan {
            context.console.write(PlanView.text(planned.plan, for: context.console))
            context.console.print("")
        }
        if planPath == nil {
            try Confirmation.confirmApply(actions: planned.plan.actions.filter { $0.state == .ready }.count,
                                          environment: options.environment.rawValue, autoApprove: autoApprove, console: context.console)
        }

        let report = try await perform(planned, session: session, allowed: allowed, reportPath: reportPath, context: context)
        return planned.plan.hasErrors || report.count(.error) > 0 ? .failure : .success
    }

    /// Runs the apply with progress lines, writes the report, and prints the outcome.
    static func perform(_ planned: PlanResult, session: ReconcileSession, allowed: Set<ActionID>?, reportPath: String?,
                        context: CommandContext) async throws(CommandError) -> ApplyReport {
        let view = ApplyProgressView(console: context.console)
        if !planned.plan.hasReadyActions {
            view.nothingToApply(planned.plan)
            let report = ApplyReport(environment: planned.desired.environment, completed: true,
                                     publishedSnapshot: planned.remote.publishedSnapshot?.digest)
            if let reportPath { try writeReport(report, to: reportPath, context: context) }
            return report
        }
        view.starting(planned)
        let report: ApplyReport
        do {
            report = try await session.reconciler.apply(planned, allowedActions: allowed, progress: view.show)
        } catch {
            if let reportPath { try writeReport(error.report, to: reportPath, context: context) }
            throw CommandError(error.message)
        }
        if let reportPath { try writeReport(report, to: reportPath, context: context) }
        view.finished(report)
        return report
    }

    static func writeReport(_ report: ApplyReport, to path: String, context: CommandContext) throws(CommandError) {
        let text: String
        do { text = String(decoding: try CanonicalJSON.encodePretty(report), as: UTF8.self) + "\n" } catch {
            throw CommandError("cannot encode the apply report: \(error)")
        }
        try writeFile(text, to: path, context: context)
    }
}
