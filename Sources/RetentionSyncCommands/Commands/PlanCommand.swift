import Basics
import CLIKit
import Foundation
import Manifests
import Preview
import Reconciler
import StateStore
import RetentionMessaging
import RetentionMessagingModels
import Runtime
import Views
import Operations

struct PlanCommand: ParsedCommand {
    static let name = "plan"
    static let summary = "Show what apply would do"
    static let format = Option("--format", value: "FORMAT", of: PlanFormat.self, default: .text,
                               help: ["How to print the plan: markdown for a pull-request comment, github for",
                                      "the text in a GitHub Actions group with annotations"])
    static let out = Option("--out", value: "FILE", completion: .file, help: ["Save the plan (JSON, no secrets) for 'apply --plan FILE'"])
    static let snapshotOut = Option("--snapshot-out", value: "FILE", completion: .file,
                                    help: ["Write the runtime snapshot apply would publish (for 'decide' previews)"])
    static let preview = Option("--preview", value: "DIR", completion: .directory, help: [
        "Write a static HTML preview of the message localizations the plan",
        "changes, before and after (as 'preview' draws them), into DIR; nothing",
        "when no message changes",
    ])
    static let detailedExitcode = Option("--detailed-exitcode", help: [
        "Exit 0 when nothing can be done now (in sync, or only waiting for",
        "review), 2 when ready actions are pending, 3 when only a remote",
        "condition needs a person (content rejected after the main branch used",
        "it, a realtime URL waiting for a performance test), 1 on error",
    ])
    static let prune = PruneOptions.prune(help: ["Also plan deleting remote content nothing derives or uses"])
    /// A GitHub comment's room.
    static let defaultMarkdownMaxChars = 65_000
    static let markdownMaxChars = Option("--markdown-max-chars", value: "N", of: Int.self, default: defaultMarkdownMaxChars,
                                         help: ["Split the Markdown into comments of at most N characters"])

    static let results = Option("--results", help: [
        "Also show the current results (from the events beside the state) of the",
        "rules and split groups this plan changes: a change's evidence, in review",
    ])

    static let resultsAsOf = Option("--as-of", value: "DATE", of: DateArgument.self, help: [
        "With --results: read them as of this time instead of now (an emulator's",
        "moved clock, as results --as-of)",
    ])

    static let helpPage = HelpPage(
        about: """
        Reads the environment with the fewest calls (two list calls, one GET /default per declared
        product/locale pair, the realtime URL) and the published snapshot, then prints what apply
        would do: each action with its reason and state (ready, blocked waiting for App Review, or
        error), what the remote holds that the manifests do not derive, and what the apply will cost.
        """,
        options: EnvironmentOptions.options + [format, out, snapshotOut, preview, detailedExitcode, prune] + PruneOptions.following
            + [markdownMaxChars, results, resultsAsOf, PendingWarnDaysOption.option],
        column: 25,
        footer: EnvironmentOptions.credentialsHelp)

    struct Options: CommandOptions {
        var environment: EnvironmentOptions
        var format: PlanFormat
        var out: String?
        var snapshotOut: String?
        /// `--preview DIR`.
        var previewPath: String?
        var detailed: Bool
        var pruneSettings: PruneSettings
        /// `--markdown-max-chars`.
        var maxCharacters: Int
        var warnDays: Int
        var withResults: Bool
        var resultsAsOf: DateArgument?

        var planOptions: PlanOptions { pruneSettings.planOptions }

        func validate() throws(CommandError) {
            if resultsAsOf != nil, !withResults {
                throw CommandError("--as-of dates the results plan --results shows: give --results too", exitCode: .usage)
            }
        }
    }

    static func parse(_ arguments: inout Arguments, context: CommandContext) throws(CommandError) -> Options {
        Options(environment: try EnvironmentOptions.parse(&arguments, context: context),
                format: try arguments.value(Self.format, as: PlanFormat.self) ?? .text,
                out: try arguments.value(Self.out), snapshotOut: try arguments.value(Self.snapshotOut),
                previewPath: try arguments.value(Self.preview),
                detailed: arguments.flag(Self.detailedExitcode),
                pruneSettings: try PruneSettings.parse(&arguments, prune: Self.prune),
                maxCharacters: try markdownCharacters(&arguments), warnDays: try PendingWarnDaysOption.read(&arguments),
                withResults: arguments.flag(Self.results), resultsAsOf: try arguments.value(Self.resultsAsOf, as: DateArgument.self))
    }

    /// `--markdown-max-chars`: positive, and room for a section's fold and one line.
    static func markdownCharacters(_ arguments: inout Arguments) throws(CommandError) -> Int {
        let count = try arguments.value(markdownMaxChars, as: Int.self, in: 1..., expected: "a positive number") ?? defaultMarkdownMaxChars
        guard count >= PlanView.minimumMarkdownCharacters else {
            throw CommandError("--markdown-max-chars must be at least \(PlanView.minimumMarkdownCharacters): a comment needs room for a section's fold and one line", exitCode: .usage)
        }
        return count
    }

    static func run(_ options: Options, context: CommandContext) async throws -> ExitCode {
        try await plan(options, context: context, provider: .live)
    }

    /// Parses, checks and plans against the API the caller chose (the tests': the emulator).
    static func execute(_ arguments: inout Arguments, context: CommandContext, provider: APIProvider) async throws(CommandError) -> ExitCode {
        return try await plan(parsed(&arguments, context: context), context: context, provider: provider)
    }

    static func plan(_ parsed: Options, context: CommandContext, provider: APIProvider) async throws(CommandError) -> ExitCode {
        let options = parsed.environment
        let outcome = try await PlanOperation.plan(
            PlanRequest(environment: options, pruneSettings: parsed.pruneSettings, warnDays: parsed.warnDays, withResults: parsed.withResults,
                        resultsAsOf: parsed.resultsAsOf?.time),
            context: context, provider: provider)
        let planned = outcome.planned
        try show(outcome.presentation, format: parsed.format, maxCharacters: parsed.maxCharacters, context: context)
        if let out = parsed.out {
            try writeFile(try json(planned.plan), to: out, context: context)
            context.console.error("Saved the plan to \(out); apply it with: retention-sync apply --env \(options.environment.rawValue) --plan \(out)")
        }
        if let snapshotOut = parsed.snapshotOut {
            guard let snapshot = planned.snapshot?.snapshot else {
                throw CommandError("no snapshot to write: \(options.environment.rawValue) has no state store (set environments.\(options.environment.rawValue).stateStore in the App manifest, or pass --state-store)")
            }
            let encoded: Data
            do { encoded = try snapshot.encoded() } catch { throw CommandError("cannot encode the snapshot: \(error)") }
            try writeFile(String(decoding: encoded, as: UTF8.self), to: snapshotOut, context: context)
        }
        if let previewPath = parsed.previewPath {
            try writePreview(planned, manifests: outcome.manifests, to: previewPath, context: context)
        }
        // On standard error, so that JSON and Markdown on standard output stay whole.
        for line in PlanOperation.closingLines(planned.plan) { context.console.error(line) }
        return PlanOperation.exitCode(planned.plan, detailed: parsed.detailed)
    }

    /// Writes everything the run shows through the one view `format` names.
    static func show(_ presentation: PlanPresentation, format: PlanFormat, maxCharacters: Int = defaultMarkdownMaxChars,
                     context: CommandContext) throws(CommandError) {
        let view = format.view(maxCharacters: maxCharacters, base: context.currentDirectory.path)
        do { context.console.write(try view.render(presentation, console: context.console)) } catch {
            throw CommandError("cannot write the plan: \(error)")
        }
    }

    static func render(_ plan: Plan, format: PlanFormat, maxCharacters: Int = defaultMarkdownMaxChars, context: CommandContext,
                       manifests: ManifestSet? = nil) throws(CommandError) {
        try show(PlanPresentation(plan: plan, manifests: manifests), format: format, maxCharacters: maxCharacters, context: context)
    }

    /// `--preview DIR`: the site of the localizations the plan changes, written whole; when none
    /// changes, no site, and a previous preview in DIR is removed so that none is mistaken for this plan's.
    static func writePreview(_ planned: PlanResult, manifests: ManifestSet, to path: String, context: CommandContext) throws(CommandError) {
        let environment = planned.plan.environment.rawValue
        let changes = planned.localizationChanges
        let defaults = comparedDefaults(planned)
        let folder = context.url(path)
        guard !changes.isEmpty || !defaults.isEmpty else {
            let removed: Bool
            do { removed = try PreviewFolder.removePrevious(at: folder, displayPath: path) } catch { throw CommandError(error.description) }
            context.console.error("No message changes in \(environment): no preview written to \(path)" + (removed ? " (the previous preview there was removed)" : ""))
            return
        }
        let byName = Dictionary(manifests.images.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var images: [String: ImageManifest] = [:]
        for image in planned.desired.images {
            if let manifest = byName[image.name] { images[image.identifier] = manifest }
        }
        let site = PlanPreviewSite(PlanPreviewInput(bundleId: planned.plan.bundleId, environment: planned.plan.environment,
                                                    localizations: changes.map(compared), images: images,
                                                    externalImages: planned.desired.externalImagesByIdentifier.mapValues(\.name),
                                                    defaults: defaults))
        do { try PreviewFolder.write(site, to: folder, displayPath: path, option: "--preview") } catch { throw CommandError(error.description) }
        let messages = site.messageCount
        let switched = defaults.isEmpty ? "" : " and \(defaults.count) default switch\(defaults.count == 1 ? "" : "es")"
        context.console.error("Wrote the preview of \(messages) changed message\(messages == 1 ? "" : "s") (\(changes.count) localization\(changes.count == 1 ? "" : "s"))"
                              + switched + " in \(environment) to \(path)/index.html")
    }

    /// The defaults the plan switches from one message to another, each side with the text it is
    /// known by: a managed message's body, the body the state recorded for an earlier upload, or the
    /// header and body an external message is assumed to show in the pair's locale.
    static func comparedDefaults(_ planned: PlanResult) -> [ComparedDefault] {
        let messages = KnownMessages(desired: planned.desired, document: planned.remote.state?.document)
        func known(_ identifier: String, locale: String) -> (name: String, body: UploadMessageRequestBody?) {
            guard let message = messages.message(identifier, locale: locale) else { return (identifier + " (not in the manifests)", nil) }
            switch message.origin {
            case .managed: return (message.name, message.body)
            case .external(let assumed): return (message.name + (assumed == nil ? " (external, content unknown)" : " (external; assumed text)"), message.body)
            case .earlierUpload: return (message.name + " (an earlier upload)", message.body)
            }
        }
        return planned.plan.actions.compactMap { action -> ComparedDefault? in
            guard case .set(let pair, let to, _, let current?, _)? = action.change.as(DefaultChange.self) else { return nil }
            let before = known(current, locale: pair.locale), after = known(to, locale: pair.locale)
            return ComparedDefault(product: pair.productId, locale: pair.locale, beforeName: before.name, afterName: after.name,
                                   before: before.body.map { ComparedLocalization.Version(identifier: current, body: $0) },
                                   after: after.body.map { ComparedLocalization.Version(identifier: to, body: $0) },
                                   state: action.state.rawValue)
        }
    }

    static func compared(_ change: LocalizationChange) -> ComparedLocalization {
        func version(_ version: LocalizationVersion?) -> ComparedLocalization.Version? {
            version.map { ComparedLocalization.Version(identifier: $0.identifier, body: $0.body) }
        }
        let kind: ComparedLocalization.Change = switch change.kind {
        case .new: .new
        case .changed: .changed
        case .removed: .removed
        case .uploadedAgain: .uploadedAgain
        }
        return ComparedLocalization(message: change.name, locale: change.locale, change: kind, before: version(change.before),
                                    after: version(change.after), changedFields: change.fields.map(\.field), upload: change.upload?.rawValue)
    }

    static func json(_ plan: Plan) throws(CommandError) -> String {
        do { return try PlanJSON.encode(plan) } catch { throw CommandError("cannot encode the plan: \(error)") }
    }
}
