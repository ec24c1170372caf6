import Basics
import CLIKit
import Emulator
import Experiments
import Foundation
import Manifests
import Operations
import Reconciler
import RetentionMessagingModels

extension DemoStory {
    /// Step 13: the experiment ends through `promote` — the Flow file edited and its evidence printed,
    /// committed as a pull request would be; nothing is applied by the tool.
    func promoteTheWinner(group: String, events: URL) throws(CommandError) {
        heading(13, "End the experiment: promote writes the winner's change and its evidence, for a pull request a person merges")
        let now = emulator.now
        shell("retention-sync promote \(group) --env sandbox --metric kept24h --events manifests/.retention-sync --as-of \(now.formatted())")
        let manifests: ValidatedManifests
        do { manifests = try Workspace.load(directory: manifestsURL, displayPath: "manifests").0 } catch {
            throw CommandError("demo: the manifests do not load: \(error)")
        }
        let rules = manifests.rules.filter { $0.match.split?.group == group }
        let report: ResultsReport
        do {
            report = try ResultsOperation.report(events: events, environment: .sandbox, now: now, manifests: manifests, manifestsPath: "manifests")
        } catch {
            throw CommandError("demo: cannot read the events under \(events.path): \(error)")
        }
        let decision: Promotion.Decision
        do {
            decision = try Promotion.decide(report, flow: rules.first?.flow ?? "", group: group, rules: rules, metric: .kept24h)
        } catch {
            // At this size the arms may not be told apart: promote refuses, and says so.
            console.print("error: not promoting \(group): \(error)")
            console.print("nothing was edited: the experiment runs on until the evidence is there.")
            return
        }
        let flow = manifestsURL.appendingPathComponent("cancel-flow.yaml")
        let original: Data
        do { original = try Data(contentsOf: flow) } catch { throw CommandError("demo: cannot read \(flow.path): \(error)") }
        if let git {
            shell("git switch -c promote/\(group)")
            try git.run(["switch", "-q", "-c", "promote/\(group)"])
        }
        do {
            let text = try String(contentsOf: flow, encoding: .utf8)
            try Data(try Promotion.edit(text, file: "manifests/cancel-flow.yaml", winner: decision.winner, losers: decision.losers).utf8).write(to: flow)
        } catch {
            throw CommandError("demo: cannot promote \(decision.winner): \(error)")
        }
        console.write(decision.evidence.split(separator: "\n", omittingEmptySubsequences: false).map { "  " + $0 }.joined(separator: "\n"))
        let after = (try? Workspace.load(directory: manifestsURL, displayPath: "manifests").0.rules) ?? []
        try expect(!after.contains { $0.match.split?.group == group } && after.contains { $0.name == decision.winner },
                   "the promoted manifests to keep \(decision.winner) and no split group \(group)")
        if let git {
            shell("git commit -am \"Promote \(decision.winner)\" && git switch -")
            try git.commit("Promote \(decision.winner)", all: true)
            try git.run(["switch", "-q", "-"])
        } else {
            do { try original.write(to: flow) } catch { throw CommandError("demo: cannot restore \(flow.path): \(error)") }
        }
        console.print("promoted \(decision.winner): cancel-flow.yaml edited (\(decision.losers.joined(separator: ", ")) removed, its split gone) on the "
                      + "branch promote/\(group), with the evidence above as the pull request's body; main is unchanged until a person merges it, "
                      + "then the reconcile job applies it. Reverting the merge restores the experiment.")
    }
}
