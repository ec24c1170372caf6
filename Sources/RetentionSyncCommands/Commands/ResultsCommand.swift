import Experiments
import Foundation
import Manifests
import Reconciler
import RetentionMessagingModels
import StateLocations

/// `retention-sync results`: which answer keeps more subscribers, per flow, rule and split arm.
struct ResultsCommand: Command {
    static let name = "results"
    static let summary = "Report save rates per flow, rule and split arm from recorded events"
    static let env = Option("--env", value: "ENV", of: Environment.self, help: ["sandbox or production"])
    static let manifests = Option.manifests(help: ["The manifest directory, for where the state (and so the events) live"])
    static let events = Option("--events", value: "DIR", completion: .directory, help: [
        "The folder holding events/v1/… (default: the folder of the environment's",
        "state store, where serve and outcomes pull write them)",
    ])
    static let flow = Option("--flow", value: "NAME", help: ["Only this flow"])
    static let since = Option("--since", value: "DATE", help: [
        "Only exposures from this day (YYYY-MM-DD, UTC) or time (ISO 8601) on",
    ])
    static let format = Option("--format", value: "FORMAT", of: ResultsFormat.self, help: [
        "text (default), markdown (for a pull-request comment or job summary) or json",
    ])
    static let by = Option("--by", value: "WHAT", of: ResultsBreakdown.self, help: [
        "Also break each rule down by message, locale or product",
    ])

    static let helpPage = HelpPage(
        usage: "Usage: retention-sync results --env sandbox|production [--flow NAME] [--since DATE] [--format text|markdown|json]",
        about: """
        Reads the decisions serve recorded and the outcomes Apple reported, joins them per customer
        (by the keyed pseudonym, never a raw transaction id), and reports per flow, rule and split arm:
        customers exposed, kept at 24 h, took the offer or switched, renewed, with a 95% Wilson
        interval on every rate. Each arm of a split group is compared with its control by an
        always-valid interval on the difference, which stays honest however often it is read; until
        it excludes 0 the answer is "not distinguishable yet", with how many more customers per arm
        it would take at the current rates. Offline: it reads files, never Apple.
        """,
        options: [env, manifests, events, flow, since, format, by],
        column: 22,
        footer: """
        The JSON (format_version 1.0) and the definitions of every number are in the manual's
        Outcomes and experiments page, with the same report as SQL for DuckDB, Athena, Trino and Spark.
        """)

    static func run(_ arguments: inout Arguments, context: CommandContext) async throws -> ExitCode {
        let manifestsPath = try arguments.value(orDefault: Self.manifests) ?? ""
        let environment = try arguments.required(Self.env, as: Environment.self)
        let eventsOption = try arguments.value(Self.events)
        let flow = try arguments.value(Self.flow)
        let sinceText = try arguments.value(Self.since)
        let format = try arguments.value(Self.format, as: ResultsFormat.self) ?? .text
        let breakdown = try arguments.value(Self.by, as: ResultsBreakdown.self)
        try arguments.finish()

        var since: Date?
        if let sinceText {
            guard let parsed = Self.date(sinceText) else {
                throw CommandError("--since '\(sinceText)' is not a date: write 2026-11-01 or 2026-11-01T12:00:00Z", exitCode: .usage)
            }
            since = parsed
        }
        let root: URL
        if let eventsOption {
            root = context.url(eventsOption)
        } else {
            root = try Self.defaultRoot(manifestsPath: manifestsPath, environment: environment, context: context)
        }
        let report: ResultsReport
        do {
            report = try ResultsReport.compute(source: FolderEventSource(root: root), environment: environment.rawValue,
                                               flow: flow, since: since, now: Date(), breakdown: breakdown)
        } catch {
            throw CommandError("cannot read the events under \(root.path): \(error)")
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
        case .text:
            context.console.write(report.text())
        }
        return .success
    }

    /// The folder beside the environment's state: the one a file store lives in. An S3 store's
    /// events are read from a local copy (`aws s3 sync s3://bucket/prefix/events DIR/events`).
    static func defaultRoot(manifestsPath: String, environment: Environment, context: CommandContext) throws(CommandError) -> URL {
        let workspace = try EnvironmentOptions.workspaceStep(context: context) { () throws(Workspace.Failure) in
            try Workspace.load(directory: context.url(manifestsPath), displayPath: manifestsPath)
        }
        // Events live under the state's root: the folder a file store is in, or an S3 store's prefix.
        switch Workspace.declaredStateLocation(of: workspace.app, environment: environment)?.root {
        case .file(let path)?:
            return URL(fileURLWithPath: path)
        case .s3(let bucket, let key)?:
            let prefix = key.isEmpty ? "s3://\(bucket)" : "s3://\(bucket)/\(key)"
            throw CommandError("the \(environment.rawValue) state lives in \(prefix): copy its events to a folder "
                               + "(aws s3 sync \(prefix)/events DIR/events) and pass --events DIR", exitCode: .usage)
        case nil:
            throw CommandError("the App declares no stateStore for \(environment.rawValue): pass --events DIR", exitCode: .usage)
        }
    }

    static func date(_ text: String) -> Date? {
        let day = DateFormatter()
        day.locale = Locale(identifier: "en_US_POSIX")
        day.timeZone = TimeZone(identifier: "UTC")
        day.dateFormat = "yyyy-MM-dd"
        if text.count == 10, let date = day.date(from: text) { return date }
        let instant = ISO8601DateFormatter()
        instant.formatOptions = [.withInternetDateTime]
        if let date = instant.date(from: text) { return date }
        instant.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return instant.date(from: text)
    }
}

/// What `results --format` takes.
enum ResultsFormat: String, CaseIterable, Sendable {
    case text, markdown, json
}
