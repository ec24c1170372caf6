import Basics
public import CLIKit
import Crypto
import Emulator
public import Foundation
import HTTPClient
import HTTPCore
import HTTPServer
import Manifests
import Operations
import RealtimeServer
import StateLocations
import StateStore
import Reconciler
import RetentionMessaging
import RetentionMessagingModels
import Runtime
import Views

/// The API client the story hands to an operation for one environment: the embedded emulator's.
typealias DemoAPI = @Sendable (_ environment: Environment) -> RetentionMessagingClient

/// The story, step by step, with every expectation checked: a scripted user of the commands. It
/// prints each command line a user would type and runs the operation behind it (`Operations`, as the
/// command does) against the embedded emulator.
public struct DemoStory: Sendable {
    let context: CommandContext
    /// The temporary folder the story works in (the manifests' copy, its git repository, the events).
    public let root: URL
    let manifestsURL: URL
    let emulator: Emulator
    let clock: VirtualClock
    let api: DemoAPI
    let bundleId: String
    let appAppleId: Int64
    let products: [String]
    /// The emulator's test chain: it signs the performance test's requests, and serve trusts its root.
    let chain: AppleStyleSigningChain
    let git: Git?

    /// Copies a directory's files and folders, as the running user: `FileManager.copyItem` also
    /// copies the owner and group on Linux, and fails where the user may read but not chown (a
    /// container user reading a mounted checkout owned by someone else).
    static func copyContents(of source: URL, to destination: URL) throws {
        let manager = FileManager.default
        try manager.createDirectory(at: destination, withIntermediateDirectories: true)
        for name in try manager.contentsOfDirectory(atPath: source.path).sorted() {
            let from = source.appendingPathComponent(name)
            let to = destination.appendingPathComponent(name)
            var isDirectory: ObjCBool = false
            guard manager.fileExists(atPath: from.path, isDirectory: &isDirectory) else { continue }
            if isDirectory.boolValue {
                try copyContents(of: from, to: to)
            } else {
                try Data(contentsOf: from).write(to: to)
            }
        }
    }

    /// Copies the manifests in `source` to a temporary folder and sets up the emulator for the story.
    public init(source: String, context: CommandContext) throws(CommandError) {
        let sourceURL = context.url(source)
        guard FileManager.default.fileExists(atPath: sourceURL.appendingPathComponent("app.yaml").path)
                || (try? FileManager.default.contentsOfDirectory(atPath: sourceURL.path))?.contains(where: { $0.hasSuffix(".yaml") }) == true else {
            throw CommandError("no manifests in \(source): run the demo from the repository's root, or pass --manifests DIR")
        }
        root = FileManager.default.temporaryDirectory.appendingPathComponent("retention-sync-demo-\(UUID().uuidString.prefix(8).lowercased())")
        manifestsURL = root.appendingPathComponent("manifests")
        do {
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            try Self.copyContents(of: sourceURL, to: manifestsURL)
            try? FileManager.default.removeItem(at: manifestsURL.appendingPathComponent(".retention-sync"))
        } catch {
            throw CommandError("cannot copy \(source) to a temporary directory: \(error.localizedDescription)")
        }
        var demoContext = context
        demoContext.currentDirectory = root
        self.context = demoContext

        let (set, _) = ManifestLoader.load(directory: manifestsURL, displayPath: "manifests")
        guard let set else { throw CommandError("\(source) has no usable App manifest: run 'retention-sync validate --manifests \(source)'") }
        bundleId = set.app.bundleId
        appAppleId = set.app.appAppleId ?? 1
        products = set.app.products.map(\.id)
        let clock = VirtualClock()
        self.clock = clock
        // Notifications are verified at their own signedDate, and a simulated customer's period began
        // up to a month before the last step plays it: the chain is valid from well before either clock.
        let validFrom = min(SystemClock().time(), clock.time()) - 400 * UTCTime.day
        do { chain = try AppleStyleSigningChain(name: "retention-sync emulator", notBefore: validFrom.date) } catch {
            throw CommandError("demo: cannot make the emulator's test chain: \(error)")
        }

        let key = ES256PrivateKey.generate()
        let credentials = Credentials(keyId: "DEMOKEY123", issuerId: "57246542-96fe-1a63-e053-0824d011072a",
                                      bundleId: set.app.bundleId, privateKey: key)
        // A small performance test keeps the demo to seconds; Apple's own is larger.
        var configuration = EmulatorConfiguration(
            publicKey: key.publicKey, keyId: credentials.keyId, issuerId: credentials.issuerId, bundleId: set.app.bundleId,
            productionReview: .manual, rateLimit: .apple, clock: clock,
            productIds: Set(set.app.products.map(\.id)),
            performanceTest: PerformanceTestSettings(maxConcurrentRequests: 4, totalRequests: 40, totalDuration: 400),
            appAppleId: appAppleId)
        configuration.useTestChain(chain)
        let emulator = Emulator(configuration: configuration)
        self.emulator = emulator
        let clients = Dictionary(uniqueKeysWithValues: Environment.allCases.map { environment in
            (environment, RetentionMessagingClient(environment: environment, credentials: credentials,
                                                   transport: emulator.transport(defaultEnvironment: environment),
                                                   pacing: .apple, clock: clock))
        })
        api = { environment in clients[environment]! }
        git = Git(directory: manifestsURL)
    }

    var console: Console { context.console }

    func heading(_ number: Int, _ title: String) {
        console.print("")
        console.print(Painter(console).bold("── \(number). \(title)"))
    }

    func shell(_ line: String) { console.print("$ \(line)") }

    func expect(_ condition: Bool, _ what: String) throws(CommandError) {
        if !condition { throw CommandError("demo: expected \(what), but it did not happen") }
    }

    /// Reads the environment once; with `show`, prints the plan as `retention-sync plan` does.
    func plan(_ environment: Environment, show: Bool = true) async throws(CommandError) -> Plan {
        if show { shell("retention-sync plan --env \(environment.rawValue)") }
        let plan = try await PlanOperation.plan(PlanRequest(environment: reconcileTarget(environment)), context: show ? context : quiet,
                                                provider: provider).plan
        if show {
            do { context.console.write(try PlanFormat.text.view(maxCharacters: Int.max, base: root.path).render(PlanPresentation(plan: plan), console: context.console)) } catch {
                throw CommandError("cannot write the plan: \(error)")
            }
            try expect(PlanOperation.exitCode(plan, detailed: false) != .failure, "the \(environment.rawValue) plan to have no errors")
        }
        return plan
    }

    /// A context whose output goes nowhere, for the checks behind each step.
    var quiet: CommandContext {
        var quiet = context
        quiet.console = Console(isTerminal: false, environment: [:], out: { _ in }, err: { _ in })
        return quiet
    }

    /// The environment as `--manifests manifests --env ENVIRONMENT` names it, in the demo's working copy.
    func reconcileTarget(_ environment: Environment) -> ReconcileTarget {
        ReconcileTarget(manifestsPath: "manifests", environment: environment)
    }

    /// The embedded emulator's client in place of Apple's.
    var provider: APIProvider {
        let api = api
        return APIProvider { environment, _, _, _ in api(environment) }
    }

    func apply(_ environment: Environment) async throws(CommandError) {
        shell("retention-sync apply --env \(environment.rawValue)")
        let code = try await ApplyOperation.apply(ApplyRequest(environment: reconcileTarget(environment)), context: context, provider: provider,
                                                  printPlan: false)
        try expect(code == .success, "apply to \(environment.rawValue) to succeed")
    }

    func published(_ environment: Environment) throws(CommandError) -> RuntimeSnapshot? {
        let url = manifestsURL.appendingPathComponent(".retention-sync/\(environment.rawValue)-snapshot.json")
        do { return try SnapshotStore(url: url).read() } catch { throw CommandError(error.description) }
    }

    func uploads(in environment: Environment) -> Int {
        emulator.state(of: environment).messages.count + emulator.state(of: environment).images.count
    }

    /// Plays the story; throws at the first step that does not happen as told.
    public func run() async throws(CommandError) {
        console.print("retention-sync demo: the whole story against the in-process emulator of Apple's API")
        console.print("(a key generated for this run, no Apple account, no network; rate limits on a virtual clock).")
        console.print("Working copy: \(manifestsURL.path)" + (git == nil ? " (git not found: edits are undone by restoring the file)" : " (a git repository)"))
        try git?.run(["init", "-q"])
        try git?.commit("Manifests as they are", all: false)

        try await goLiveInSandbox()
        let servedBefore = try await goLiveInProduction()
        try await editAndRollBack(servedBefore: servedBefore)

        // Steps 1–10 ran on the virtual clock from its start; Apple's rate limits are the only waits there.
        let waited = Int((clock.now() - 1_790_000_000).rounded())
        heading(11, "Which answer keeps subscribers? serve records each decision, Apple's notifications bring the outcomes, results reads the split")
        let recorded = try await measureSplitResults()
        try await answerThePerson(pseudonyms: recorded.pseudonyms, events: recorded.events)
        try promoteTheWinner(group: recorded.group, events: recorded.events)

        console.print("")
        console.print("The story held: validate, plan, apply, review, publish, edit, roll back against the emulator "
                      + (waited == 0 ? "(within Apple's rate limits: no wait)" : "(\(waited) s waiting on Apple's rate limits, on a virtual clock)")
                      + ", then \(Int(Self.simulatedDays)) days of simulated customers measured by results, their facts for a rule that answers the person, "
                      + "and the winner promoted as a reviewed change.")
    }

    /// Steps 1–4: validate, plan and apply sandbox, then serve it and pass Apple's performance test.
    private func goLiveInSandbox() async throws(CommandError) {
        heading(1, "Validate the manifests (offline)")
        shell("retention-sync validate")
        let validation = ValidateOperation.run(directory: "manifests", format: .text, strict: false, context: context)
        try expect(validation == .success, "the manifests to validate")

        heading(2, "Plan sandbox: everything is new")
        let sandboxPlan = try await plan(.sandbox)
        try expect(sandboxPlan.summary.toUpload > 0, "uploads in the first sandbox plan")

        heading(3, "Apply sandbox: sandbox approves uploads at once, so defaults and rules go live in the same run")
        try await apply(.sandbox)
        let sandboxAfter = try await plan(.sandbox, show: false)
        try expect(sandboxAfter.converged, "sandbox to be in sync after one apply")
        try expect(emulator.state(of: .sandbox).messages.values.allSatisfy { $0.state == .approved }, "every sandbox message to be APPROVED")
        try expect(!(try published(.sandbox)?.rules ?? []).isEmpty, "a published sandbox snapshot")

        heading(4, "Go live in sandbox: serve answers Apple's realtime requests, and Apple's performance test passes")
        try await passPerformanceTest()
    }

    /// Steps 5–8: production's uploads wait for App Review, then a reconcile publishes; returns the
    /// snapshot production serves.
    private func goLiveInProduction() async throws(CommandError) -> RuntimeSnapshot? {
        heading(5, "Plan production: uploads are ready, defaults and rules wait for App Review")
        let productionPlan = try await plan(.production)
        try expect(productionPlan.summary.toUpload > 0 && productionPlan.summary.blocked > 0, "uploads and blocked actions in the first production plan")

        heading(6, "Apply production: uploads go to review (PENDING); nothing customers see changes yet")
        try await apply(.production)
        let production = emulator.state(of: .production)
        try expect(production.realtimeURL != nil, "production to accept the realtime URL after the sandbox test passed")
        console.print("production accepted the realtime URL \(production.realtimeURL ?? ""): Apple's condition, a passed sandbox performance test, is met")
        try expect(!production.messages.isEmpty && production.messages.values.allSatisfy { $0.state == .pending }, "production uploads to be PENDING")
        try expect(production.defaults.isEmpty, "no production default before review")
        let heldBack = try published(.production)?.rules.filter { $0.response.messageIdentifiers?.isEmpty == false } ?? []
        try expect(heldBack.isEmpty, "no production rule with a message before review")
        shell("retention-sync plan --env production --detailed-exitcode")
        let waiting = try await plan(.production, show: false)
        let waitingCode = PlanOperation.exitCode(waiting, detailed: true)
        console.print("\(PlanView.summaryLine(waiting))  → exit \(waitingCode): only waiting for App Review, so a scheduled job stays green")
        try expect(waitingCode == .success, "exit 0 while only waiting for review")

        heading(7, "App Review approves everything (the emulator's admin call)")
        emulator.approveAllPending(in: .production)
        console.print("approved \(emulator.state(of: .production).messages.count) messages and \(emulator.state(of: .production).images.count) images")

        heading(8, "The scheduled reconcile publishes: defaults, rules, realtime URL")
        try await apply(.production)
        try expect(try await plan(.production, show: false).converged, "production to be in sync after review and a reconcile")
        try expect(!emulator.state(of: .production).defaults.isEmpty, "production defaults to be set after review")
        return try published(.production)
    }

    /// Steps 9–10: an edit waits for review while the old version serves; reverting it uploads nothing.
    private func editAndRollBack(servedBefore: RuntimeSnapshot?) async throws(CommandError) {
        heading(9, "Edit a message in a pull request: a new version waits for review; the old one keeps serving")
        let edit = try editedMessage()
        console.print("edited \(edit.file.lastPathComponent): the \(edit.locale) header of '\(edit.message)'")
        try git?.commit("Reword '\(edit.message)' (\(edit.locale))", all: true)
        _ = try await plan(.production)
        let uploadsBefore = uploads(in: .production)
        try await apply(.production)
        try expect(uploads(in: .production) == uploadsBefore + 1, "exactly one new upload for the edited message")
        try expect(try published(.production) == servedBefore, "the published snapshot to keep the old version while the new one waits")
        try await preview(edit, heading: "What customers get now (decide on the published snapshot):")

        heading(10, "Roll back by reverting the commit: the old version is already approved, so nothing is uploaded")
        if let git {
            shell("git revert --no-edit HEAD")
            try git.run(["revert", "--no-edit", "HEAD"])
        } else {
            do { try edit.original.write(to: edit.file) } catch { throw CommandError("cannot restore \(edit.file.path): \(error)") }
        }
        let rollback = try await plan(.production)
        try expect(rollback.summary.toUpload == 0, "no upload after the revert")
        let uploadsBeforeRevert = uploads(in: .production)
        try await apply(.production)
        try expect(uploads(in: .production) == uploadsBeforeRevert, "zero uploads when rolling back")
        try expect(try published(.production) == servedBefore, "the snapshot from before the edit to be the one serving")
        try expect(try await plan(.production, show: false).converged, "production to be in sync after the rollback")
    }

    /// Where apply keeps the sandbox state document (the App's `snapshotPath`); recorded events live beside it.
    var sandboxState: URL { manifestsURL.appendingPathComponent(".retention-sync/sandbox-snapshot.json") }

    /// The serve command line the demo's in-process serve stands for.
    var serveCommand: String {
        "retention-sync serve --env sandbox --state-store manifests/.retention-sync/sandbox-snapshot.json --bundle-id \(bundleId) --root test-root.pem --listen 127.0.0.1:0"
    }

    /// Starts serve on loopback with the published sandbox snapshot and the emulator's test root,
    /// points the emulator's sandbox realtime URL at it, and runs `performance-test` through the emulator.
    func passPerformanceTest() async throws(CommandError) {
        let rootFile = root.appendingPathComponent("test-root.pem")
        do { try Data(chain.root.pem.utf8).write(to: rootFile) } catch { throw CommandError("demo: cannot write \(rootFile.path): \(error)") }
        shell("curl -s $EMULATOR/emulator/test-root.pem > test-root.pem")
        shell(serveCommand)
        let server = try startServe(recording: nil)
        defer { server.stop() }
        let target = server.baseURL.absoluteString + RealtimeService.defaultRealtimePath(for: .sandbox)
        console.print("serving sandbox on \(target)")

        // Against Apple the sandbox URL is the public one in app.yaml; here the emulator's admin route points it at loopback.
        shell("curl -X PUT $EMULATOR/emulator/realtime-url -d '{\"realtimeURL\":\"\(target)\"}'")
        var state = emulator.state(of: .sandbox)
        state.realtimeURL = target
        emulator.restore(state, in: .sandbox)
        let transaction = "2000000000000001"
        shell("curl -X POST $EMULATOR/emulator/transactions -d '{\"originalTransactionId\":\"\(transaction)\",\"productId\":\"\(products.first ?? "")\",\"locale\":\"en-US\"}'")
        emulator.registerTestTransaction(SandboxTransaction(originalTransactionId: transaction, productId: products.first ?? "", locale: "en-US"))

        shell("retention-sync performance-test --env sandbox --original-transaction-id \(transaction)")
        let code = try await PerformanceTestOperation.test(PerformanceTestTask(environment: reconcileTarget(.sandbox), transaction: transaction, interval: 0.2),
                                                           context: context, provider: provider)
        try expect(code == .success, "the sandbox performance test against serve to PASS")
    }

    /// Serve on loopback, answering sandbox from the published snapshot and trusting the emulator's
    /// test root, as `retention-sync serve` does; with a recording it also records and takes notifications.
    func startServe(recording: RealtimeService.Recording?) throws(CommandError) -> HTTPServer {
        let snapshot = sandboxState
        // Apply wrote the sandbox state document there; serve reads its published snapshot, as `serve --manifests` does.
        guard #available(macOS 15.0, *) else { throw CommandError("demo: serve reads the state store on macOS 15 or later") }
        let source: any SnapshotSource
        do {
            source = try StateSnapshotSource(location: .file(path: snapshot.path),
                                             owner: StateOwner(bundleId: bundleId, appAppleId: appAppleId, environment: .sandbox),
                                             environment: [:], transport: CurlHTTPClient(configuration: .init()))
        } catch {
            throw CommandError("demo: cannot open the sandbox state at \(snapshot.path): \(error)")
        }
        var configuration = RealtimeService.Configuration(
            endpoints: [RealtimeEndpoint(path: RealtimeService.defaultRealtimePath(for: .sandbox), environment: .sandbox, source: source,
                                         appAppleId: appAppleId, bundleId: bundleId)],
            trustedRoots: [chain.root],
            signingKey: OfferSigningKey(keyId: "DEMOKEY123", issuerId: "57246542-96fe-1a63-e053-0824d011072a", privateKey: ES256PrivateKey.generate()), clock: SystemClock())
        configuration.recording = recording
        let service = RealtimeService(configuration: configuration, log: RequestLog(sink: { _ in }))
        service.reloadSnapshots()
        try expect(service.isReady, "serve to be ready with the published sandbox snapshot (\(service.readiness.joined(separator: "; ")))")
        do {
            return try HTTPServer(configuration: HTTPServerConfiguration(maxBodySize: RealtimeService.maxBodySize, eventLoops: 2),
                                  deferringHandler: { service.handle($0, later: $1) })
        } catch {
            throw CommandError("demo: cannot start serve on loopback: \(error.message)")
        }
    }

    struct Edit {
        var file: URL
        var original: Data
        var message: String
        var locale: String
        var ruleId: String
        var productId: String
    }

    /// Rewrites the header of the first localization of the first message a realtime rule shows.
    func editedMessage() throws(CommandError) -> Edit {
        guard let manifests = try? Workspace.load(directory: manifestsURL, displayPath: manifestsURL.path).0 else {
            throw CommandError("demo: cannot reload the manifests")
        }
        for rule in manifests.rules {
            guard case .message(let name) = rule.response, case .message(let message)? = rule.shows,
                  let localization = message.localizations.first(where: { $0.locale == "en-US" }) ?? message.localizations.first else { continue }
            let file = URL(fileURLWithPath: localization.location.file)
            guard let original = try? Data(contentsOf: file) else { continue }
            var lines = String(decoding: original, as: UTF8.self).components(separatedBy: "\n")
            guard let index = lines.indices.first(where: { $0 >= localization.location.line - 1 && lines[$0].trimmingCharacters(in: .whitespaces).hasPrefix("header:") }) else { continue }
            let indent = lines[index].prefix { $0 == " " }
            lines[index] = indent + "header: \"One more breath before you go\""
            do { try Data(lines.joined(separator: "\n").utf8).write(to: file) } catch {
                throw CommandError("demo: cannot edit \(file.path): \(error)")
            }
            let product = rule.match.products?.first ?? manifests.app.products.first?.id ?? ""
            return Edit(file: file, original: original, message: name, locale: localization.locale, ruleId: rule.id, productId: product)
        }
        throw CommandError("demo: no realtime rule shows a message, so there is nothing to edit")
    }

    /// Asks the decision engine (through `decide`) what a customer matched by the edited rule gets.
    func preview(_ edit: Edit, heading text: String) async throws(CommandError) {
        guard let snapshot = try published(.production), let rule = snapshot.rules.first(where: { $0.id == edit.ruleId }) else {
            throw CommandError("demo: rule \(edit.ruleId) is not in the published production snapshot")
        }
        var transaction = "2000000000000001"
        if let split = rule.match.split {
            for candidate in 2_000_000_000_000_001...2_000_000_000_100_000 {
                let bucket = TrafficBucket.bucket(salt: split.salt, originalTransactionId: String(candidate))
                if bucket >= split.lowerBucket && bucket < split.upperBucket { transaction = String(candidate); break }
            }
        }
        let request = DecodedRealtimeRequestBody(originalTransactionId: transaction, appAppleId: snapshot.appAppleId ?? 0,
                                                 productId: edit.productId, userLocale: edit.locale,
                                                 requestIdentifier: "7c3f9c1e-1b1d-4e55-9d55-3f1d2f6b8a10",
                                                 environment: Environment.production.appleName,
                                                 signedDate: Int64(clock.now() * 1000))
        let requestURL = root.appendingPathComponent("request.json")
        do { try CanonicalJSON.encodePretty(request).write(to: requestURL) } catch {
            throw CommandError("demo: cannot write the request: \(error)")
        }
        console.print(text)
        shell("retention-sync decide --env production --request request.json")
        let code: ExitCode
        do {
            // The demo never signs with a key from the environment: the offer's signature is the marked preview.
            code = try DecideOperation.run(request, snapshot: snapshot, credentials: nil, explain: false, manifestsPath: "manifests", context: context)
        } catch {
            throw CommandError("demo: decide failed: \(error)")
        }
        try expect(code == .success, "decide to answer from the published snapshot")
        let served = rule.response.messageIdentifiers?[edit.locale] ?? "?"
        console.print("rule \(edit.ruleId) still serves \(edit.locale) with \(served), the approved version; the edit waits for review.")
    }
}
