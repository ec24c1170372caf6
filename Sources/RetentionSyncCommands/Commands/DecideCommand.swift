import Basics
import CLIKit
import Crypto
import Foundation
import Manifests
import Operations
import Reconciler
import RetentionMessaging
import RetentionMessagingModels
import Runtime
import StateLocations
import StateStore

/// `retention-sync decide`: what a customer would be shown, from a snapshot and a realtime request.
struct DecideCommand: ParsedCommand {
    static let name = "decide"
    static let summary = "Preview the realtime answer for a request"
    static let snapshot = Option("--snapshot", value: "FILE", completion: .file,
                                 help: ["The runtime snapshot (as published by `retention-sync apply`)."])
    static let manifests = Option.manifests(help: [
        "Without --snapshot: the snapshot serve would answer from for --env (the",
        "App's environments.<env>.stateStore, else its snapshotPath). With --explain:",
        "where the texts come from",
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
    static let root = TrustRootsOption.declaration(help: [
        "Root certificates to trust for --signed-payload (PEM or DER; in production",
        "Apple Root CA - G3 from https://www.apple.com/certificateauthority/).",
    ])
    static let customer = Option("--customer", value: "FACTS", help: [
        "What Apple signed about the customer, for rules with match.customer:",
        "storefront=DEU,tenure-days=40,offer.promotional=20d,billing=retry,",
        "price-increase=pending,ownership=familyShared (times before the request's",
        "signedDate), or @FILE holding a JSON object with those keys. A fact left out",
        "is unknown, as in serve.",
    ])
    static let explain = Option("--explain", help: [
        "Also print, rule by rule, why each rule did or did not answer, and the",
        "chosen message as the customer sees it (header, body, bullets, image text).",
    ])

    static let helpPage = HelpPage(
        usage: """
        Usage: retention-sync decide [--snapshot FILE | --manifests DIR --env ENV]
                                     (--request FILE | --signed-payload FILE --root FILE)
                                     [--customer FACTS] [--explain]
        """,
        about: """
        Answers a realtime "Get Retention Message" request from a runtime snapshot, exactly as a server
        embedding the decision engine would, and prints the response JSON, or "no answer" when Apple
        would show the default message.
        """,
        options: [snapshot, manifests, env, request, signedPayload, root, customer, explain], column: 23,
        footer: """
        Promotional offers and Advanced Commerce answers are signed with the In-App Purchase key
        from RETENTION_SYNC_KEY_ID, RETENTION_SYNC_ISSUER_ID and RETENTION_SYNC_PRIVATE_KEY (the .p8
        text) or RETENTION_SYNC_PRIVATE_KEY_FILE; the bundle id comes from the snapshot. Without them
        the response carries an unsigned preview in place of promotionalOfferSignatureV2 or
        advancedCommerceData.
        """)

    struct Options: CommandOptions {
        var sources: SnapshotSourceOptions
        var environment: RetentionMessagingModels.Environment?
        var request: String?
        var signedPayload: String?
        var roots: [String]?
        var customer: String?
        var explain: Bool

        func validate() throws(CommandError) {
            if sources.snapshotFile != nil, environment != nil || (sources.manifests != nil && !explain) {
                throw CommandError("--manifests and --env choose a snapshot; give them or --snapshot, not both", exitCode: .usage)
            }
            switch (request, signedPayload) {
            case (_?, nil):
                if roots != nil { throw CommandError("--root applies only to --signed-payload", exitCode: .usage) }
            case (nil, _?):
                if roots == nil {
                    throw CommandError("--signed-payload needs --root FILE: the root certificate(s) to trust "
                                       + "(Apple Root CA - G3 in production)", exitCode: .usage)
                }
            case (nil, nil):
                throw CommandError("decide needs --request FILE or --signed-payload FILE", exitCode: .usage)
            case (_?, _?):
                throw CommandError("give either --request or --signed-payload, not both", exitCode: .usage)
            }
        }
    }

    static func parse(_ arguments: inout Arguments, context: CommandContext) throws(CommandError) -> Options {
        let sources = try SnapshotSourceOptions.parse(&arguments, manifests: Self.manifests, snapshotFile: Self.snapshot, context: context)
        return Options(sources: sources, environment: try arguments.value(Self.env, as: RetentionMessagingModels.Environment.self),
                       request: try arguments.value(Self.request), signedPayload: try arguments.value(Self.signedPayload),
                       roots: try TrustRootsOption.read(&arguments, Self.root), customer: try arguments.value(Self.customer),
                       explain: arguments.flag(Self.explain))
    }

    static func run(_ options: Options, context: CommandContext) async throws -> ExitCode {
        let snapshot = try await publishedSnapshot(options, context: context)
        let request: DecodedRealtimeRequestBody
        if let path = options.signedPayload, let rootPaths = options.roots {
            let verifier = SignedPayloadVerifier(trustedRoots: try TrustRootsOption.load(rootPaths, context: context),
                                                 appAppleId: snapshot.appAppleId, environment: snapshot.environment, clock: SystemClock())
            do {
                request = try verifier.verify(signedPayload: try signedPayload(at: path, context: context))
            } catch let error as SignedPayloadError {
                throw CommandError("\(path): \(error.description)")
            }
        } else {
            request = try decodedRequest(at: options.request ?? "", context: context)
        }

        var customer: CustomerFacts?
        if let written = options.customer {
            let text = written.hasPrefix("@") ? try readFile(String(written.dropFirst()), what: "the customer facts", context: context) : Data(written.utf8)
            do {
                customer = try CustomerFactsSpec.parse(String(decoding: text, as: UTF8.self), signedDate: request.signedDate)
            } catch {
                throw CommandError("--customer: \(error.description)", exitCode: .usage)
            }
        }
        let credentials = try SigningKeyOption.credentials(bundleId: snapshot.bundleId, context: context,
                                                           unsetHint: " (or unset them all for an unsigned preview)")
        return try DecideOperation.run(request, customer: customer, snapshot: snapshot, credentials: credentials, explain: options.explain,
                                       manifestsPath: options.sources.manifests ?? Option.defaultManifests, context: context)
    }

    /// The snapshot `serve` would answer from, resolved by the same `SnapshotSourceOptions`: a file
    /// given with `--snapshot`, else the environment's state store (a file or S3) as the App declares it.
    static func publishedSnapshot(_ options: Options, context: CommandContext) async throws -> RuntimeSnapshot {
        let environments = options.environment.map { [$0] }
        guard let source = try options.sources.resolve(environments, context: context).first else {
            throw CommandError("no snapshot to read", exitCode: .usage)
        }
        switch source.place {
        case .file(let path):
            // A runtime snapshot (--snapshot-out) or the state document apply writes at snapshotPath.
            return try loadSnapshot(try readFile(path, what: "the runtime snapshot", context: context), path: path)
        case .store(let location, let owner):
            let store = try SnapshotSourceOptions.open(location, owner: owner, context: context)
            let published: PublishedSnapshot
            do {
                published = try await StateStores.readPublished(store)
            } catch {
                throw CommandError(error.description)
            }
            guard let snapshot = published.snapshot else {
                throw CommandError("\(store.location): the state document publishes no snapshot yet; run apply first, or pass --snapshot FILE")
            }
            return snapshot
        }
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
}
