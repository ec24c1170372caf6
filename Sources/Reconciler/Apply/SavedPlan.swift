public import Foundation
import RetentionMessaging
import RetentionMessagingModels

/// Reading and checking a plan saved with `plan --out`.
public enum SavedPlan {
    public static func load(_ data: Data) throws(ReconcilerError) -> Plan {
        let plan: Plan
        do {
            plan = try JSONDecoder().decode(Plan.self, from: data)
        } catch {
            throw .invalidPlan("not a retention-sync plan file (\(error))")
        }
        guard plan.formatVersion.split(separator: ".").first == Plan.currentFormatVersion.split(separator: ".").first else {
            throw .invalidPlan("format_version \(plan.formatVersion) is not supported (this version reads \(Plan.currentFormatVersion))")
        }
        return plan
    }

    /// Checks a saved plan against a fresh one made now, and returns the action ids apply may run.
    /// Refuses when the manifests changed, or when the remote changed so that the fresh plan needs
    /// an action the saved plan did not contain. Saved actions the fresh plan no longer needs are
    /// already done and are skipped.
    public static func check(saved: Plan, fresh: Plan) throws(ReconcilerError) -> Set<String> {
        guard saved.environment == fresh.environment else {
            throw .stalePlan("it was made for \(saved.environment.rawValue), not \(fresh.environment.rawValue)")
        }
        guard saved.bundleId == fresh.bundleId else {
            throw .stalePlan("it was made for \(saved.bundleId), not \(fresh.bundleId)")
        }
        guard saved.fingerprints.manifests == fresh.fingerprints.manifests else {
            throw .stalePlan("the manifests changed since the plan was made (fingerprint \(saved.fingerprints.manifests) → \(fresh.fingerprints.manifests))")
        }
        // Actions the saved plan held as errors are never run, whatever the remote says now.
        let allowed = Set(saved.actions.filter { $0.state != .error }.map(\.id))
        let unexpected = fresh.actions.filter { $0.state == .ready && !allowed.contains($0.id) }
        if !unexpected.isEmpty {
            throw .stalePlan("the remote changed since the plan was made; it would now also need: "
                             + unexpected.map(\.title).joined(separator: "; "))
        }
        return allowed
    }
}
