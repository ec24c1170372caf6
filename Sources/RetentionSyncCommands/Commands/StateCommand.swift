import Basics
import CLIKit
import Foundation
import HTTPClient
import HTTPCore
import Manifests
import Reconciler
import RetentionMessagingModels
import Runtime
import StateLocations
import StateStore
import Views
import Operations

struct StateCommand: ParsedCommand {
    static let name = "state"
    static let summary = "Show the state document an environment's store holds"
    static let positional: Positional? = Positional("ACTION", choices: Action.allValueStrings)

    /// What `state` does.
    enum Action: String, CaseIterable, Sendable, ArgumentValue {
        case show, history, migrate
    }
    static let env = Option("--env", value: "ENV", of: Environment.self, help: ["The environment whose state to read"]).required()
    static let stateStore = StateStoreOption.declaration(help: [
        "s3://bucket/prefix or a file path (default: the App's",
        "environments.<env>.stateStore, else its snapshotPath)",
    ])
    static let manifests = Option.manifests()
    static let format = Option("--format", value: "FORMAT", of: StatusFormat.self, default: .text, help: ["How to print it"])
    static let version = Option("--version", value: "N", of: Int.self, help: [
        "show: print version N of the document, as 'state history' numbers them",
    ])
    static let from = Option("--from", value: "LOCATION", of: StateLocation.self, completion: .file, help: [
        "migrate: the store that holds the state now (s3://bucket/prefix or a file)",
    ])

    static let helpPage = HelpPage(
        usage: """
        Usage: retention-sync state show --env sandbox|production [--state-store LOCATION] [--manifests DIR]
                                         [--format text|json]
               retention-sync state history --env sandbox|production [--format text|json] [--state-store LOCATION]
               retention-sync state show --env ENV --version N [--format text|json]
               retention-sync state migrate --env sandbox|production --from LOCATION [--state-store LOCATION]
                                            [--manifests DIR]
        """,
        about: """
        Reads the environment's state document (the published runtime snapshot, the record of uploaded
        content with its review states, the defaults and realtime URL as last applied, the last
        performance test) and prints a summary, or the document itself as JSON. Read-only; it never
        talks to Apple. A store that cannot be read is an error, never shown as empty.

        'migrate' copies the document from --from into the environment's store (--state-store, else
        the App's stateStore) when that store holds nothing yet, with the earlier versions the old
        store kept (its history, replayed oldest first), reads it back and checks its digest: how
        state moves from a file to S3 and back. The old document is left where it was.

        'history' lists every kept version of the document (number, time, digest, what changed, the
        run that wrote it): the audit trail of which snapshot served when.
        """,
        options: [env, stateStore, manifests, format, version, from],
        column: 25,
        footer: """
        S3-compatible stores read AWS_REGION (or AWS_DEFAULT_REGION, or the profile's region) and
        AWS_ENDPOINT_URL_S3 (or AWS_ENDPOINT_URL). Credentials come from the first source that has
        them, in the AWS SDKs' order: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (with
        AWS_SESSION_TOKEN); web identity (AWS_ROLE_ARN, AWS_WEB_IDENTITY_TOKEN_FILE); the container
        endpoint (AWS_CONTAINER_CREDENTIALS_RELATIVE_URI or _FULL_URI: ECS, EKS Pod Identity); the
        AWS_PROFILE profile of ~/.aws/credentials and ~/.aws/config; EC2 instance metadata (IMDSv2,
        unless AWS_EC2_METADATA_DISABLED=true).
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

    struct Options: CommandOptions {
        var manifestsPath: String
        var environment: Environment
        var store: StateLocation?
        var format: StatusFormat
        var from: StateLocation?
        var versionNumber: Int?
        var action: Action?

        func validate() throws(CommandError) {
            guard let action else {
                throw CommandError("state needs an action: retention-sync state show --env ENV", exitCode: .usage)
            }
            if versionNumber != nil, action != .show {
                throw CommandError("--version goes with 'state show'", exitCode: .usage)
            }
            if action == .migrate, from == nil {
                throw CommandError("state migrate needs --from LOCATION: the store that holds the state now", exitCode: .usage)
            }
            if action != .migrate, from != nil {
                throw CommandError("--from goes with 'state migrate'", exitCode: .usage)
            }
        }
    }

    static func parse(_ arguments: inout Arguments, context: CommandContext) throws(CommandError) -> Options {
        Options(manifestsPath: try arguments.value(Self.manifests, as: String.self) ?? Option.defaultManifests,
                environment: try arguments.required(Self.env, as: Environment.self),
                store: try StateStoreOption.read(&arguments, Self.stateStore, context: context),
                format: try arguments.value(Self.format, as: StatusFormat.self) ?? .text,
                from: try arguments.value(Self.from, as: StateLocation.self, relativeTo: context.currentDirectory),
                versionNumber: try arguments.value(Self.version, as: Int.self, in: 0..., expected: "a version number"),
                // Options first: `positional()` would otherwise take an option's value for the action.
                action: try arguments.positional().map { text throws(CommandError) in
                    guard let action = Action(rawValue: text) else {
                        throw CommandError("unknown state action '\(text)'; the actions are 'show', 'history' and 'migrate'", exitCode: .usage)
                    }
                    return action
                })
    }

    static func run(_ options: Options, context: CommandContext) async throws -> ExitCode {
        let (manifestsPath, environment, format) = (options.manifestsPath, options.environment, options.format)
        let (versionNumber, action) = (options.versionNumber, options.action ?? .show)
        let manifests = try EnvironmentOptions.workspaceStep(context: context) { () throws(Workspace.Failure) in
            try Workspace.load(directory: context.url(manifestsPath), displayPath: manifestsPath)
        }
        let owner = StateOwner(bundleId: manifests.app.bundleId, appAppleId: manifests.app.appAppleId, environment: environment)
        let snapshotPath = manifests.app.settings(for: environment)?.snapshotPath
        let location: StateLocation
        if let store = options.store {
            location = store
        } else if let declared = Workspace.declaredStateLocation(of: manifests.app, environment: environment) {
            location = declared
        } else {
            throw CommandError(StateLocationError("", "is not configured for \(environment.rawValue): pass --state-store LOCATION, or set environments.\(environment.rawValue).stateStore in the App manifest").description, exitCode: .usage)
        }

        let configuration = try EnvironmentOptions.transportConfiguration(context)
        if action == .migrate, let source = options.from {
            return try await migrate(from: source, to: location, owner: owner, context: context,
                                     transport: CurlHTTPClient(configuration: configuration))
        }
        if action == .history || versionNumber != nil {
            return try await history(location: location, owner: owner, version: versionNumber, format: format, context: context,
                                     transport: CurlHTTPClient(configuration: configuration))
        }
        let read: StateRead
        let store: any StateDocumentStore
        do {
            store = try StateStores.open(location, owner: owner, environment: context.environment,
                                         transport: CurlHTTPClient(configuration: configuration))
            // A snapshot file elsewhere than the store is migrated from while the store is empty.
            read = try await StateStores.read(store, legacySnapshotPath: snapshotPath)
        } catch {
            throw CommandError(error.description)
        }

        switch format {
        case .json:
            let shown = Shown(store: store.location.description, version: read.version?.rawValue,
                              migratedFrom: read.migratedFrom, document: try read.document?.sealed())
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted]
            encoder.dateEncodingStrategy = .utcMilliseconds
            context.console.write(String(decoding: try encoder.encode(shown), as: UTF8.self) + "\n")
        case .text:
            context.console.write(text(read, owner: owner, store: store.location.description))
        }
        return .success
    }

    /// `state history`, or `state show --version N`: the versions the store kept.
    static func history(location: StateLocation, owner: StateOwner, version: Int?, format: StatusFormat, context: CommandContext,
                        transport: any HTTPTransport) async throws(CommandError) -> ExitCode {
        let versions: [StoredStateVersion]
        let name: String
        do throws(StateStoreError) {
            let store = try StateStores.open(location, owner: owner, environment: context.environment, transport: transport)
            name = store.location.description
            versions = try await store.versions()
        } catch {
            throw CommandError(error.description)
        }
        if let version {
            guard let found = versions.first(where: { $0.number == version }) else {
                throw CommandError("\(name) keeps no version \(version); 'state history' lists the versions it keeps: "
                                   + versions.map { "#\($0.number)" }.joined(separator: ", "))
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted]
            encoder.dateEncodingStrategy = .utcMilliseconds
            if format == .json {
                let shown = Shown(store: name, version: String(version), migratedFrom: nil, document: found.document)
                do { context.console.write(String(decoding: try encoder.encode(shown), as: UTF8.self) + "\n") } catch {
                    throw CommandError("cannot encode the document: \(error)")
                }
            } else {
                context.console.write(text(StateRead(document: found.document, version: nil, migratedFrom: nil), owner: owner,
                                           store: "\(name), version #\(version)"))
            }
            return .success
        }
        let entries = StateHistoryEntry.entries(versions)
        if format == .json {
            do { context.console.write(try StateHistoryView.json(entries, store: name)) } catch {
                throw CommandError("cannot encode the history: \(error)")
            }
        } else {
            context.console.write(StateHistoryView.text(entries, store: name))
        }
        return .success
    }

    /// `state migrate`: moves the document with its history, then says where things stand.
    static func migrate(from source: StateLocation, to destination: StateLocation, owner: StateOwner, context: CommandContext,
                        transport: any HTTPTransport) async throws(CommandError) -> ExitCode {
        let moved = try await StateMigration.move(from: source, to: destination, owner: owner, environment: context.environment,
                                                  transport: transport)
        let carried = moved.earlierVersions
        context.console.print("Moved the state of \(owner) from \(moved.from) to \(moved.to) (digest \(moved.digest)), "
                              + (carried == 0 ? "with no earlier version: the old store kept none."
                                              : "with its history: \(carried) earlier version\(carried == 1 ? "" : "s") ('state history' lists them)."))
        context.console.print("The document in \(moved.from) is left as it was; point the App's stateStore (and serve) at "
                              + "\(moved.to), then remove the old one.")
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
