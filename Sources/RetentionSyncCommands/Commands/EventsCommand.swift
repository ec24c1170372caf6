import Basics
import CLIKit
import EventContract
import EventStore
import Experiments
import Foundation
import Manifests
import Operations
import Reconciler
import RetentionMessagingModels
import StateLocations
import StateStore

/// `retention-sync events compact|erase`: upkeep of the event store serve and outcomes pull write.
struct EventsCommand: ParsedCommand {
    static let name = "events"
    static let summary = "Compact the event store's closed hours, or erase customers from it"
    static let positional: Positional? = Positional("ACTION", choices: ["compact", "erase"])
    static let env = Option("--env", value: "ENV", of: Environment.self, help: ["The environment whose events to compact or erase from"]).required()
    static let manifests = Option.manifests(help: ["The manifest directory, for the App and where the state (and so the events) live"])
    static let events = Option.events
    static let olderThan = Option("--older-than-hours", value: "HOURS", of: Int.self, default: defaultOlderThanHours, help: [
        "compact: only hours that ended at least this long ago (at least 2)",
    ])
    static let customers = Option("--customers", value: "FILE", help: [
        "erase: a file (or - for standard input) with one customer a line: the",
        "pseudonym the events carry, or the original transaction id, keyed here",
        "with RETENTION_SYNC_PSEUDONYM_SECRET and never printed",
    ])
    static let asOf = Option("--as-of", value: "DATE", of: DateArgument.self, help: [
        "compact: judge which hours are closed as of this time instead of now",
        "(events stamped by an emulator's moved clock)",
    ])
    static let defaultOlderThanHours = 2

    static let helpPage = HelpPage(
        usage: """
        Usage: retention-sync events compact --env ENV [--manifests DIR] [--events LOCATION] [--older-than-hours HOURS] [--as-of DATE]
               retention-sync events erase --env ENV --customers FILE [--manifests DIR] [--events LOCATION]
        """,
        about: """
        compact merges each closed hour's segments (serve writes one per flush, per replica) into one
        segment per hour and stream, each event once: readers that run meanwhile see the old segments,
        the new one or both, and both only repeats events, which every reader drops by eventId. The
        same events give the same segment. results, DuckDB and Spark give the same numbers before and
        after; a warehouse reads far fewer files.
        erase removes every decision and outcome of the given customers from every segment, then
        publishes the facts table again without them (when the environment has one), so nothing of
        them is left in the store. Run it from one place at a time, not beside compact.
        """,
        options: [env, manifests, events, olderThan, asOf, customers], column: 24,
        footer: """
        serve replicas keep what they learned from notifications in memory until they restart, and a
        replica's spool may hold events not stored yet: restart the replicas after an erasure.
        """)

    struct Options: CommandOptions {
        enum Action: String, CaseIterable, Sendable { case compact, erase }
        var action: Action?
        var manifestsPath: String
        var environment: Environment
        var events: StateLocation?
        var olderThanHours: Int
        var customers: String?
        var asOf: DateArgument?

        func validate() throws(CommandError) {
            guard let action else {
                throw CommandError("events needs an action: retention-sync events compact --env ENV, or events erase --env ENV --customers FILE",
                                   exitCode: .usage)
            }
            guard olderThanHours >= 2 else {
                throw CommandError("--older-than-hours must be at least 2: an hour younger than that may still be written to", exitCode: .usage)
            }
            if action == .erase, customers == nil {
                throw CommandError("events erase needs --customers FILE (or - for standard input): one pseudonym or original "
                                   + "transaction id a line", exitCode: .usage)
            }
        }
    }

    static func parse(_ arguments: inout Arguments, context: CommandContext) throws(CommandError) -> Options {
        let manifests = try arguments.value(Self.manifests, as: String.self) ?? Option.defaultManifests
        let environment = try arguments.required(Self.env, as: Environment.self)
        let events = try arguments.value(Self.events, as: StateLocation.self, relativeTo: context.currentDirectory)
        let olderThan = try arguments.value(Self.olderThan, as: Int.self) ?? Self.defaultOlderThanHours
        let customers: String? = try arguments.value(Self.customers)
        let action = try arguments.positional().map { text throws(CommandError) in
            guard let action = Options.Action(rawValue: text) else {
                throw CommandError("unknown events action '\(text)'; the actions are compact and erase", exitCode: .usage)
            }
            return action
        }
        return Options(action: action, manifestsPath: manifests, environment: environment, events: events, olderThanHours: olderThan,
                       customers: customers, asOf: try arguments.value(Self.asOf, as: DateArgument.self))
    }

    static func run(_ options: Options, context: CommandContext) async throws -> ExitCode {
        let manifests = Result { () throws(Workspace.Failure) in
            try Workspace.load(directory: context.url(options.manifestsPath), displayPath: options.manifestsPath)
        }
        let location = try options.events ?? ResultsCommand.defaultRoot(manifests, environment: options.environment, context: context)
        try EventStoreOptions.requireEvents(at: location)
        let store = try EventStoreOptions.objectStore(at: location, context: context)
        let environment = options.environment.rawValue
        switch options.action ?? .compact {
        case .compact:
            let now = options.asOf?.time.milliseconds ?? UTCTime(now: SystemClock()).milliseconds
            let summary: EventMaintenance.Summary
            do {
                summary = try await EventMaintenance.compact(store, environment: environment, now: now,
                                                             lateness: Int64(options.olderThanHours) * EventTime.hour)
            } catch {
                throw CommandError("cannot compact the events in \(location): \(error.description); nothing read is lost — a segment "
                                   + "is removed only after the one replacing it was stored")
            }
            context.console.print("events compact (\(environment)): \(summary.partitions) hour(s) compacted, \(summary.segmentsRead) segment(s) "
                                  + "→ \(summary.segmentsWritten), \(summary.lines) event(s) kept, \(summary.duplicates) duplicate(s) dropped, "
                                  + "\(bytes(summary.bytesBefore)) → \(bytes(summary.bytesAfter))")
            return .success
        case .erase:
            return try await erase(options, manifests: manifests, location: location, store: store, context: context)
        }
    }

    private static func erase(_ options: Options, manifests: Result<(ValidatedManifests, [Diagnostic]), Workspace.Failure>, location: StateLocation,
                              store: any ObjectStore, context: CommandContext) async throws -> ExitCode {
        let environment = options.environment.rawValue
        let pseudonyms = try EventStoreOptions.pseudonyms(context)
        // During a rotation a customer's events carry either key's pseudonym: an id is keyed with both.
        let previous = try EventStoreOptions.previousPseudonyms(context, current: pseudonyms)
        let customers = try Self.customers(options.customers ?? "-", pseudonyms: pseudonyms, previous: previous, context: context)
        let summary: EventMaintenance.Summary
        do {
            summary = try await EventMaintenance.erase(customers, from: store, environment: environment)
        } catch {
            throw CommandError("cannot erase from the events in \(location): \(error.description); run it again — segments already "
                               + "rewritten hold none of these customers, and the rest are read again")
        }
        var lines = ["events erase (\(environment)): \(customers.count) customer(s); \(summary.erased) event(s) removed from "
                     + "\(summary.segmentsRemoved) segment(s)"]
        let found: (FactsPointer, FactsTable)?
        if let pseudonyms {
            let bundleId = try EnvironmentOptions.workspaceStep(context: context) { () throws(Workspace.Failure) in try manifests.get() }.app.bundleId
            do {
                found = try await FactsPointer.current(in: store, environment: environment, expecting: (bundleId, environment, pseudonyms.keyId))
            } catch {
                throw CommandError("the events were erased, but the facts table in \(location) cannot be read (\(error)); run "
                                   + "retention-sync facts publish --env \(environment) to write it without these customers")
            }
            if found != nil {
                let root = try await ResultsOperation.localFolder(location, context: context)
                let now = UTCTime(now: SystemClock()).milliseconds
                do {
                    let published = try await FactsBuild.publish(from: FolderEventSource(root: root), bundleId: bundleId, environment: environment,
                                                                 keyId: pseudonyms.keyId, retainSince: now - Int64(FactsCommand.defaultRetainDays) * UTCTime.day,
                                                                 builtAt: now, to: store)
                    lines.append("  facts table published again without them: \(published.summary.customers) customer(s) → \(location)/\(published.pointer.table)")
                    if let kept = published.kept {
                        context.console.error("warning: \(kept): the older tables still hold the erased customers; remove them")
                    }
                } catch {
                    throw CommandError("the events were erased, but the facts table could not be published again (\(error)); run "
                                       + "retention-sync facts publish --env \(environment)")
                }
            }
        }
        lines.append("  restart the serve replicas: each keeps what notifications told it in memory, and its spool may hold events not stored yet")
        context.console.print(lines.joined(separator: "\n"))
        return .success
    }

    /// The pseudonyms to erase: each line of `path` (or standard input) as given when it is one, else
    /// keyed as an original transaction id. The ids themselves go no further.
    static func customers(_ path: String, pseudonyms: PseudonymKey?, previous: PseudonymKey? = nil,
                          context: CommandContext) throws(CommandError) -> Set<String> {
        var text = ""
        if path == "-" {
            while let line = context.console.readLine() { text += line + "\n" }
        } else {
            do {
                text = try String(contentsOf: context.url(path), encoding: .utf8)
            } catch {
                throw CommandError("cannot read --customers \(path): \(error.localizedDescription)", exitCode: .usage)
            }
        }
        var result: Set<String> = []
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.utf8.count == 64, line.utf8.allSatisfy({ (0x30 ... 0x39).contains($0) || (0x61 ... 0x66).contains($0) }) {
                result.insert(line)
            } else if line.utf8.allSatisfy({ (0x30 ... 0x39).contains($0) }) {
                guard let pseudonyms else {
                    throw CommandError("--customers \(path):\(index + 1): an original transaction id, and \(PseudonymKey.environmentVariable) is "
                                       + "not set to key it; set it to serve's secret, or give the pseudonym the events carry", exitCode: .usage)
                }
                result.insert(pseudonyms.pseudonym(line))
                if let previous { result.insert(previous.pseudonym(line)) }
            } else {
                throw CommandError("--customers \(path):\(index + 1): neither a pseudonym (64 lowercase hex digits) nor an original "
                                   + "transaction id (digits)", exitCode: .usage)
            }
        }
        guard !result.isEmpty else { throw CommandError("--customers \(path) names no customer", exitCode: .usage) }
        return result
    }

    static func bytes(_ count: Int) -> String {
        count >= 1_048_576 ? String(format: "%.1f MB", Double(count) / 1_048_576) : count >= 1024 ? String(format: "%.1f kB", Double(count) / 1024) : "\(count) B"
    }
}
