import Foundation
import Manifests
import Reconciler
import RetentionMessaging
import RetentionMessagingModels

/// Manifests loaded and derived for one environment, with a reconciler bound to its API client
/// and snapshot store: the one service `plan`, `apply` and `status` call.
struct ReconcileSession: Sendable {
    var options: EnvironmentOptions
    var workspace: Workspace
    var reconciler: Reconciler

    var manifests: ManifestSet { workspace.manifests }
    var desired: DesiredState { workspace.desired }

    static func open(_ options: EnvironmentOptions, context: CommandContext, provider: APIProvider) throws(CommandError) -> ReconcileSession {
        let workspace = try options.openWorkspace(context: context)
        let api = try provider.make(options.environment, workspace.desired.bundleId, options, context)
        if workspace.flowsUnpublished {
            context.console.error(DiagnosticsView.flowsUnpublished(options.environment.rawValue))
        }
        return ReconcileSession(options: options, workspace: workspace, reconciler: Reconciler(api: api, store: workspace.store))
    }

    func plan(_ planOptions: PlanOptions) async throws(CommandError) -> PlanResult {
        do {
            return try await reconciler.plan(desired, options: planOptions)
        } catch let error as ReconcilerError {
            throw CommandError(PlanWording.describe(error))
        } catch {
            throw CommandError("reading \(options.environment.rawValue) failed: \(error)")
        }
    }
}

/// Writes text to a file given on the command line (see `OutputFile` for what is never replaced).
func writeFile(_ text: String, to path: String, context: CommandContext) throws(CommandError) {
    try OutputFile.write(text, to: path, context: context)
}
