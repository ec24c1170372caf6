import Foundation
import Manifests
import Reconciler
import RetentionMessaging
import RetentionMessagingModels

/// Manifests loaded and derived for one environment, with a reconciler bound to its API client
/// and snapshot store: what `plan`, `apply` and `status` start from.
struct ReconcileSession: Sendable {
    var options: EnvironmentOptions
    var manifests: ManifestSet
    var desired: DesiredState
    var reconciler: Reconciler

    static func open(_ options: EnvironmentOptions, context: CommandContext, provider: APIProvider) throws(CommandError) -> ReconcileSession {
        let manifests = try options.loadManifests(context: context)
        let desired = try EnvironmentOptions.derive(manifests, environment: options.environment)
        let api = try provider.make(options.environment, desired.bundleId, options, context)
        let store = options.store(for: desired, context: context)
        if store == nil && !desired.rules.isEmpty {
            context.console.error("warning: the flows are not published in \(options.environment.rawValue): no snapshot store "
                                  + "(set environments.\(options.environment.rawValue).snapshotPath in the App manifest, or pass --snapshot-store FILE)")
        }
        return ReconcileSession(options: options, manifests: manifests, desired: desired,
                                reconciler: Reconciler(api: api, store: store))
    }

    func plan(_ planOptions: PlanOptions) async throws(CommandError) -> PlanResult {
        do {
            return try await reconciler.plan(desired, options: planOptions)
        } catch let error as ReconcilerError {
            throw CommandError(error.description)
        } catch {
            throw CommandError("reading \(options.environment.rawValue) failed: \(error)")
        }
    }
}

/// Writes text to a file given on the command line (see `OutputFile` for what is never replaced).
func writeFile(_ text: String, to path: String, context: CommandContext) throws(CommandError) {
    try OutputFile.write(text, to: path, context: context)
}
