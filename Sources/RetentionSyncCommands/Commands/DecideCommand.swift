import Crypto
import Foundation
import Manifests
import Reconciler
import RetentionMessaging
import RetentionMessagingModels
import Runtime
import StateStore

/// `retention-sync decide`: what a customer would be shown, from a snapshot and a realtime request.
struct DecideCommand: Command {
    static let name = "decide"
    static let summary = "Preview the realtime answer for a request"
    static let snapshot = Option("--snapshot", value: "FILE", completion: .file,
                                 help: ["The runtime snapshot (as published by `retention-sync apply`)."])
    static let manifests = Option("--manifests", value: "DIR", completion: .directory, help: [
        "Without --snapshot: use the snapshotPath the App manifest in DIR declares",
        "for --env (default: manifests). With --explain: where the texts come from.",
    ])
    static let env = Option("--env", value: "ENV", of: RetentionMessagingModels.Environment.self,
                            help: ["sandbox or production; may be left out when the App uses only one."])
    static let request = Option("--request", value: "FILE", completion: .file, help: [
        "A decoded request: JSON with originalTransactionId, appAppleId, productId,",
        "userLocale, requestIdentifier, environment (Sandbox|Production), signedDate.",
    ])
    static let signedPayload = Option("--signed-payload", value: "FILE", completion: .file, help: [
        "Apple's signedPayload (the JWS, or the {\"signedPayload\": …} body), verified",
        "before deciding: x5c chain, Apple's OIDs, appAppleId and environment.",
    ])
    static let root = Option("--root", value: "FILE[,FILE…]", completion: .file, help: [
        "Root certificates to trust for --signed-payload (PEM or DER; in production",
        "Apple Root CA - G3 from https://www.apple.com/certificateauthority/).",
    ])
    static let explain = Option("--explain", help: [
        "Also print, rule by rule, why each rule did or did not answer, and the",
        "chosen message as the customer sees it (header, body, bullets, image text).",
    ])

    static let helpPage = HelpPage(
        usage: """
        Usage: retention-sync decide [--snapshot FILE | --manifests DIR --env ENV]
                                     (--request FILE | --signed-payload FILE --root FILE) [--explain]
        """,
        about: """
        Answers a realtime "Get Retention Message" request from a runtime snapshot, exactly as a server
        embedding the decision engine would, and prints the response JSON, or "no answer" when Apple
        would show the default message.
        """,
        options: [snapshot, manifests, env, request, signedPayload, root, explain], column: 23,
        footer: """
        Promotional offers are signed with the In-App Purchase key from RETENTION_SYNC_KEY_ID,
        RETENTION_SYNC_ISSUER_ID and RETENTION_SYNC_PRIVATE_KEY (the .p8 text) or
        RETENTION_SYNC_PRIVATE_KEY_FILE; the bundle id comes from the snapshot. Without them the
        response carries an unsigned preview in place of promotionalOfferSignatureV2.
        """)

    static let unsignedPreview = "<unsigned preview: set RETENTION_SYNC_* credentials to sign>"

    static func run(_ arguments: inout Arguments, context: CommandContext) async throws -> ExitCode {
        let snapshotOption = try arguments.value(Self.snapshot)
        let manifestsOption = try arguments.value(Self.manifests)
        let environmentOption = try arguments.value(Self.env, as: RetentionMessagingModels.Environment.self)
        let requestPath = try arguments.value(Self.request)
        let signedPayloadPath = try arguments.value(Self.signedPayload)
        let rootPaths = try arguments.value(Self.root)
        let explain = arguments.flag(Self.explain)
        try arguments.finish()

        let snapshotPath: String
        if let snapshotOption {
            if environmentOption != nil || (manifestsOption != nil && !explain) {
                throw CommandError("--manifests and --env choose a snapshot; give them or --snapshot, not both",
                                   exitCode: .usage)
            }
            snapshotPath = snapshotOption
        } else {
            snapshotPath = try publishedSnapshotPath(manifests: manifestsOption ?? "manifests",
                                                     environment: environmentOption, context: context)
        }
        // The file is a runtime snapshot (--snapshot-out) or the state document apply writes at snapshotPath.
        let snapshot = try loadSnapshot(try readFile(snapshotPath, what: "the runtime snapshot", context: context), path: snapshotPath)

        let request: DecodedRealtimeRequestBody
        switch (requestPath, signedPayloadPath) {
        case (let path?, nil):
            if rootPaths != nil { throw CommandError("--root applies only to --signed-payload", exitCode: .usage) }
            request = try decodedRequest(at: path, context: context)
        case (nil, let path?):
            guard let rootPaths else {
                throw CommandError("--signed-payload needs --root FILE: the root certificate(s) to trust "
                                   + "(Apple Root CA - G3 in production)", exitCode: .usage)
            }
            let verifier = SignedPayloadVerifier(trustedRoots: try roots(rootPaths, context: context),
                                                 appAppleId: snapshot.appAppleId, environment: snapshot.environment)
            do {
                request = try verifier.verify(signedPayload: try signedPayload(at: path, context: context))
            } catch let error as SignedPayloadError {
                throw CommandError("\(path): \(error.description)")
            }
        case (nil, nil):
            throw CommandError("decide needs --request FILE or --signed-payload FILE", exitCode: .usage)
        case (_?, _?):
            throw CommandError("give either --request or --signed-payload, not both", exitCode: .usage)
        }

        let credentials = try signingCredentials(bundleId: snapshot.bundleId, context: context)
        let engine: DecisionEngine
        if let credentials {
            engine = DecisionEngine(snapshot: snapshot, signer: PromotionalOfferSigner(
                keyId: credentials.keyId, issuerId: credentials.issuerId, bundleId: snapshot.bundleId,
                privateKey: credentials.privateKey))
        } else {
            engine = DecisionEngine(snapshot: snapshot, offerSigning: { _, _, _ in unsignedPreview })
        }

        let decision: Decision
        if explain {
            let explained = try engine.explain(request)
            decision = explained.decision
            for step in explained.trace {
                context.console.print("\(step.matched ? "matched" : "skipped") \(step.ruleId): \(step.reason)")
            }
            if explained.trace.isEmpty { context.console.print("no rule evaluated") }
            context.console.print()
        } else {
            decision = try engine.decide(request)
        }

        switch decision {
        case .noAnswer(let reason):
            context.console.print("no answer: \(reason) (Apple shows the default message)")
        case .respond(let body, _):
            context.console.print(String(decoding: try CanonicalJSON.encodePretty(body), as: UTF8.self))
            if credentials == nil, body.promotionalOffer != nil {
                context.console.error("note: promotionalOfferSignatureV2 is an unsigned preview; set RETENTION_SYNC_KEY_ID, "
                                      + "RETENTION_SYNC_ISSUER_ID and RETENTION_SYNC_PRIVATE_KEY or "
                                      + "RETENTION_SYNC_PRIVATE_KEY_FILE to sign it")
            }
            if explain {
                context.console.print()
                context.console.print(shownText(body, manifests: manifestsOption ?? "manifests",
                                                environment: snapshot.environment, context: context))
            }
        }
        return .success
    }

    /// What the customer reads: the chosen message's texts from the manifests, in the locale the
    /// engine chose for the request.
    static func shownText(_ body: RealtimeResponseBody, manifests: String, environment: RetentionMessagingModels.Environment,
                          context: CommandContext) -> String {
        let chosen: String? = body.message?.messageIdentifier ?? body.alternateProduct?.messageIdentifier
            ?? body.promotionalOffer?.messageIdentifier
        guard let identifier = chosen else { return "The answer shows no message of its own." }
        let (_, _, validated) = ManifestLoader.loadAndCheck(directory: context.url(manifests), displayPath: manifests)
        guard let validated, let desired = try? Identities.derive(validated, environment: environment),
              let message = desired.messages.first(where: { $0.identifier == identifier }) else {
            return "Message \(identifier) is not one the manifests in \(manifests) derive for \(environment.rawValue); "
                + "pass --manifests DIR to see its text."
        }
        var lines = ["The customer sees message '\(message.name)' (\(message.locale), version \(message.contentVersion)):",
                     "  header: \(message.body.header)",
                     "  body:   \(message.body.body)"]
        if let image = message.body.image { lines.append("  image:  \(image.altText)") }
        for bullet in message.body.bulletPoints ?? [] {
            lines.append("  • \(bullet.text)  (icon: \(bullet.altText))")
        }
        return lines.joined(separator: "\n")
    }

    /// A runtime snapshot file (`--snapshot-out`), or the state document apply writes at `snapshotPath`.
    static func loadSnapshot(_ data: Data, path: String) throws(CommandError) -> RuntimeSnapshot {
        struct Probe: Decodable {
            var formatVersion: String?
            enum CodingKeys: String, CodingKey { case formatVersion = "format_version" }
        }
        guard (try? JSONDecoder().decode(Probe.self, from: data))?.formatVersion != nil else {
            do { return try RuntimeSnapshot.load(from: data) } catch { throw CommandError("\(path): \(error.description)") }
        }
        let published: RuntimeSnapshot?
        do { published = try StateDocument.publishedSnapshot(in: data) } catch { throw CommandError("\(path): \(error.description)") }
        guard let published else {
            throw CommandError("\(path): the state document publishes no snapshot yet; run apply first, or pass --snapshot FILE")
        }
        return published
    }

    /// The `snapshotPath` the App manifest declares for the environment.
    private static func publishedSnapshotPath(manifests: String, environment: RetentionMessagingModels.Environment?,
                                              context: CommandContext) throws -> String {
        let (set, diagnostics) = ManifestLoader.load(directory: context.url(manifests), displayPath: manifests)
        guard let app = set?.app else {
            let details = DiagnosticRenderer.render(diagnostics.filter { $0.severity == .error }, format: .text, color: false)
            throw CommandError("\(manifests): no usable App manifest to find the snapshot in; pass --snapshot FILE"
                               + (details.isEmpty ? "" : "\n" + details.trimmingCharacters(in: .newlines)))
        }
        let settings: EnvironmentSettings
        if let environment {
            guard let found = app.settings(for: environment) else {
                throw CommandError("\(app.location): the App does not use the \(environment.rawValue) environment")
            }
            settings = found
        } else {
            guard app.environments.count == 1, let only = app.environments.first else {
                let names = app.environments.map(\.environment.rawValue).joined(separator: " or ")
                throw CommandError("the App uses several environments: choose one with --env \(names)", exitCode: .usage)
            }
            settings = only
        }
        guard let path = settings.snapshotPath else {
            throw CommandError("\(settings.location): the App declares no snapshotPath for \(settings.environment.rawValue); "
                               + "add one or pass --snapshot FILE")
        }
        return path
    }

    private static func decodedRequest(at path: String, context: CommandContext) throws -> DecodedRealtimeRequestBody {
        let data = try readFile(path, what: "the request", context: context)
        do {
            return try JSONDecoder().decode(DecodedRealtimeRequestBody.self, from: data)
        } catch {
            throw CommandError("\(path): not a decoded realtime request (\(FileProblem.decodingReason(error))); it needs originalTransactionId, "
                               + "appAppleId, productId, userLocale, requestIdentifier, environment and signedDate")
        }
    }

    /// The JWS itself, or Apple's request body `{"signedPayload": "…"}`.
    private static func signedPayload(at path: String, context: CommandContext) throws -> String {
        let data = try readFile(path, what: "the signed payload", context: context)
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.hasPrefix("{") else { return text }
        struct Body: Decodable { var signedPayload: String }
        do {
            return try JSONDecoder().decode(Body.self, from: data).signedPayload
        } catch {
            throw CommandError("\(path): a JSON body must be {\"signedPayload\": \"<JWS>\"} (\(FileProblem.decodingReason(error)))")
        }
    }

    private static func roots(_ paths: String, context: CommandContext) throws -> [X509Certificate] {
        var roots: [X509Certificate] = []
        for path in paths.split(separator: ",").map(String.init) where !path.isEmpty {
            _ = try readFile(path, what: "the root certificate", context: context)
            do {
                roots += try X509Certificate.load(contentsOfFile: context.url(path).path)
            } catch {
                throw CommandError("\(path): cannot read a root certificate (PEM or DER): \(error.description)")
            }
        }
        guard !roots.isEmpty else { throw CommandError("--root names no certificate file", exitCode: .usage) }
        return roots
    }

    /// The In-App Purchase key, read exactly as `plan` and `apply` read it; nil when none of it is
    /// set (an unsigned preview).
    private static func signingCredentials(bundleId: String, context: CommandContext) throws -> Credentials? {
        let names = [Credentials.keyIdVariable, Credentials.issuerIdVariable, Credentials.privateKeyVariable,
                     Credentials.privateKeyFileVariable]
        if names.allSatisfy({ (context.environment[$0] ?? "").trimmingCharacters(in: .whitespacesAndNewlines).isEmpty }) {
            return nil
        }
        var environment = context.environment
        if let file = environment[Credentials.privateKeyFileVariable], !file.isEmpty {
            environment[Credentials.privateKeyFileVariable] = context.url(file).path
        }
        do {
            return try Credentials.fromEnvironment(environment, bundleId: bundleId)
        } catch {
            throw CommandError("signing credentials: \(error.description) (or unset them all for an unsigned preview)")
        }
    }
}
