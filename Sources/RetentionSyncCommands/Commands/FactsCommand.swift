import Basics
import CLIKit
import EventStore
import Experiments
import Foundation
import Manifests
import Operations
import Reconciler
import RetentionMessagingModels
import StateLocations
import StateStore

/// `retention-sync facts publish|show`: the customer facts `match.customer` rules read, folded from
/// the outcome events and published beside them for every `serve` replica.
struct FactsCommand: ParsedCommand {
    static let name = "facts"
    static let summary = "Publish the customer facts serve targets by, folded from the outcome events"
    static let positional: Positional? = Positional("ACTION", choices: ["publish", "show"])
    static let env = Option("--env", value: "ENV", of: Environment.self, help: ["The environment whose facts to build or show"]).required()
    static let manifests = Option.manifests(help: ["The manifest directory, for the App and where the state (and so the events) live"])
    static let events = Option.events
    static let retain = Option("--retain-days", value: "DAYS", of: Int.self, default: defaultRetainDays, help: [
        "publish: leave out customers whose newest fact is older than this",
    ])
    static let format = Option("--format", value: "FORMAT", choices: ["text", "jsonl"], default: "text", help: [
        "show: text (a summary), or jsonl (one line per customer, for comparing with SQL)",
    ])
    static let defaultRetainDays = 400

    static let helpPage = HelpPage(
        usage: """
        Usage: retention-sync facts publish --env ENV [--manifests DIR] [--events LOCATION] [--retain-days DAYS]
               retention-sync facts show --env ENV [--manifests DIR] [--events LOCATION] [--format text|jsonl]
        """,
        about: """
        publish reads every outcome event of the environment (the notifications serve received and
        outcomes pull read, each verified with its signed transaction and renewal info), keeps per
        customer what Apple signed last — storefront, currency, price, first purchase, ownership,
        billing retry and grace period, price increase, the last offer redeemed of each type — and
        writes the table beside the events (facts/v1/…, a file named by its digest, then the small
        pointer serve polls). Customers are their keyed pseudonyms (RETENTION_SYNC_PSEUDONYM_SECRET);
        events written under another key are left out and counted. Offline: it reads files, never Apple.
        show prints what the current table holds.
        """,
        options: [env, manifests, events, retain, format], column: 22,
        footer: """
        Run publish in the reconcile job after outcomes pull. The table is as sensitive as the events.
        """)

    struct Options: CommandOptions {
        enum Action: String, CaseIterable, Sendable { case publish, show }
        var action: Action?
        var manifestsPath: String
        var environment: Environment
        var events: StateLocation?
        var retainDays: Int
        var format: String

        func validate() throws(CommandError) {
            guard action != nil else {
                throw CommandError("facts needs an action: retention-sync facts publish --env ENV, or facts show --env ENV", exitCode: .usage)
            }
            guard retainDays > 0 else { throw CommandError("--retain-days must be at least 1", exitCode: .usage) }
        }
    }

    static func parse(_ arguments: inout Arguments, context: CommandContext) throws(CommandError) -> Options {
        let manifests = try arguments.value(Self.manifests, as: String.self) ?? Option.defaultManifests
        let environment = try arguments.required(Self.env, as: Environment.self)
        let events = try arguments.value(Self.events, as: StateLocation.self, relativeTo: context.currentDirectory)
        let retain = try arguments.value(Self.retain, as: Int.self) ?? Self.defaultRetainDays
        let format = try arguments.value(Self.format) ?? "text"
        let action = try arguments.positional().map { text throws(CommandError) in
            guard let action = Options.Action(rawValue: text) else {
                throw CommandError("unknown facts action '\(text)'; the actions are publish and show", exitCode: .usage)
            }
            return action
        }
        return Options(action: action, manifestsPath: manifests, environment: environment, events: events, retainDays: retain, format: format)
    }

    static func run(_ options: Options, context: CommandContext) async throws -> ExitCode {
        guard let pseudonyms = try EventStoreOptions.pseudonyms(context) else {
            throw CommandError("\(PseudonymKey.environmentVariable) is not set: facts are keyed by the same pseudonym as serve's decisions; "
                               + "give it the same secret serve has", exitCode: .usage)
        }
        let manifests = Result { () throws(Workspace.Failure) in
            try Workspace.load(directory: context.url(options.manifestsPath), displayPath: options.manifestsPath)
        }
        let workspace = try EnvironmentOptions.workspaceStep(context: context) { () throws(Workspace.Failure) in try manifests.get() }
        let location = try options.events ?? ResultsCommand.defaultRoot(manifests, environment: options.environment, context: context)
        let store = try EventStoreOptions.objectStore(at: location, context: context)
        let environment = options.environment.rawValue
        switch options.action ?? .show {
        case .publish:
            try EventStoreOptions.requireEvents(at: location)
            let root = try await ResultsOperation.localFolder(location, context: context)
            let now = UTCTime(now: SystemClock()).milliseconds
            let published: (summary: FactsBuild.Summary, pointer: FactsPointer, kept: String?)
            do {
                published = try await FactsBuild.publish(from: FolderEventSource(root: root), bundleId: workspace.app.bundleId,
                                                         environment: environment, keyId: pseudonyms.keyId,
                                                         retainSince: now - Int64(options.retainDays) * UTCTime.day, builtAt: now, to: store)
            } catch let failure as FactsBuild.Failure {
                throw CommandError(failure.description)
            } catch {
                throw CommandError("cannot publish the facts table to \(location): \(error)")
            }
            let (summary, pointer, kept) = published
            var lines = ["facts publish (\(environment)): \(summary.customers) customer(s) from \(summary.events) outcome event(s) → "
                         + "\(location)/\(pointer.table)"]
            if summary.expired > 0 {
                lines.append("  \(summary.expired) customer(s) left out: their newest fact is older than \(options.retainDays) days")
            }
            if summary.otherKey > 0 {
                lines.append("  \(summary.otherKey) outcome event(s) written under another pseudonym key were left out (key id \(pseudonyms.keyId) is this one)")
            }
            context.console.print(lines.joined(separator: "\n"))
            if let kept { context.console.error("note: \(kept)") }
            return .success
        case .show:
            let found: (FactsPointer, FactsTable)?
            do {
                found = try await FactsPointer.current(in: store, environment: environment,
                                                       expecting: (workspace.app.bundleId, environment, pseudonyms.keyId))
            } catch {
                throw CommandError("cannot read the facts table in \(location): \(error)")
            }
            guard let (pointer, table) = found else {
                throw CommandError("no facts table for \(environment) in \(location): run retention-sync facts publish --env \(environment) first")
            }
            if options.format == "jsonl" {
                for (key, facts) in table.all() { context.console.print(FactsBuild.jsonLine(key: key, facts)) }
            } else {
                context.console.print("facts (\(environment)): \(table.count) customer(s), built \(UTCTime(milliseconds: pointer.builtAt).formatted()), "
                                      + "newest fact \(UTCTime(milliseconds: table.header.newestFact).formatted()), key id \(pointer.keyId)\n"
                                      + "  \(location)/\(pointer.table) (\(pointer.digest))")
            }
            return .success
        }
    }
}
