import Basics
import CLIKit
import Experiments
import Foundation
import Manifests
import Operations
import Reconciler
import RetentionMessagingModels
import StateLocations

/// `retention-sync promote GROUP`: the manifest change that ends a split group whose results name a
/// winner, and its evidence as a pull request body. It edits the Flow file in the working tree and
/// nothing else: a person reviews and merges it; the reconcile job applies it.
struct PromoteCommand: ParsedCommand {
    static let name = "promote"
    static let summary = "Write the manifest change that ends a split group its results name a winner of"
    static let positional: Positional? = Positional("GROUP")
    static let env = Option("--env", value: "ENV", of: Environment.self, help: ["The environment whose results decide"]).required()
    static let manifests = Option.manifests(help: ["The manifest directory holding the Flow to edit"])
    static let events = Option.events
    static let flow = Option("--flow", value: "NAME", help: ["The flow of the group, when several flows have a group of that name"])
    static let metric = Option("--metric", value: "METRIC", choices: Promotion.Metric.allCases.map(\.rawValue), default: "renewed", help: [
        "What decides: renewed, kept24h, or paid (paid per customer, every currency agreeing)",
    ])
    static let asOf = Option("--as-of", value: "DATE", of: DateArgument.self, help: ["Read the results as of this time instead of now"])
    static let evidence = Option("--evidence", value: "FILE", help: [
        "Write the evidence (a pull request body, Markdown) to FILE instead of standard output",
    ])

    static let helpPage = HelpPage(
        about: """
        Reads the results of split group GROUP as `results` does and, when its current period names
        one winner on --metric — one arm distinguishably better than the control and every other arm
        distinguishably worse, or every arm worse than the control — with the sample-ratio check passed
        and no clock or key problem in the events, edits the Flow file: the winner's split is removed
        (it answers every customer the group had) and the other arms' rules are removed; comments and
        every other line stay as written. It prints the evidence, ready to be a pull request's body.
        It refuses, saying why, when the evidence is not there. Run again after merging, it finds no
        group and changes nothing. It never applies or publishes. When an arm crosses one of the
        group's guardrails (guardrails: in the Flow), it proposes stopping that arm instead, whatever
        the verdicts: the arm's rule is removed and the control takes its share.
        """,
        options: [env, manifests, events, flow, metric, asOf, evidence], column: 22,
        footer: """
        Exit 0: the Flow file was edited, or there is no such group (promoted already). Exit 1: not
        promoted, with the reason (the evidence is not there yet, or the file cannot be edited safely).
        Exit 3: a guardrail was crossed and the Flow file was edited to stop the arm: a person should
        look now.
        """)

    struct Options: CommandOptions {
        var group: String?
        var manifestsPath: String
        var environment: Environment
        var events: StateLocation?
        var flow: String?
        var metric: Promotion.Metric
        var asOf: DateArgument?
        var evidence: String?

        func validate() throws(CommandError) {
            guard group != nil else { throw CommandError("promote needs the split group: retention-sync promote GROUP --env ENV", exitCode: .usage) }
        }
    }

    static func parse(_ arguments: inout Arguments, context: CommandContext) throws(CommandError) -> Options {
        let metricText = try arguments.value(Self.metric) ?? "renewed"
        guard let metric = Promotion.Metric(rawValue: metricText) else {
            throw CommandError("--metric takes renewed, kept24h or paid, not \(metricText)", exitCode: .usage)
        }
        let group = arguments.positional()
        return Options(group: group, manifestsPath: try arguments.value(Self.manifests, as: String.self) ?? Option.defaultManifests,
                       environment: try arguments.required(Self.env, as: Environment.self),
                       events: try arguments.value(Self.events, as: StateLocation.self, relativeTo: context.currentDirectory),
                       flow: try arguments.value(Self.flow), metric: metric, asOf: try arguments.value(Self.asOf, as: DateArgument.self),
                       evidence: try arguments.value(Self.evidence))
    }

    static func run(_ options: Options, context: CommandContext) async throws -> ExitCode {
        let group = options.group ?? ""
        let loaded = Result { () throws(Workspace.Failure) in
            try Workspace.load(directory: context.url(options.manifestsPath), displayPath: options.manifestsPath)
        }
        let manifests = try EnvironmentOptions.workspaceStep(context: context) { () throws(Workspace.Failure) in try loaded.get() }
        let rules = manifests.rules.filter { $0.match.split?.group == group && (options.flow == nil || $0.flow == options.flow) }
        let flows = Set(rules.map(\.flow))
        guard let flow = flows.first else {
            context.console.print("nothing to promote: no split group \(group) in \(options.manifestsPath)\(options.flow.map { " (flow \($0))" } ?? "") — "
                                  + "promoted already, or a misspelt name")
            return .success
        }
        guard flows.count == 1 else {
            throw CommandError("split group \(group) is in flows \(flows.sorted().joined(separator: ", ")): name one with --flow", exitCode: .usage)
        }
        let report = try await Self.results(options, manifests: manifests, loaded: loaded, context: context)
        let decision: Promotion.Decision
        do {
            decision = try Promotion.decide(report, flow: flow, group: group, rules: rules, metric: options.metric)
        } catch {
            throw CommandError("not promoting \(group): \(error.description)")
        }
        let file = rules[0].location.file
        let edited = try Self.edit(file, decision: decision, options: options, context: context)
        do {
            try Data(edited.utf8).write(to: context.url(file), options: .atomic)
        } catch {
            throw CommandError("cannot write \(file): \(error.localizedDescription)")
        }
        if let path = options.evidence {
            do {
                try Data(decision.evidence.utf8).write(to: context.url(path), options: .atomic)
            } catch {
                throw CommandError("the promotion was written to \(file), but the evidence cannot be written to \(path): \(error.localizedDescription)")
            }
        } else {
            context.console.write(decision.evidence)
        }
        if decision.guardrail {
            context.console.error("guardrail crossed in \(flow) / \(group): \(file) edited, \(decision.losers.joined(separator: ", ")) stopped and "
                                  + "\(decision.winner) given \(decision.controlPercent.map { "\(ResultsReport.percentText($0))% of the group" } ?? "the whole group")"
                                  + "; review it, commit it on a branch and open a pull request (the plan preview runs on it)")
            return .needsAttention
        }
        context.console.error("promoted \(decision.winner) in \(flow) / \(group): \(file) edited"
                              + (decision.losers.isEmpty ? "" : ", \(decision.losers.joined(separator: ", ")) removed")
                              + "; review it, commit it on a branch and open a pull request (the plan preview runs on it)")
        return .success
    }

    /// The report `results` would print for the environment, checked against the manifests.
    private static func results(_ options: Options, manifests: ValidatedManifests,
                                loaded: Result<(ValidatedManifests, [Diagnostic]), Workspace.Failure>,
                                context: CommandContext) async throws -> ResultsReport {
        let location = try options.events ?? ResultsCommand.defaultRoot(loaded, environment: options.environment, context: context)
        let root = try await ResultsOperation.localFolder(location, context: context)
        let now = options.asOf?.time ?? SystemClock().time()
        do {
            return try ResultsOperation.report(events: root, environment: options.environment, now: now, manifests: manifests,
                                               manifestsPath: options.manifestsPath)
        } catch {
            throw CommandError("cannot read the events under \(root.path): \(error)")
        }
    }

    /// The Flow file's edited text, checked: the manifests with it must be valid and hold no such group.
    private static func edit(_ file: String, decision: Promotion.Decision, options: Options, context: CommandContext) throws(CommandError) -> String {
        let text: String
        do {
            text = try String(contentsOf: context.url(file), encoding: .utf8)
        } catch {
            throw CommandError("cannot read \(file): \(error.localizedDescription)")
        }
        let edited: String
        do {
            edited = try Promotion.edit(text, file: file, winner: decision.winner, losers: decision.losers, winnerPercent: decision.controlPercent,
                                        group: decision.group)
        } catch {
            throw CommandError("not promoting \(decision.group): \(error)")
        }
        // The edit must leave valid manifests without the group, checked on a copy before the file is touched.
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("retention-sync-promote-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: copy) }
        do {
            try FileManager.default.copyItem(at: context.url(options.manifestsPath), to: copy)
            let relative = String(file.dropFirst(options.manifestsPath.count).drop { $0 == "/" })
            try Data(edited.utf8).write(to: copy.appendingPathComponent(relative))
            let (checked, _) = try Workspace.load(directory: copy, displayPath: options.manifestsPath)
            let left = checked.rules.filter { $0.match.split?.group == decision.group && $0.flow == decision.flow }
            let whole = abs(left.reduce(0) { $0 + ($1.match.split?.percent ?? 0) } - 100) < 0.001
            guard decision.controlPercent == nil ? left.isEmpty : whole && !left.contains(where: { decision.losers.contains($0.name) }) else {
                throw CommandError("not promoting \(decision.group): the edited \(file) is not the change intended; edit it by hand")
            }
        } catch let error as CommandError {
            throw error
        } catch {
            throw CommandError("not promoting \(decision.group): the edited \(file) would not be valid manifests (\(error)); edit it by hand")
        }
        return edited
    }
}
