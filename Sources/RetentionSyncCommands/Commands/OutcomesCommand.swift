import Basics
import CLIKit
import EventStore
import EventContract
import StateStore
import Foundation
import Manifests
import Reconciler
import RetentionMessaging
import RetentionMessagingModels
import Runtime
import StateLocations
import Operations

/// `retention-sync outcomes pull`: what became of the customers, read from Apple's Notification History.
struct OutcomesCommand: ParsedCommand {
    static let name = "outcomes"
    static let summary = "Read customers' outcomes from Apple's Notification History into the event store"
    static let positional: Positional? = Positional("ACTION", choices: ["pull"])
    static let root = TrustRootsOption.declaration(help: [
        "Root certificates Apple's notifications must chain to (Apple Root CA - G3)",
    ])
    static let since = Option("--since", value: "DATE", of: DateArgument.self, help: [
        "Read from this day (YYYY-MM-DD) or time instead of from the cursor",
        "(a backfill; history reaches 180 days back in production, 30 in sandbox)",
    ])
    static let until = Option("--until", value: "DATE", of: DateArgument.self, help: [
        "Read up to this time (default: now; Apple reads a future end as now)",
    ])

    static let helpPage = HelpPage(
        usage: """
        Usage: retention-sync outcomes pull --env ENV --root FILE[,FILE…] [--manifests DIR] [--endpoint URL]
                                            [--state-store LOCATION] [--events LOCATION] [--since DATE] [--until DATE]
        """,
        about: """
        Calls the App Store Server API's Get Notification History (20 notifications a page, paced at
        Apple's 50 requests a second in production and 5 in sandbox) from where the last run ended,
        verifies every notification and its nested signed transaction and renewal info as serve does,
        and records each one about a customer as an outcome event beside the state — the customer as
        the keyed pseudonym (RETENTION_SYNC_PSEUDONYM_SECRET, the same secret serve uses), never the
        transaction id. A forged or foreign notification is refused and counted, never recorded. The
        first run backfills as far as Apple keeps history, less a day against clock skew; fit for
        the scheduled reconcile job.
        """,
        options: EnvironmentOptions.connection + [root, since, until] + EventStoreOptions.all,
        column: 27,
        footer: EnvironmentOptions.credentialsHelp + """

        Apple keeps in history only what it tried to send to the App's V2 notification URL: set one in
        App Store Connect (serve's --notifications-path, or the team's own endpoint) before relying on it.
        """)

    struct Options: CommandOptions {
        var environment: EnvironmentOptions
        var roots: [String]?
        /// Where to read from instead of the cursor (or the backfill).
        var since: DateArgument?
        /// Where to read up to; now unless given.
        var until: DateArgument?
        var events: EventStoreOptions
        var action: Action?

        /// What `outcomes` does; `pull` is the one action.
        enum Action: String, CaseIterable, Sendable {
            case pull
        }

        func validate() throws(CommandError) {
            guard action != nil else {
                throw CommandError("outcomes needs an action: retention-sync outcomes pull --env ENV --root FILE", exitCode: .usage)
            }
            guard roots != nil else {
                throw CommandError("outcomes pull needs --root FILE: the root certificate(s) Apple's notifications chain to (Apple Root CA - G3)",
                                   exitCode: .usage)
            }
        }
    }

    static func parse(_ arguments: inout Arguments, context: CommandContext) throws(CommandError) -> Options {
        Options(environment: try EnvironmentOptions.parse(&arguments, context: context),
                roots: try TrustRootsOption.read(&arguments, Self.root),
                since: try arguments.value(Self.since, as: DateArgument.self), until: try arguments.value(Self.until, as: DateArgument.self),
                events: try EventStoreOptions.parse(&arguments, context: context),
                // Options first: `positional()` would otherwise take an option's value for the action.
                action: try arguments.positional().map { text throws(CommandError) in
                    guard let action = Options.Action(rawValue: text) else {
                        throw CommandError("unknown outcomes action '\(text)'; the action is 'pull'", exitCode: .usage)
                    }
                    return action
                })
    }

    static func run(_ options: Options, context: CommandContext) async throws -> ExitCode {
        try await pull(options, context: context, provider: .live)
    }

    /// Parses, checks and pulls through the API the caller chose (the tests': the emulator).
    static func run(_ arguments: inout Arguments, context: CommandContext, provider: APIProvider) async throws -> ExitCode {
        return try await pull(parsed(&arguments, context: context), context: context, provider: provider)
    }

    static func pull(_ parsed: Options, context: CommandContext, provider: APIProvider) async throws -> ExitCode {
        let (options, environment, roots, events) = (parsed.environment, parsed.environment.environment, parsed.roots ?? [], parsed.events)
        let since = parsed.since?.milliseconds
        let until = parsed.until?.milliseconds ?? UTCTime(now: SystemClock()).milliseconds
        if let since, since > until {
            let end = parsed.until == nil ? "it ends now (\(EventTime.format(until)))" : "--until is \(EventTime.format(until))"
            throw CommandError("the window to read starts after it ends: --since is \(EventTime.format(since)) and \(end); give a --since "
                               + "before the end", exitCode: .usage)
        }
        let current = try EventStoreOptions.pseudonyms(context)
        let previous = try EventStoreOptions.previousPseudonyms(context, current: current)
        guard let pseudonyms = current else {
            throw CommandError("\(PseudonymKey.environmentVariable) is not set: outcomes are recorded under the same keyed pseudonym as "
                               + "serve's decisions; give it the same secret serve has", exitCode: .usage)
        }

        let workspace = try options.openWorkspace(context: context)
        let app = workspace.manifests.app
        let trusted = try TrustRootsOption.load(roots, context: context)
        guard let root = events.location(fallback: workspace.stateLocation.map { StateStores.backend(for: $0).root(of: $0) }) else {
            throw CommandError("the App declares no stateStore for \(environment.rawValue): give --events LOCATION", exitCode: .usage)
        }
        let console = context.console
        let recorder = try events.recorder(root: root, purpose: "outcomes", context: context) { console.error("note: \($0)") }
        recorder.start()
        let client = try provider.make(environment, app.bundleId, options, context)
        let store = try EventStoreOptions.objectStore(at: root, context: context)
        var pull = OutcomePull(environment: environment,
                               verifier: NotificationVerifier(trustedRoots: trusted, bundleId: app.bundleId, appAppleId: app.appAppleId,
                                                              environment: environment, clock: SystemClock()),
                               pseudonyms: pseudonyms, recorder: recorder, store: store,
                               fetch: { request, token in try await client.notificationHistory(request, paginationToken: token) })
        pull.warn = { console.error("warning: \($0)") }
        pull.previousPseudonyms = previous
        let callsBefore = client.notificationHistoryCalls
        let summary: OutcomePull.Summary
        do {
            summary = try await pull.run(since: since, until: until, untilGiven: parsed.until != nil)
        } catch let error as RetentionMessagingError {
            _ = await recorder.close()
            throw CommandError("Get Notification History failed: \(error.description); the cursor was not moved"
                               + (error.errorCode == NotificationHistoryFacts.startDateTooFarInPast ? Self.startTooEarlyHint(environment) : ""))
        } catch let error as OutcomePullError {
            throw CommandError(error.description, exitCode: error.usage ? .usage : .failure)
        }
        console.print(Self.describe(summary, calls: client.notificationHistoryCalls - callsBefore, root: root, environment: environment))
        return summary.refused.isEmpty && summary.keyMismatch == nil ? .success : .needsAttention
    }

    /// What to do when Apple refuses the start date as older than its history.
    static func startTooEarlyHint(_ environment: Environment) -> String {
        "\nhint: Apple's clock puts the start more than \(NotificationHistoryFacts.days(environment)) days back: pass --since with a later "
            + "start (history reaches \(NotificationHistoryFacts.days(environment)) days back by the server's own clock; an emulator whose "
            + "clock was moved ahead counts from its time, so start within that many days of the emulator's now)"
    }

    static func describe(_ summary: OutcomePull.Summary, calls: Int, root: StateLocation, environment: Environment) -> String {
        var lines = ["outcomes pull (\(environment.rawValue)): \(EventTime.format(summary.startDate)) → \(EventTime.format(summary.endDate)), "
                     + "\(summary.pages) page(s), \(calls) call(s)"]
        lines.append("  \(summary.notifications) notification(s): \(summary.recorded) recorded as outcomes in \(root), "
                     + "\(summary.notAboutACustomer) about no customer")
        if !summary.refused.isEmpty {
            let reasons = summary.refused.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            lines.append("  \(summary.refused.values.reduce(0, +)) refused and not recorded (\(reasons)): check --root, and that the history is this App's")
        }
        if let lost = summary.lostSpan {
            lines.append("  warning: the last run ended \(EventTime.format(lost.lowerBound)); Apple keeps history for "
                         + "\(NotificationHistoryFacts.days(environment)) days, so outcomes until \(EventTime.format(lost.upperBound)) "
                         + "cannot be read any more — run outcomes pull at least weekly")
        }
        if let mismatch = summary.keyMismatch {
            lines.append("  warning: key id \(mismatch.ours) is not the key of the newest decisions stored (\(mismatch.stored.joined(separator: ", "))): "
                         + "a different pseudonym secret from serve's; the outcomes recorded now will not join")
        }
        if summary.restartedAfterExpiredToken { lines.append("  the pagination token expired once; the window was read again from its start") }
        return lines.joined(separator: "\n")
    }
}
