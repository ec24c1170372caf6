import Basics
import CLIKit
import EventStore
import Experiments
import HTTPClient
import Notifications
import Operations
import StateStore
import Foundation
import Manifests
import Reconciler
import RetentionMessagingModels
import Views
import StateLocations

/// `retention-sync results`: which answer keeps more subscribers, per flow, rule and split arm.
struct ResultsCommand: ParsedCommand {
    static let name = "results"
    static let summary = "Report save rates per flow, rule and split arm from recorded events"
    static let env = Option("--env", value: "ENV", of: Environment.self, help: ["The environment whose events to read"]).required()
    static let manifests = Option.manifests(help: ["The manifest directory, for where the state (and so the events) live"])
    static let events = Option.events
    static let asOf = Option("--as-of", value: "DATE", of: DateArgument.self, help: [
        "Report as of this time instead of now (what was pending then stays pending)",
    ])
    static let flow = Option("--flow", value: "NAME", help: ["Only this flow"])
    static let since = Option("--since", value: "DATE", of: DateArgument.self, help: [
        "Only exposures from this day (YYYY-MM-DD, UTC) or time (ISO 8601) on",
    ])
    static let format = Option("--format", value: "FORMAT", of: ResultsFormat.self, default: .text, help: [
        "How to print the results: markdown for a pull-request comment or job",
        "summary, html for one self-contained page with charts (no script, nothing fetched)",
    ])
    static let by = Option("--by", value: "WHAT", of: ResultsBreakdown.self, help: [
        "Also break each rule down by one of these",
    ])
    static let versus = Option("--versus", value: "ARM", help: [
        "Also compare every other arm of ARM's split group with ARM instead of",
        "the control, per period (offer against switch, not only against holdout)",
    ])
    static let paidHorizon = Option("--paid-horizon", value: "DAYS", of: Int.self, default: ResultsReport.defaultPaidHorizonDays, help: [
        "Count what customers paid in this many days after the answer (1-400;",
        "past the renewal of a yearly plan for yearly products)",
    ])

    static let helpPage = HelpPage(
        about: """
        Reads the decisions serve recorded and the outcomes Apple reported, joins them per customer
        (by the keyed pseudonym, never a raw transaction id), and reports per flow, rule and split arm:
        customers exposed, kept at 24 h, took the offer or switched, renewed, with a 95% Wilson
        interval on every rate. Each arm of a split group is compared with its control by an
        always-valid interval on the difference, which stays honest however often it is read; until
        it excludes 0 the answer is "not distinguishable yet", with how many more customers per arm
        it would take at the current rates. Money per customer is every price the App Store charged
        an exposed customer within the paid horizon, each charge once, compared the same way.
        Offline: it reads files, never Apple.
        """,
        options: [env, manifests, events, flow, since, asOf, format, by, versus, paidHorizon],
        column: 22,
        footer: """
        Events in S3 are read through a local copy under $TMPDIR/retention-sync/events that only
        fetches segments it does not hold yet. The JSON (formatVersion 2.2) and the definitions of every number are in the manual's
        Outcomes and experiments page, with the same report as SQL for DuckDB, Athena, Trino and Spark.
        """)

    struct Options: CommandOptions {
        var manifestsPath: String
        var environment: Environment
        var events: StateLocation?
        var flow: String?
        var since: DateArgument?
        var asOf: DateArgument?
        var format: ResultsFormat
        var breakdown: ResultsBreakdown?
        /// `--versus`: the arm every other arm of its group is also compared with.
        var versus: String?
        var paidHorizonDays = ResultsReport.defaultPaidHorizonDays

        /// The end of the window: `--as-of`, else now.
        var now: UTCTime { asOf?.time ?? SystemClock().time() }

        func validate() throws(CommandError) {
            guard ResultsReport.paidHorizonDaysRange.contains(paidHorizonDays) else {
                throw CommandError("--paid-horizon must be a whole number of days from 1 to 400, not \(paidHorizonDays)", exitCode: .usage)
            }
        }
    }

    static func parse(_ arguments: inout Arguments, context: CommandContext) throws(CommandError) -> Options {
        Options(manifestsPath: try arguments.value(Self.manifests, as: String.self) ?? Option.defaultManifests,
                environment: try arguments.required(Self.env, as: Environment.self),
                events: try arguments.value(Self.events, as: StateLocation.self, relativeTo: context.currentDirectory),
                flow: try arguments.value(Self.flow),
                since: try arguments.value(Self.since, as: DateArgument.self), asOf: try arguments.value(Self.asOf, as: DateArgument.self),
                format: try arguments.value(Self.format, as: ResultsFormat.self) ?? .text,
                breakdown: try arguments.value(Self.by, as: ResultsBreakdown.self),
                versus: try arguments.value(Self.versus),
                paidHorizonDays: try arguments.value(Self.paidHorizon, as: Int.self) ?? ResultsReport.defaultPaidHorizonDays)
    }

    static func run(_ options: Options, context: CommandContext) async throws -> ExitCode {
        let (manifestsPath, environment, flow) = (options.manifestsPath, options.environment, options.flow)
        let (since, now, format, breakdown) = (options.since?.time, options.now, options.format, options.breakdown)
        // The manifests, read once: where the events live, what they are checked against, the App the webhook names.
        let manifests = Result { () throws(Workspace.Failure) in
            try Workspace.load(directory: context.url(manifestsPath), displayPath: manifestsPath)
        }
        let location = try options.events ?? Self.defaultRoot(manifests, environment: environment, context: context)
        // A place that does not exist is a wrong path, never "no traffic".
        if let folder = StateStores.backend(for: location).localFolder(of: location),
           !FileManager.default.fileExists(atPath: folder.path) {
            throw CommandError("no events at \(location): the folder does not exist; serve and outcomes pull write events beside the "
                               + "environment's state (its folder or S3 prefix, under events/v1), or where their --events points")
        }
        let root = try await ResultsOperation.localFolder(location, context: context)
        let configuration = Self.configuration(try? manifests.get().0, manifestsPath: manifestsPath, environment: environment)
        if configuration == nil {
            context.console.error("note: the manifests in \(manifestsPath) cannot be read, so the checks against the configuration (sample "
                                  + "ratio, configured arms without exposures, rules not configured) were not run; give --manifests DIR")
        }
        var report: ResultsReport
        var timeline: ResultsTimeline?
        do {
            if format == .html {
                // Only the page draws the days: the other formats keep the single pass without them.
                (report, timeline) = try ResultsReport.computeWithTimeline(
                    source: FolderEventSource(root: root), environment: environment.rawValue, flow: flow, since: since, now: now,
                    breakdown: breakdown, configuration: configuration, clock: ResultsOperation.clock(asOf: now),
                    paidHorizonDays: options.paidHorizonDays)
            } else {
                report = try ResultsReport.compute(source: FolderEventSource(root: root), environment: environment.rawValue,
                                                   flow: flow, since: since, now: now, breakdown: breakdown,
                                                   configuration: configuration, clock: ResultsOperation.clock(asOf: now),
                                                   paidHorizonDays: options.paidHorizonDays)
            }
        } catch {
            throw CommandError("cannot read the events under \(root.path): \(error)")
        }
        if let reference = options.versus {
            let arms = report.splitArms
            guard arms.contains(reference) else {
                throw CommandError("--versus: no split arm '\(reference)' was exposed in this window"
                                   + (arms.isEmpty ? "; no split arm was" : "; the split arms are \(arms.joined(separator: ", "))"), exitCode: .usage)
            }
            report.versus = report.versusComparisons(reference)
        }
        if report.events.segments == 0 {
            context.console.error("note: no event segments under \(location) for \(environment.rawValue) (0 read): nothing was recorded "
                                  + "there yet; serve and outcomes pull write to events/v1 beside the environment's state, or where "
                                  + "their --events points")
        }
        if context.environment[Webhook.urlVariable] != nil || context.environment[Webhook.urlVariable + "_FILE"] != nil {
            await Self.notify(report, manifests: try? manifests.get().0, manifestsPath: manifestsPath, environment: environment, context: context)
        }
        switch format {
        case .json:
            do {
                context.console.write(String(decoding: try report.jsonData(), as: UTF8.self))
            } catch {
                throw CommandError("cannot encode the results: \(error)")
            }
        case .markdown:
            context.console.write(report.markdown())
        case .html:
            context.console.write(report.html(timeline: timeline ?? ResultsTimeline.empty))
        case .text:
            context.console.write(report.text())
        }
        return .success
    }

    /// The rules the manifests configure for `environment`, for the checks on the data; nil when the
    /// manifests cannot be read.
    static func configuration(_ manifests: ValidatedManifests?, manifestsPath: String, environment: Environment) -> ResultsConfiguration? {
        manifests.map { ResultsOperation.configuration($0, environment: environment, source: "manifests in \(manifestsPath)") }
    }

    /// Tells the webhook about arms that became distinguishable, once each (the ledger lives beside the state).
    static func notify(_ report: ResultsReport, manifests: ValidatedManifests?, manifestsPath: String, environment: Environment,
                       context: CommandContext) async {
        guard let workspace = manifests else {
            context.console.error("warning: notifications: not sent: the manifests in \(manifestsPath) cannot be read for the App's identity")
            return
        }
        var store: (any StateSideDocuments)?
        if let location = Workspace.declaredStateLocation(of: workspace.app, environment: environment) {
            store = try? SnapshotSourceOptions.open(location, owner: StateOwner(bundleId: workspace.app.bundleId, appAppleId: workspace.app.appAppleId,
                                                                                 environment: environment), context: context)
        }
        await RunNotifications.send(RunEvents.events(results: report, bundleId: workspace.app.bundleId, environment: environment),
                                    store: store, context: context)
    }

    /// Where the environment's state lives: the folder a file store is in, or an S3 store's prefix.
    static func defaultRoot(_ manifests: Result<(ValidatedManifests, [Diagnostic]), Workspace.Failure>, environment: Environment,
                            context: CommandContext) throws(CommandError) -> StateLocation {
        let workspace = try EnvironmentOptions.workspaceStep(context: context, warnings: .summarized(command: "results")) {
            () throws(Workspace.Failure) in try manifests.get()
        }
        // Events live under the state's root: the folder a file store is in, or an S3 store's prefix.
        guard let root = Workspace.declaredStateLocation(of: workspace.app, environment: environment)?.root else {
            throw CommandError("the App declares no stateStore for \(environment.rawValue): pass --events LOCATION", exitCode: .usage)
        }
        return root
    }
}

/// What `results --format` takes.
enum ResultsFormat: String, CaseIterable, Sendable, ArgumentValue {
    case text, markdown, json, html
}
