public import Basics
import Foundation
import StateStore

/// Of the defaults a plan would delete, those that show a message the state records as adopted
/// (an `ExternalMessage`, as `import` writes them, found at Apple by an apply), and when that was.
public struct AdoptedDefaults: Sendable, Hashable {
    public var count: Int
    /// The earliest and the latest adoption among them (equal when all were adopted in one apply).
    public var firstAdoptedAt: UTCTime
    public var lastAdoptedAt: UTCTime

    public init(count: Int, firstAdoptedAt: UTCTime, lastAdoptedAt: UTCTime) {
        self.count = count
        self.firstAdoptedAt = firstAdoptedAt
        self.lastAdoptedAt = lastAdoptedAt
    }
}

extension Planner {
    /// A plan that deletes more than `PlanOptions.pruneProtectionShare` of the defaults Apple holds for
    /// the declared pairs is refused without `allowDeleteDefaults`: losing a manifest (an imported file removed
    /// in a merge) must not stop every customer's default message on the next apply. Unlike a prune,
    /// these deletions need no flag to be planned, so the guard is what stands between a lost file and them.
    static func protectDefaultsFromMassDelete(_ actions: inout [PlanAction], desired: DesiredState, remote: RemoteState,
                                              options: PlanOptions) {
        guard !options.allowDeleteDefaults else { return }
        let deletes = actions.indices.filter { actions[$0].kind == .deleteDefault && actions[$0].state == .ready }
        let held = desired.declaredPairs.filter { remote.defaults[$0] != nil }.count
        guard !deletes.isEmpty, Double(deletes.count) > PlanOptions.pruneProtectionShare * Double(held) else { return }
        let current = deletes.compactMap { actions[$0].change.as(DefaultChange.self) }.compactMap { change -> String? in
            if case .delete(_, let current) = change { return current }
            return nil
        }
        let adopted = adoptedDefaults(showing: current, document: remote.state?.document)
        for index in deletes {
            actions[index].state = .error
            actions[index].error = .defaultsProtection(deleting: deletes.count, of: held, adopted: adopted)
        }
    }

    /// How many of the defaults that show `messages` (one entry per default) show adopted content, and when it was adopted.
    static func adoptedDefaults(showing messages: [String], document: StateDocument?) -> AdoptedDefaults? {
        let dates = messages.compactMap { document?.adoption(of: $0)?.adoptedAt }
        guard let first = dates.min(), let last = dates.max() else { return nil }
        return AdoptedDefaults(count: dates.count, firstAdoptedAt: first, lastAdoptedAt: last)
    }
}
