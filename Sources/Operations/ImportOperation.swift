import Basics
public import CLIKit
import Foundation
import Manifests
import Reconciler
import RetentionMessaging
import RetentionMessagingModels
import StateStore
import Synchronization
import Views
import YAML
#if canImport(Glibc)
import Glibc
#endif

/// `import` as a use case: reads everything Apple holds in one environment (every declared default
/// included), works out what the manifests do not declare (`ImportPlan`), and writes it as a new
/// manifest file, whole or not at all, plus Apple's realtime URL into the App manifest when it
/// declares none. Stopped while reading, it has written nothing.
public enum ImportOperation {
    /// With `seedState`, what the complete read showed is recorded in the state store afterwards
    /// (`seed`), so the next plan reads only its window of defaults.
    public static func run(_ target: ReconcileTarget, context: CommandContext, provider: APIProvider,
                           handleSignals: Bool = false, seedState: Bool = false, vendor: VendorNames? = nil,
                           acceptDrift: Bool = false) async throws(CommandError) -> ExitCode {
        var environmentOptions = target
        // Every declared default is read: the state record's trust is no substitute here.
        environmentOptions.refreshDefaults = .all
        let environment = environmentOptions.environment
        var session = try ReconcileSession.open(environmentOptions, context: context, provider: provider)
        session.reconciler.onReadPlanned = nil // import announces its own read below
        if seedState && session.reconciler.state == nil {
            throw CommandError("import --seed-state needs a state store: declare environments.\(environment.rawValue).stateStore in the App manifest "
                               + "(or give --state-store); nothing was read or written", exitCode: .usage)
        }
        let directory = context.url(environmentOptions.manifestsPath)
        for name in NewFile.removeAbandoned(in: directory, prefix: "imported-") {
            context.console.error("Removed \(environmentOptions.manifestsPath)/\(name), the unfinished file of an import that was killed while writing.")
        }
        let estimate = ReadEstimate(environment: environment,
                                      pairs: session.workspace.pairsNamedByManifests.union(session.desired.declaredPairs).count)
        context.console.write("Importing \(environment.rawValue) of \(session.desired.bundleId): \(estimate.text)\n")
        let progress = CallProgress(expected: estimate.calls, label: "importing \(environment.rawValue)", console: context.console)
        session.reconciler.api = ProgressReportingAPI(base: session.reconciler.api, progress: progress)
        // Killed while reading, import has written nothing; the write at the end is one atomic step.
        let interruption = handleSignals ? ImportInterruption.install(console: context.console) : nil
        defer { interruption?.uninstall() }
        let planned: PlanResult
        do {
            var options = PlanOptions()
            options.readEveryNamedPair = true
            planned = try await session.plan(options)
        } catch {
            throw CommandError("import wrote nothing: \(error.message)", exitCode: error.exitCode)
        }
        let result = ImportPlan.make(planned, manifests: session.manifests, vendor: vendor)
        context.console.write("Read in \(planned.remote.apiCalls) calls.\n")
        for note in result.notes { context.console.write("note: \(note)\n") }
        if !result.drifted.isEmpty {
            let count = result.drifted.count
            context.console.write("\(count) default\(count == 1 ? " differs" : "s differ") from the manifests (changed at Apple since they were "
                                  + (acceptDrift ? "written); --accept-drift writes \(count == 1 ? "it" : "them") into the manifests as Apple holds "
                                        + (count == 1 ? "it" : "them") + ":\n"
                                     : "written); the next plan sets \(count == 1 ? "it" : "them") back unless you change the Defaults "
                                        + "(import --accept-drift writes \(count == 1 ? "it" : "them") as Apple holds \(count == 1 ? "it" : "them")):\n"))
            for drift in result.drifted {
                let atApple = drift.atApple + (drift.atAppleName.map { " (\($0))" } ?? "")
                context.console.write("  \(drift.pair) is \(atApple) at Apple, \(drift.assigned) in the manifests\n")
            }
        }
        // What the vendor left that needs fixing is said before the move, not found after it.
        for problem in planned.plan.inherited { context.console.write("attention: \(problem.description)\n") }
        guard !result.isEmpty || result.realtimeURL != nil || (acceptDrift && !result.drifted.isEmpty) else {
            context.console.write("Nothing new to import: every message, image and default Apple holds in \(environment.rawValue) is in the manifests.\n")
            try await seed(seedState, session: session, planned: planned, target: environmentOptions, context: context)
            return interruption?.finish() ?? .success
        }
        interruption?.writing()
        try pair(result.pairings, environment: environment, manifestsPath: environmentOptions.manifestsPath, context: context)
        if !(result.externals.isEmpty && result.images.isEmpty && result.defaults.isEmpty) {
            let written = try write(result.yaml(environment: environment), in: directory, environment: environment)
            let images = result.images.isEmpty ? "" : "\(result.images.count) external image\(result.images.count == 1 ? "" : "s"), "
            let namedCount = result.externals.filter { !$0.namedAt.isEmpty }.count
            let named = vendor == nil ? "" : " (\(namedCount) named by --names)"
            context.console.write("Wrote \(environmentOptions.manifestsPath)/\(written): \(result.externals.count) external message\(result.externals.count == 1 ? "" : "s")"
                                  + named + ", " + images + "\(result.defaults.count) default\(result.defaults.count == 1 ? "" : "s").\n")
        }
        if let url = result.realtimeURL {
            try declareRealtimeURL(url, in: session.manifests.app, environment: environment, manifestsPath: environmentOptions.manifestsPath,
                                   date: session.reconciler.clock.time().formatted(.date), context: context)
        }
        let accepted = acceptDrift ? try writeDrift(result, planned: planned, manifests: session.manifests, manifestsPath: environmentOptions.manifestsPath,
                                                     context: context) : 0
        try await seed(seedState, session: session, planned: planned, target: environmentOptions, context: context)
        let driftLeft = result.drifted.count - accepted
        context.console.write("Next: retention-sync validate, then retention-sync plan --env \(environment.rawValue) ("
                              + (driftLeft == 0 ? "it should say No changes" : "it sets back the defaults listed above that are still assigned otherwise")
                              + "), and commit the "
                              + (result.isEmpty || result.realtimeURL == nil ? "file" : "files") + ".\n")
        return interruption?.finish() ?? .success
    }

    /// Records in the state store what this import's complete read showed about the manifests as they
    /// now are (the defaults and realtime URL Apple holds as they assign them, the review states), so
    /// the next plan re-reads only its window (`--refresh-defaults`). No call is made; the write is
    /// conditional on the record the read began with. Without `seedState`, a read long enough to matter
    /// says what seeding would save.
    static func seed(_ seedState: Bool, session: ReconcileSession, planned: PlanResult, target: ReconcileTarget,
                     context: CommandContext) async throws(CommandError) {
        guard seedState else {
            let pairs = planned.desired.declaredPairs.count
            if session.reconciler.state != nil, case .window(let window) = DefaultsRefresh.standard, pairs > window {
                context.console.write("note: the next plan reads the defaults again unless the state vouches for them; import --seed-state "
                                      + "records what this read showed, so it re-reads only \(DefaultsRefresh.standard) of them.\n")
            }
            return
        }
        let store = planned.remote.stateStoreName ?? "the state store"
        let desired = try target.openWorkspace(context: context).desired
        do {
            if let vouched = try await session.reconciler.seedState(desired, remote: planned.remote) {
                context.console.write("Seeded the state in \(store): it vouches for \(vouched) default\(vouched == 1 ? "" : "s") as this read found "
                                      + "\(vouched == 1 ? "it" : "them"), so the next plan re-reads \(DefaultsRefresh.standard) a run, not all.\n")
            } else {
                context.console.write("The state in \(store) already records what this read found; nothing to seed.\n")
            }
        } catch {
            throw CommandError("the manifests were written, but seeding the state in \(store) failed: \(error.description) "
                               + "(the next plan reads every default; run import --seed-state again with credentials that may write the store)")
        }
    }

    /// Writes each drifted default into the `Defaults` entry that assigns it, naming the message Apple
    /// shows (`DefaultsDriftEdit`), each file written whole; a drift it cannot write (no name gives that
    /// locale Apple's message, or the entry is not written on one line) is a note saying what to change.
    /// Returns how many were written.
    static func writeDrift(_ result: ImportPlan, planned: PlanResult, manifests: ManifestSet, manifestsPath: String,
                           context: CommandContext) throws(CommandError) -> Int {
        let environment = planned.desired.environment
        // What naming `name` for a pair in `locale` shows there.
        func shows(_ name: String, _ locale: String) -> String? {
            if let managed = planned.desired.messages.first(where: { $0.name == name && $0.locale == locale }) { return managed.identifier }
            if let external = manifests.externalMessage(named: name) { return external.identifier(in: environment, locale: locale) }
            if let imported = result.externals.first(where: { $0.name == name }) {
                return imported.localizations.isEmpty ? imported.identifier : imported.localizations[locale]
            }
            return nil
        }
        var byPath: [String: [DefaultsDriftEdit.Change]] = [:]
        for drift in result.drifted {
            guard let name = drift.atAppleName, shows(name, drift.pair.locale) == drift.atApple else {
                context.console.write("note: \(drift.pair) shows \(drift.atApple) at Apple, which no message in the manifests shows in \(drift.pair.locale): "
                                      + "not written; declare it (an ExternalMessage) and assign it in the Defaults yourself.\n")
                continue
            }
            guard let file = manifests.defaults.first(where: { $0.productId == drift.pair.productId && $0.locale == drift.pair.locale })?.location.file else { continue }
            byPath[manifestPath(of: file, in: manifestsPath), default: []].append(DefaultsDriftEdit.Change(pair: drift.pair, from: drift.assigned, to: name))
        }
        var written = 0
        for (path, changes) in byPath.sorted(by: { $0.key < $1.key }) {
            let text = String(decoding: try readFile(path, what: "a manifest", context: context), as: UTF8.self)
            let edit = DefaultsDriftEdit.apply(changes, to: text, file: path)
            for (change, reason) in edit.refused {
                context.console.write("note: \(change.pair) was left assigned to \(change.from) (\(reason)); assign it \(change.to) yourself.\n")
            }
            guard !edit.done.isEmpty else { continue }
            try OutputFile.write(edit.text, to: path, context: context)
            written += edit.done.count
            context.console.write("Wrote the drift into \(path): \(edit.done.count) default\(edit.done.count == 1 ? " now assigns" : "s now assign") "
                                  + "what Apple holds (" + edit.done.map { "\($0.pair) → \($0.to)" }.joined(separator: ", ") + ").\n")
        }
        return written
    }

    /// Where a manifest a location names is, as the user wrote the manifest directory: manifests are
    /// the directory's own files, never in subdirectories.
    static func manifestPath(of file: String, in manifestsPath: String, otherwise fallback: String? = nil) -> String {
        let name = file.split(separator: "/").last.map(String.init) ?? fallback ?? file
        return manifestsPath.hasSuffix("/") ? manifestsPath + name : manifestsPath + "/" + name
    }

    /// Adds each pairing's identifier to its external message, as a minimal edit of the file that
    /// declares it (each file written whole); an edit that cannot be made safely leaves the file as it
    /// is, and the note gives the line to add.
    static func pair(_ pairings: [ImportPlan.Pairing], environment: Environment, manifestsPath: String,
                     context: CommandContext) throws(CommandError) {
        var byPath: [String: [ImportPlan.Pairing]] = [:]
        for pairing in pairings {
            byPath[manifestPath(of: pairing.file, in: manifestsPath), default: []].append(pairing)
        }
        for (path, pairings) in byPath.sorted(by: { $0.key < $1.key }) {
            var text = String(decoding: try readFile(path, what: "a manifest", context: context), as: UTF8.self)
            var paired: [String] = []
            for pairing in pairings {
                switch ExternalIdentifierEdit.adding(pairing.identifier, environment: environment, toExternalMessage: pairing.name, locale: pairing.locale,
                                                     in: text, file: path) {
                case .success(let edited):
                    text = edited
                    paired.append(pairing.name + (pairing.locale.map { " (\($0))" } ?? ""))
                case .failure(let refusal):
                    context.console.write("note: '\(pairing.name)' is \(pairing.identifier) in \(environment.rawValue) (the defaults it is assigned to "
                                          + "show it there), but \(path) was left as it is for it (\(refusal)); add \(environment.rawValue): "
                                          + "\(pairing.identifier) under its \(pairing.locale.map { "localizations.\($0)" } ?? "identifiers") yourself.\n")
                }
            }
            guard !paired.isEmpty else { continue }
            try OutputFile.write(text, to: path, context: context)
            context.console.write("Paired \(paired.count) external message\(paired.count == 1 ? "" : "s") in \(path) with \(environment.rawValue)'s "
                                  + "identifier\(paired.count == 1 ? "" : "s"): the defaults \(paired.count == 1 ? "it is" : "they are") assigned to show "
                                  + "the same message there (\(paired.joined(separator: ", "))).\n")
        }
    }

    /// Writes the realtime URL Apple holds into the App manifest as a minimal edit, so that a later
    /// switch of the URL is a diff that a revert undoes. When the file cannot be edited safely, it
    /// is left as it is and the note gives the line to add.
    static func declareRealtimeURL(_ url: String, in app: AppManifest, environment: Environment, manifestsPath: String,
                                   date: String, context: CommandContext) throws(CommandError) {
        let field = "environments.\(environment.rawValue).realtimeURL"
        let path = manifestPath(of: app.location.file, in: manifestsPath, otherwise: "app.yaml")
        let comment = "Imported by 'retention-sync import --env \(environment.rawValue)' on \(date): Apple's realtime URL then."
        let text = String(decoding: try readFile(path, what: "the App manifest", context: context), as: UTF8.self)
        switch AppRealtimeURLEdit.declaring(url, environment: environment, comment: comment, in: text, file: path) {
        case .success(let edited):
            try OutputFile.write(edited, to: path, context: context)
            context.console.write("Apple's realtime URL is \(url): declared it as \(field) in \(path), so that reverting a later "
                                  + "change of the URL sets it back.\n")
        case .failure(let refusal):
            context.console.write("note: Apple's realtime URL is \(url); \(path) was left as it is (\(refusal)). Declare it yourself "
                                  + "as \(field): \(url), so that reverting a later change of the URL sets it back.\n")
        }
    }

    /// Writes `text` to the first free `imported-<env>[-N].yaml`, whole or not at all, never over
    /// an existing file (see `NewFile`).
    static func write(_ text: String, in directory: URL, environment: Environment) throws(CommandError) -> String {
        for index in 1...999 {
            let name = index == 1 ? "imported-\(environment.rawValue).yaml" : "imported-\(environment.rawValue)-\(index).yaml"
            let url = directory.appendingPathComponent(name)
            if FileManager.default.fileExists(atPath: url.path) { continue }
            if try NewFile.create(Data(text.utf8), at: url) { return name }
        }
        throw CommandError("cannot find a free imported-\(environment.rawValue)-N.yaml name in \(directory.path)")
    }
}

/// SIGINT and SIGTERM during an import: while it reads, nothing is written yet, so it stops at
/// once and says so; while it writes its one file (a moment), the write finishes first, whole.
final class ImportInterruption: Sendable {
    private enum Phase { case reading, writing }
    private struct State {
        var phase = Phase.reading
        var received: Int32?
        var watcher: SignalWatcher?
    }

    private let state = Mutex(State())
    private let console: Console

    private init(console: Console) { self.console = console }

    static func install(console: Console) -> ImportInterruption {
        let interruption = ImportInterruption(console: console)
        let watcher = SignalWatcher { number in interruption.receive(number) }
        interruption.state.withLock { $0.watcher = watcher }
        return interruption
    }

    private func receive(_ number: Int32) {
        let reading = state.withLock { state -> Bool in
            if state.received == nil { state.received = number }
            return state.phase == .reading
        }
        guard reading else { return }
        console.error("import stopped by \(SignalWatcher.name(of: number)) while reading Apple: nothing was written. "
                      + "Run it again: it reads everything again (the lists are two calls however many messages there are).")
        _exit(128 + number)
    }

    /// From here the signal waits for the write to end.
    func writing() { state.withLock { $0.phase = .writing } }

    /// The exit code: 128 + the signal when one came during the write (which finished whole).
    func finish() -> ExitCode {
        guard let number = state.withLock({ $0.received }) else { return .success }
        console.error("import received \(SignalWatcher.name(of: number)) while writing its file; the file was written whole first.")
        return ExitCode(128 + number)
    }

    func uninstall() {
        let watcher = state.withLock { state in
            defer { state.watcher = nil }
            return state.watcher
        }
        watcher?.cancel()
    }
}

/// What an import adds: external messages and images for content the tool did not make, and the
/// defaults the manifests do not assign, as Apple holds them.
struct ImportPlan {
    struct External {
        var name: String
        var identifier: String
        var state: String
        /// The lines of `--names` that named it, and the text those rows say it shows.
        var namedAt: [Int] = []
        var assumedText: [AssumedText] = []
        /// A campaign of one message per locale (`--names` rows with one name and their locales):
        /// locale → its identifier here, and each identifier's review state. Empty for one message.
        var localizations: [String: String] = [:]
        var states: [String: String] = [:]

        /// Every identifier it declares here.
        var identifiers: [String] { localizations.isEmpty ? [identifier] : Set(localizations.values).sorted() }
    }

    struct ExternalImage {
        var name: String
        var identifier: String
        var state: String
        var size: ImageSize?
    }

    struct Default {
        var pair: ProductLocale
        var message: String
    }

    /// A declared external message with no identifier in this environment, and the one message the
    /// pairs it is the default of show here: the same campaign, so import adds the identifier.
    struct Pairing {
        var name: String
        var identifier: String
        /// The file that declares it, as the manifests' location names it.
        var file: String
        /// For a localized one (`localizations:`), the locale whose identifier this is.
        var locale: String? = nil
    }

    /// A default the manifests assign that Apple holds otherwise (a vendor or a person changed it
    /// since): the next plan sets it back unless the manifests change.
    struct Drift {
        var pair: ProductLocale
        /// At Apple, and the name the manifests or this import give it.
        var atApple: String
        var atAppleName: String?
        /// What the manifests assign.
        var assigned: String
    }

    var pairings: [Pairing] = []
    var drifted: [Drift] = []
    var externals: [External] = []
    var images: [ExternalImage] = []
    var defaults: [Default] = []
    var notes: [String] = []
    /// Apple's realtime URL, when the App declares none for the environment: import declares it.
    var realtimeURL: String?

    var isEmpty: Bool { externals.isEmpty && images.isEmpty && defaults.isEmpty && pairings.isEmpty }

    /// Pairs each external message that has no identifier in this environment with the one unmanaged
    /// message the pairs it is assigned to show here (the same product and locale name the same
    /// campaign in both environments); when they show several, says so and pairs nothing.
    static func pairings(_ manifests: ManifestSet, remote: RemoteState, unmanaged: Set<String>,
                         environment: Environment) -> (pairings: [Pairing], notes: [String]) {
        var pairings: [Pairing] = [], notes: [String] = [], claimed: [String: String] = [:]
        // Each message without an identifier here, or each locale of a localized one without one.
        let wanted: [(external: ExternalMessageManifest, locale: String?)] = manifests.externalMessages.flatMap { external in
            external.isLocalized
                ? external.localizations.filter { $0.value[environment] == nil }.keys.sorted().map { (external, Optional($0)) }
                : external.hasIdentifier(in: environment) ? [] : [(external, nil)]
        }
        for (external, locale) in wanted {
            let label = external.name + (locale.map { " (\($0))" } ?? "")
            let pairs = manifests.defaults.filter { $0.message == external.name && (locale == nil || $0.locale == locale) }
                .map { ProductLocale(productId: $0.productId, locale: $0.locale) }
            let shown = Set(pairs.compactMap { remote.defaults[$0] }).sorted()
            guard let identifier = shown.first else { continue }
            guard shown.count == 1 else {
                notes.append("external message '\(label)' is the default of \(pairs.count) pairs, which show \(shown.count) different messages "
                             + "in \(environment.rawValue) (\(shown.joined(separator: ", "))): not paired; add the right one under its identifiers yourself")
                continue
            }
            guard unmanaged.contains(identifier) else { continue }
            // A campaign's locales may share one message; two different messages may not.
            if let other = claimed[identifier], other != external.name {
                notes.append("\(identifier) in \(environment.rawValue) is what both '\(other)' and '\(external.name)' are the default of: "
                             + "paired with '\(other)' only")
                continue
            }
            claimed[identifier] = external.name
            pairings.append(Pairing(name: external.name, identifier: identifier, file: external.location.file, locale: locale))
        }
        return (pairings, notes)
    }

    /// `imported-<env>-<first 8 hex digits>` (after `kind`, when given), longer while `names` has it.
    static func name(for identifier: String, environment: Environment, kind: String? = nil, taken names: inout Set<String>) -> String {
        let prefix = "imported-\(environment.rawValue)-" + (kind.map { "\($0)-" } ?? "")
        var length = 8
        var name = prefix + identifier.prefix(length)
        while names.contains(name) && length < 32 {
            length += 4
            name = prefix + identifier.replacingOccurrences(of: "-", with: "").prefix(length)
        }
        names.insert(name)
        return name
    }

    static func make(_ planned: PlanResult, manifests: ManifestSet, vendor: VendorNames? = nil) -> ImportPlan {
        var result = ImportPlan()
        let desired = planned.desired
        let remote = planned.remote
        var names = Set(manifests.messages.map(\.name) + manifests.externalMessages.map(\.name))
        // The names content already has: managed messages by identifier, declared external ones.
        var nameOf: [String: String] = [:]
        for message in desired.messages { nameOf[message.identifier] = message.name }
        for external in desired.externalMessages ?? [] { nameOf[external.identifier] = external.name }
        // Only what nobody recorded: older versions, rollback targets and submissions are the tool's own.
        let unmanaged = planned.plan.inventory.filter { $0.kind == .message && $0.label == .unmanaged }.map(\.identifier).sorted()
        let (pairings, pairingNotes) = pairings(manifests, remote: remote, unmanaged: Set(unmanaged), environment: desired.environment)
        result.pairings = pairings
        result.notes += pairingNotes
        for pairing in pairings { nameOf[pairing.identifier] = pairing.name }
        // Every pair a Defaults document assigns, in any environment: its default is the manifests'.
        let assigned = Set(manifests.defaults.map { ProductLocale(productId: $0.productId, locale: $0.locale) })
        let unnamed = unmanaged.filter { nameOf[$0] == nil }
        let state = { (identifier: String) in ReviewState(remote.messages[identifier]).rawValue }
        if let vendor {
            let imported = remote.defaults.filter { !assigned.contains($0.key) }
            for var external in vendorNamed(vendor, for: unnamed, defaults: imported, taken: &names, notes: &result.notes) {
                external.state = state(external.identifier)
                for identifier in external.identifiers {
                    nameOf[identifier] = external.name
                    if !external.localizations.isEmpty { external.states[identifier] = state(identifier) }
                }
                result.externals.append(external)
            }
        }
        for identifier in unnamed where nameOf[identifier] == nil {
            let name = name(for: identifier, environment: desired.environment, taken: &names)
            nameOf[identifier] = name
            result.externals.append(External(name: name, identifier: identifier, state: state(identifier)))
        }
        for wanted in desired.defaults {
            let pair = ProductLocale(productId: wanted.productId, locale: wanted.locale)
            guard let current = remote.defaults[pair], current != wanted.messageIdentifier else { continue }
            result.drifted.append(Drift(pair: pair, atApple: current, atAppleName: nameOf[current], assigned: wanted.messageName))
        }
        for (pair, identifier) in remote.defaults.sorted(by: { $0.key < $1.key }) where !assigned.contains(pair) {
            guard remote.messages[identifier] != nil else {
                result.notes.append("the default of \(pair) is \(identifier), which Apple's message list does not hold: not imported")
                continue
            }
            if let managed = desired.messages.first(where: { $0.identifier == identifier }), managed.locale != pair.locale {
                result.notes.append("the default of \(pair) is the \(managed.locale) version of message '\(managed.name)': not imported; assign it in a Defaults document")
                continue
            }
            guard let name = nameOf[identifier] else { continue }
            result.defaults.append(Default(pair: pair, message: name))
        }
        // Images nobody recorded either: one the state knows is an earlier upload of the tool's own.
        var imageNames = Set(manifests.images.map(\.name) + manifests.externalImages.map(\.name))
        let document = remote.state?.document
        let unmanagedImages = planned.plan.inventory
            .filter { $0.kind == .image && $0.label == .unmanaged && document?.record(for: $0.identifier) == nil }.map(\.identifier).sorted()
        for identifier in unmanagedImages {
            let image = remote.images[identifier]
            result.images.append(ExternalImage(name: name(for: identifier, environment: desired.environment, kind: "image", taken: &imageNames),
                                               identifier: identifier, state: ReviewState(image?.state).rawValue, size: image?.size))
        }
        if let url = remote.realtimeURL, let declared = desired.realtimeURL, url != declared {
            result.notes.append("Apple's realtime URL is \(url), the App declares \(declared): import changed nothing, and plan will change it; "
                                + "to keep it, set environments.\(desired.environment.rawValue).realtimeURL to \(url) in the App manifest")
        } else if let url = remote.realtimeURL, desired.realtimeURL == nil {
            result.realtimeURL = url
        }
        return result
    }

    /// The external messages the vendor's export names, as manifest names unique among `taken`.
    /// Rows with one name and different locales are one campaign: one external message with a
    /// localization per locale (a locale whose imported defaults show one of its messages joins it),
    /// unless two of its messages are the default in one locale; then, as for rows with one name and
    /// no locales, each message gets the name with its locale (`winback-de-de`) or its identifier's
    /// first digits. Rows this import writes no message for are counted in a note, by line.
    static func vendorNamed(_ vendor: VendorNames, for identifiers: [String], defaults: [ProductLocale: String], taken: inout Set<String>,
                            notes: inout [String]) -> [External] {
        let wanted = Set(identifiers)
        let rows = vendor.entries.filter { wanted.contains($0.identifier) }
        var externals: [External] = []
        for (name, entries) in Dictionary(grouping: rows, by: \.name).sorted(by: { $0.key < $1.key }) {
            let entries = entries.sorted { $0.line < $1.line }
            if entries.count > 1, let localizations = campaign(entries, defaults: defaults, notes: &notes, file: vendor.file) {
                var candidate = name
                if taken.contains(candidate) { candidate += "-" + entries[0].identifier.prefix(8) }
                if !taken.contains(candidate) {
                    taken.insert(candidate)
                    var external = External(name: candidate, identifier: entries[0].identifier, state: "", namedAt: entries.map(\.line),
                                            localizations: localizations)
                    external.assumedText = assumedTexts(entries, name: candidate, file: vendor.file, notes: &notes)
                    externals.append(external)
                    continue
                }
            }
            for entry in entries {
                var candidate = name
                if entries.count > 1 { candidate += "-" + (entry.locale.map(VendorNames.manifestName) ?? String(entry.identifier.prefix(8))) }
                if taken.contains(candidate) { candidate += "-" + entry.identifier.prefix(8) }
                guard !taken.contains(candidate) else {
                    notes.append("\(vendor.file):\(entry.line) names \(entry.identifier) '\(name)', which the manifests already use: named it by its identifier instead")
                    continue
                }
                taken.insert(candidate)
                var external = External(name: candidate, identifier: entry.identifier, state: "", namedAt: [entry.line])
                external.assumedText = assumedTexts([entry], name: candidate, file: vendor.file, notes: &notes)
                externals.append(external)
            }
        }
        let unused = vendor.entries.filter { !wanted.contains($0.identifier) }.map(\.line)
        if !unused.isEmpty {
            notes.append("\(unused.count) row\(unused.count == 1 ? "" : "s") of \(vendor.file) name\(unused.count == 1 ? "s" : "") no message this import writes "
                         + "(declared in the manifests already, or not in Apple's list): line\(unused.count == 1 ? "" : "s") "
                         + unused.prefix(10).map(String.init).joined(separator: ", ") + (unused.count > 10 ? ", …" : ""))
        }
        return externals
    }

    /// A campaign's localizations, locale → identifier: each row's locale, and each locale whose
    /// imported defaults show one of its messages; nil (with a note) when the rows lack a locale or
    /// share one, or two of its messages are the default in one locale.
    static func campaign(_ entries: [VendorNames.Entry], defaults: [ProductLocale: String], notes: inout [String], file: String) -> [String: String]? {
        let locales = entries.compactMap(\.locale)
        guard locales.count == entries.count, Set(locales).count == locales.count else { return nil }
        var localizations = Dictionary(uniqueKeysWithValues: entries.map { ($0.locale ?? "", $0.identifier) })
        let members = Set(entries.map(\.identifier))
        for (pair, identifier) in defaults.sorted(by: { $0.key < $1.key }) where members.contains(identifier) {
            if let shown = localizations[pair.locale], shown != identifier {
                notes.append("\(file): the rows named '\(entries[0].name)' (lines \(entries.map { String($0.line) }.joined(separator: ", "))) are one campaign, "
                             + "but \(pair) shows \(identifier) where \(pair.locale) is \(shown): named one message per locale instead")
                return nil
            }
            localizations[pair.locale] = identifier
        }
        return localizations
    }

    /// The assumed texts the rows give, leaving out (with a note) text a message cannot show.
    static func assumedTexts(_ entries: [VendorNames.Entry], name: String, file: String, notes: inout [String]) -> [AssumedText] {
        entries.compactMap { entry in
            if let problem = entry.textProblem {
                notes.append("\(file):\(entry.line): \(problem): '\(name)' was written without that assumed text")
                return nil
            }
            guard let locale = entry.locale, let header = entry.header, let body = entry.body else { return nil }
            return AssumedText(locale: locale, header: header, body: body)
        }.sorted { $0.locale < $1.locale }
    }

    /// One Defaults entry: every product in `products` shows `message` in every locale in `locales`.
    struct DefaultsEntry: Equatable {
        var products: [String]
        var locales: [String]
        var message: String
    }

    /// The defaults as few entries as say exactly them: per message, the products that show it in
    /// the same locales share one entry (a vendor's campaign over 40 products and 12 locales is a line
    /// per message, not 480), so that a team takes over a campaign by changing one line.
    static func grouped(_ defaults: [Default]) -> [DefaultsEntry] {
        var localesByMessageAndProduct: [String: [String: [String]]] = [:]
        for item in defaults {
            localesByMessageAndProduct[item.message, default: [:]][item.pair.productId, default: []].append(item.pair.locale)
        }
        var entries: [DefaultsEntry] = []
        for (message, byProduct) in localesByMessageAndProduct {
            var productsByLocales: [[String]: [String]] = [:]
            for (product, locales) in byProduct { productsByLocales[locales.sorted(), default: []].append(product) }
            for (locales, products) in productsByLocales {
                entries.append(DefaultsEntry(products: products.sorted(), locales: locales, message: message))
            }
        }
        return entries.sorted { ($0.products[0], $0.locales[0], $0.message) < ($1.products[0], $1.locales[0], $1.message) }
    }

    /// One imported external message: its identifier here, or one per locale for a campaign, and the
    /// text the vendor's export gives, escaped.
    static func yaml(_ external: External, environment: Environment) -> String {
        let lines = external.namedAt.map(String.init).joined(separator: ", ")
        let source = external.namedAt.isEmpty ? "" : "; named by line\(external.namedAt.count == 1 ? "" : "s") \(lines) of the vendor's export (--names)"
        let state = external.localizations.isEmpty ? "\(external.state) at Apple"
            : "one message per locale at Apple (" + external.localizations.sorted { $0.key < $1.key }
                .map { "\($0.key) \(external.states[$0.value] ?? "")" }.joined(separator: ", ") + ")"
        var text = """
            # yaml-language-server: $schema=retention-sync.schema.json
            # Imported by 'retention-sync import --env \(environment.rawValue)': \(state)\(source); its content is unknown.
            apiVersion: retention-sync/v1
            kind: ExternalMessage
            name: \(external.name)

            """
        if external.localizations.isEmpty {
            text += "identifiers:\n  \(environment.rawValue): \(external.identifier)\n"
        } else {
            text += "localizations:\n"
            for (locale, identifier) in external.localizations.sorted(by: { $0.key < $1.key }) {
                text += "  \(locale):\n    \(environment.rawValue): \(identifier)\n"
            }
        }
        if !external.assumedText.isEmpty {
            text += "assumedText:                                   # as the vendor's export says: unverified\n"
            for assumed in external.assumedText {
                text += "  \(assumed.locale): { header: \(YAMLText.doubleQuoted(assumed.header)), body: \(YAMLText.doubleQuoted(assumed.body)) }\n"
            }
        }
        return text
    }

    func yaml(environment: Environment) -> String {
        var documents: [String] = []
        for image in images {
            documents.append("""
                # yaml-language-server: $schema=retention-sync.schema.json
                # Imported by 'retention-sync import --env \(environment.rawValue)': \(image.state) at Apple\(image.size.map { ", \($0.rawValue)" } ?? ""); its pixels are unknown.
                apiVersion: retention-sync/v1
                kind: ExternalImage
                name: \(image.name)
                identifiers:
                  \(environment.rawValue): \(image.identifier)

                """)
        }
        for external in externals {
            documents.append(Self.yaml(external, environment: environment))
        }
        if !defaults.isEmpty {
            var text = """
                # yaml-language-server: $schema=retention-sync.schema.json
                # The defaults Apple held in \(environment.rawValue) when they were imported.
                apiVersion: retention-sync/v1
                kind: Defaults
                defaults:

                """
            for entry in Self.grouped(defaults) {
                text += "  - { products: [\(entry.products.joined(separator: ", "))], locales: [\(entry.locales.joined(separator: ", "))], "
                    + "message: \(entry.message) }\n"
            }
            documents.append(text)
        }
        return documents.joined(separator: "---\n")
    }
}
