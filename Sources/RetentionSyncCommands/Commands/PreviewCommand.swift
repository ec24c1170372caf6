import CLIKit
import Foundation
import HTTPClient
import Manifests
import Preview
import Reconciler
import RetentionMessagingModels
import StateLocations
import StateStore
import Views
import Operations

struct PreviewCommand: ParsedCommand {
    static let name = "preview"
    static let summary = "Write a static HTML preview of the messages as the sheet shows them"
    static let defaultOut = "preview"
    static let manifests = Option.manifests()
    static let out = Option("--out", value: "DIR", completion: .directory, default: defaultOut, help: [
        "The folder to write the site into; replaced whole, and only when it is",
        "a previous preview",
    ])
    static let env = Option("--env", value: "ENV", of: Environment.self,
                            help: ["Only this environment's review states (default: every environment the App manages)"])
    static let offline = Option("--offline", help: ["Do not read the state store: review states show as unknown"])

    static let helpPage = HelpPage(
        about: """
        Writes a self-contained static site to DIR: index.html lists every message and locale with its
        review state per environment, and one page per message draws each localization as the
        cancellation sheet would show it (header, body, image, bullet points, what an offer adds) at
        320 and 430 px, light and dark, right to left where the locale is. It is an approximation,
        and every page says so. No JavaScript, no request of any kind: images are embedded and a
        Content-Security-Policy forbids every fetch.
        Review states come from the state document each environment's store holds (as 'state show'
        reads it), never from Apple; with --offline, or when the store cannot be read, they show as
        unknown. Valid manifests only: invalid ones fail as in 'validate'.
        """,
        options: [manifests, out, env, offline], column: 18,
        footer: "Exit status: 0 when the site was written, 1 when the manifests are invalid or the folder cannot be written, 64 for a wrong command line.")

    struct Options: CommandOptions {
        var manifestsPath: String
        var outPath: String
        var only: Environment?
        var offline: Bool

        func validate() throws(CommandError) {}
    }

    static func parse(_ arguments: inout Arguments, context: CommandContext) throws(CommandError) -> Options {
        Options(manifestsPath: try arguments.value(Self.manifests, as: String.self) ?? Option.defaultManifests,
                outPath: try arguments.value(Self.out, as: String.self) ?? defaultOut,
                only: try arguments.value(Self.env, as: Environment.self),
                offline: arguments.flag(Self.offline))
    }

    static func run(_ options: Options, context: CommandContext) async throws -> ExitCode {
        let path = options.manifestsPath
        let manifests = try EnvironmentOptions.workspaceStep(context: context) { () throws(Workspace.Failure) in
            try Workspace.load(directory: context.url(path), displayPath: path)
        }
        let declared = manifests.app.environments.map(\.environment)
        let environments = options.only.map { [$0] } ?? (declared.isEmpty ? Environment.allCases : declared)
        var reviews: [EnvironmentReview] = []
        for environment in environments {
            reviews.append(options.offline ? EnvironmentReview(environment: environment, source: .notRead)
                                           : try await review(manifests, environment: environment, context: context))
        }
        let site = PreviewSite(PreviewInput(manifests: manifests.set, environments: reviews))
        let written: (files: Int, bytes: Int)
        do {
            written = try PreviewFolder.write(site, to: context.url(options.outPath), displayPath: options.outPath)
        } catch {
            throw CommandError(error.description)
        }
        let localizations = manifests.set.messages.reduce(0) { $0 + $1.localizations.count }
        let kilobytes = (written.bytes + 1023) / 1024
        context.console.print("\(options.outPath)/index.html: \(manifests.set.messages.count) message page\(manifests.set.messages.count == 1 ? "" : "s"), \(localizations) localization\(localizations == 1 ? "" : "s"), \(kilobytes) KB")
        return .success
    }

    /// One environment's review states from its state document: one read of the store, no call to
    /// Apple. A store that cannot be read is a warning, and the states show as unknown.
    static func review(_ manifests: ValidatedManifests, environment: Environment, context: CommandContext) async throws -> EnvironmentReview {
        guard let location = Workspace.declaredStateLocation(of: manifests.app, environment: environment) else {
            return EnvironmentReview(environment: environment, source: .notConfigured)
        }
        let document = location.document(for: environment)
        let shown = describe(document, manifestsDirectory: manifests.set.directory)
        let owner = StateOwner(bundleId: manifests.app.bundleId, appAppleId: manifests.app.appAppleId, environment: environment)
        let configuration = try EnvironmentOptions.transportConfiguration(context)
        let read: StateRead
        do {
            let store = try StateStores.open(location, owner: owner, environment: context.environment,
                                             transport: CurlHTTPClient(configuration: configuration))
            read = try await store.read()
        } catch {
            context.console.error("warning: \(environment.rawValue) review states are unknown: \(error)")
            return EnvironmentReview(environment: environment, source: .unreadable("\(error)"))
        }
        guard let state = read.document else {
            return EnvironmentReview(environment: environment, source: .emptyStore(shown))
        }
        let desired: DesiredState
        do {
            desired = try Workspace.derive(manifests, environment: environment)
        } catch {
            return EnvironmentReview(environment: environment, source: .unreadable(DiagnosticsView.describe(error)))
        }
        let records = Dictionary(state.content.map { ($0.identifier, $0) }, uniquingKeysWith: { first, _ in first })
        let imageNames = Dictionary(desired.images.map { ($0.identifier, $0.names.joined(separator: ", ")) }, uniquingKeysWith: { first, _ in first })
        let externalImages = desired.externalImagesByIdentifier
        var states: [String: [String: ReviewMark]] = [:]
        for message in desired.messages {
            guard let current = records[message.identifier]?.currentReviewState else { continue }
            let held = message.imageIdentifiers.compactMap { identifier -> String? in
                if let external = externalImages[identifier] {
                    // Never uploaded: its state is what an apply recorded when it adopted the image.
                    let imageState = state.adoption(of: identifier)?.reviewStates.last?.state ?? "not recorded"
                    return imageState == "APPROVED" ? nil : "\(external.name) (external) \(imageState)"
                }
                let imageState = records[identifier]?.currentReviewState?.state ?? "not uploaded"
                return imageState == "APPROVED" ? nil : "\(imageNames[identifier] ?? identifier) \(imageState)"
            }
            states[message.name, default: [:]][message.locale] = ReviewMark(state: current.state, imagesNotApproved: Array(Set(held)).sorted())
        }
        return EnvironmentReview(environment: environment, source: .stateDocument(shown), states: states)
    }

    /// A store as the pages name it: an S3 location as written, a file relative to the manifests
    /// (pages must not carry a machine's absolute paths, so that they are the same on every checkout).
    static func describe(_ location: StateLocation, manifestsDirectory: URL) -> String {
        guard case .file(let path) = location else { return location.description }
        let base = manifestsDirectory.standardizedFileURL.path + "/"
        return path.hasPrefix(base) ? String(path.dropFirst(base.count)) + " in the manifest folder"
                                    : "the file " + URL(fileURLWithPath: path).lastPathComponent
    }
}
