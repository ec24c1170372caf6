import Foundation
import HTTP
import Manifests
import Reconciler
import RetentionMessagingModels
import Runtime
import StateLocations
import StateStore

struct StateCommand: Command {
    static let name = "state"
    static let summary = "Show the state document an environment's store holds"
    static let positional: Positional? = Positional("ACTION", choices: ["show"])
    static let env = Option("--env", value: "ENV", of: Environment.self, help: ["sandbox or production"])
    static let stateStore = Option("--state-store", value: "LOCATION", completion: .file, help: [
        "s3://bucket/prefix or a file path (default: the App's",
        "environments.<env>.stateStore, else its snapshotPath)",
    ])
    static let manifests = Option.manifests()
    static let format = Option("--format", value: "FORMAT", of: StatusFormat.self, help: ["text (default) or json"])

    static let helpPage = HelpPage(
        usage: """
        Usage: retention-sync state show --env sandbox|production [--state-store LOCATION] [--manifests DIR]
                                         [--format text|json]
        """,
        about: """
        Reads the environment's state document (the published runtime snapshot, the record of uploaded
        content with its review states, the defaults and realtime URL as last applied, the last
        performance test) and prints a summary, or the document itself as JSON. Read-only; it never
        talks to Apple. A store that cannot be read is an error, never shown as empty.
        """,
        options: [env, stateStore, manifests, format],
        column: 25,
        footer: """
        S3-compatible stores read AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN,
        AWS_REGION (or AWS_DEFAULT_REGION) and AWS_ENDPOINT_URL_S3 (or AWS_ENDPOINT_URL).
        """)

    /// The JSON `state show --format json` prints: where the document was read, and the document.
    struct Shown: Encodable {
        var store: String
        var version: String?
        var migratedFrom: String?
        var document: StateDocument?

        enum CodingKeys: String, CodingKey { case store, version, migratedFrom = "migrated_from", document }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(store, forKey: .store)
            try container.encode(version, forKey: .version)
            try container.encode(migratedFrom, forKey: .migratedFrom)
            try container.encode(document, forKey: .document)
        }
    }

    static func run(_ arguments: inout Arguments, context: CommandContext) async throws -> ExitCode {
        let manifestsPath = try arguments.value(orDefault: Self.manifests) ?? Option.defaultManifests
        let environment = try arguments.required(Self.env, as: Environment.self)
        let storeOption = try arguments.value(Self.stateStore)
        let format = try arguments.value(Self.format, as: StatusFormat.self) ?? .text
        // Options first: `positional()` would otherwise take an option's value for the action.
        guard let action = arguments.positional() else {
            throw CommandError("state needs an action: retention-sync state show --env ENV", exitCode: .usage)
        }
        guard action == "show" else {
            throw CommandError("unknown state action '\(action)'; the only action is 'show'", exitCode: .usage)
        }
        try arguments.finish()

        let manifests = try EnvironmentOptions.workspaceStep(context: context) { () throws(Workspace.Failure) in
            try Workspace.load(directory: context.url(manifestsPath), displayPath: manifestsPath)
        }
        let owner = StateOwner(bundleId: manifests.app.bundleId, appAppleId: manifests.app.appAppleId, environment: environment)
        let snapshotPath = manifests.app.settings(for: environment)?.snapshotPath
        let location: StateLocation
        if let storeOption {
            location = try SnapshotSourceOptions.location(storeOption, context: context)
        } else if let declared = Workspace.declaredStateLocation(of: manifests.app, environment: environment) {
            location = declared
        } else {
            throw CommandError(StateLocationError("", "is not configured for \(environment.rawValue): pass --state-store LOCATION, or set environments.\(environment.rawValue).stateStore in the App manifest").description, exitCode: .usage)
        }

        let configuration = try EnvironmentOptions.transportConfiguration(context)
        let read: StateRead
        let store: any StateStore
        do {
            store = try StateStores.open(location, owner: owner, environment: context.environment,
                                         transport: CurlHTTPClient(configuration: configuration))
            // A snapshot file elsewhere than the store is migrated from while the store is empty.
            read = try await StateStores.read(store, legacySnapshotPath: snapshotPath)
        } catch {
            throw CommandError(error.description)
        }

        if format == .json {
            let shown = Shown(store: store.location.description, version: read.version?.rawValue,
                              migratedFrom: read.migratedFrom, document: try read.document?.sealed())
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted]
            encoder.dateEncodingStrategy = .custom { date, encoder in
                var container = encoder.singleValueContainer()
                try container.encode(StateTime.format(date))
            }
            context.console.write(String(decoding: try encoder.encode(shown), as: UTF8.self) + "\n")
        } else {
            context.console.write(text(read, owner: owner, store: store.location.description))
        }
        return .success
    }

    static func text(_ read: StateRead, owner: StateOwner, store: String) -> String {
        guard let document = read.document else {
            return "State of \(owner.bundleId) \(owner.environment.rawValue) in \(store): reachable, nothing stored yet.\n"
                + "The next apply is a first publish.\n"
        }
        var lines = ["State of \(owner.bundleId) \(owner.environment.rawValue) in \(store)"]
        if let version = read.version { lines.append("  version: \(version)") }
        if let migratedFrom = read.migratedFrom {
            lines.append("  migrated from the runtime snapshot file \(migratedFrom); the next apply writes it as a state document")
        }
        if let updated = document.updatedAt { lines.append("  updated: \(StateTime.format(updated))") }
        if let snapshot = document.snapshot {
            lines.append("  published snapshot: \(snapshot.rules.count) rule\(snapshot.rules.count == 1 ? "" : "s"), \(snapshot.digest)")
        } else {
            lines.append("  published snapshot: none")
        }
        let messages = document.content.filter { $0.kind == .message }.count
        let images = document.content.count - messages
        var states: [String: Int] = [:]
        for record in document.content { states[record.currentReviewState?.state ?? "not observed", default: 0] += 1 }
        let stateText = states.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        lines.append("  content: \(messages) message\(messages == 1 ? "" : "s"), \(images) image\(images == 1 ? "" : "s")"
                     + (stateText.isEmpty ? "" : " (\(stateText))"))
        lines.append("  defaults: \(document.defaults.count) recorded")
        if let realtime = document.realtimeURL {
            lines.append("  realtime URL: \(realtime.url ?? "none") (applied \(StateTime.format(realtime.appliedAt)))")
        }
        if let waiting = document.realtimeURLAwaitingPerformanceTest {
            lines.append("  realtime URL \(waiting.url) waits for a sandbox performance test to pass (Apple refused it \(StateTime.format(waiting.refusedAt)): 403 4030026)")
        }
        if let test = document.performanceTest {
            lines.append("  performance test: \(test.result.result?.rawValue ?? "unknown") (request \(test.requestId), seen \(StateTime.format(test.observedAt)))")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
