import Crypto
import Foundation
import Manifests
import RetentionMessaging
import RetentionMessagingModels
import Runtime

/// `retention-sync decide`: what a customer would be shown, from a snapshot and a realtime request.
struct DecideCommand: Command {
    static let name = "decide"
    static let summary = "Preview the realtime answer for a request"
    static let help = """
    Usage: retention-sync decide [--snapshot FILE | --manifests DIR --env ENV]
                                 (--request FILE | --signed-payload FILE --root FILE) [--explain]

    Answers a realtime "Get Retention Message" request from a runtime snapshot, exactly as a server
    embedding the decision engine would, and prints the response JSON, or "no answer" when Apple
    would show the default message.

    Options:
      --snapshot FILE        The runtime snapshot (as published by `retention-sync apply`).
      --manifests DIR        Without --snapshot: use the snapshotPath the App manifest in DIR declares
                             for --env (default: manifests).
      --env ENV              sandbox or production; may be left out when the App uses only one.
      --request FILE         A decoded request: JSON with originalTransactionId, appAppleId, productId,
                             userLocale, requestIdentifier, environment (Sandbox|Production), signedDate.
      --signed-payload FILE  Apple's signedPayload (the JWS, or the {"signedPayload": …} body), verified
                             before deciding: x5c chain, Apple's OIDs, appAppleId and environment.
      --root FILE[,FILE…]    Root certificates to trust for --signed-payload (PEM or DER; in production
                             Apple Root CA - G3 from https://www.apple.com/certificateauthority/).
      --explain              Also print, rule by rule, why each rule did or did not answer.

    Promotional offers are signed with the In-App Purchase key from RETENTION_SYNC_KEY_ID,
    RETENTION_SYNC_ISSUER_ID and RETENTION_SYNC_PRIVATE_KEY (the .p8 text) or
    RETENTION_SYNC_PRIVATE_KEY_FILE; the bundle id comes from the snapshot. Without them the
    response carries an unsigned preview in place of promotionalOfferSignatureV2.
    """

    static let unsignedPreview = "<unsigned preview: set RETENTION_SYNC_* credentials to sign>"

    static func run(_ arguments: inout Arguments, context: CommandContext) async throws -> ExitCode {
        let snapshotOption = try arguments.option("--snapshot")
        let manifestsOption = try arguments.option("--manifests")
        let environmentOption = try arguments.option("--env")
        let requestPath = try arguments.option("--request")
        let signedPayloadPath = try arguments.option("--signed-payload")
        let rootPaths = try arguments.option("--root")
        let explain = arguments.flag("--explain")
        try arguments.finish()

        let snapshotPath: String
        if let snapshotOption {
            if manifestsOption != nil || environmentOption != nil {
                throw CommandError("--manifests and --env choose a snapshot; give them or --snapshot, not both",
                                   exitCode: .usage)
            }
            snapshotPath = snapshotOption
        } else {
            snapshotPath = try publishedSnapshotPath(manifests: manifestsOption ?? "manifests",
                                                     environment: environmentOption, context: context)
        }
        let snapshot: RuntimeSnapshot
        do {
            snapshot = try RuntimeSnapshot.load(contentsOf: context.url(snapshotPath))
        } catch {
            throw CommandError("\(snapshotPath): \(error.description)")
        }

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

        let credentials = try signingCredentials(context: context)
        let engine: DecisionEngine
        if let credentials {
            engine = DecisionEngine(snapshot: snapshot, signer: PromotionalOfferSigner(
                keyId: credentials.keyId, issuerId: credentials.issuerId, bundleId: snapshot.bundleId,
                privateKey: credentials.key))
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
        }
        return .success
    }

    /// The `snapshotPath` the App manifest declares for the environment.
    private static func publishedSnapshotPath(manifests: String, environment name: String?,
                                              context: CommandContext) throws -> String {
        let (set, diagnostics) = ManifestLoader.load(directory: context.url(manifests), displayPath: manifests)
        guard let app = set?.app else {
            let details = DiagnosticRenderer.render(diagnostics.filter { $0.severity == .error }, format: .text, color: false)
            throw CommandError("\(manifests): no usable App manifest to find the snapshot in; pass --snapshot FILE"
                               + (details.isEmpty ? "" : "\n" + details.trimmingCharacters(in: .newlines)))
        }
        let settings: EnvironmentSettings
        if let name {
            guard let environment = RetentionMessagingModels.Environment(rawValue: name.lowercased()) else {
                throw CommandError("unknown environment '\(name)'; use sandbox or production", exitCode: .usage)
            }
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
        let data = try read(path, context: context)
        do {
            return try JSONDecoder().decode(DecodedRealtimeRequestBody.self, from: data)
        } catch {
            throw CommandError("\(path): not a decoded realtime request (\(reason(error))); it needs originalTransactionId, "
                               + "appAppleId, productId, userLocale, requestIdentifier, environment and signedDate")
        }
    }

    /// The JWS itself, or Apple's request body `{"signedPayload": "…"}`.
    private static func signedPayload(at path: String, context: CommandContext) throws -> String {
        let data = try read(path, context: context)
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.hasPrefix("{") else { return text }
        struct Body: Decodable { var signedPayload: String }
        do {
            return try JSONDecoder().decode(Body.self, from: data).signedPayload
        } catch {
            throw CommandError("\(path): a JSON body must be {\"signedPayload\": \"<JWS>\"} (\(reason(error)))")
        }
    }

    private static func roots(_ paths: String, context: CommandContext) throws -> [X509Certificate] {
        var roots: [X509Certificate] = []
        for path in paths.split(separator: ",").map(String.init) where !path.isEmpty {
            do {
                roots += try X509Certificate.load(contentsOfFile: context.url(path).path)
            } catch {
                throw CommandError("\(path): cannot read a root certificate (PEM or DER): \(error.description)")
            }
        }
        guard !roots.isEmpty else { throw CommandError("--root names no certificate file", exitCode: .usage) }
        return roots
    }

    private struct Credentials {
        var keyId: String
        var issuerId: String
        var key: ES256PrivateKey
    }

    /// The In-App Purchase key from the environment; nil when none of it is set (a preview).
    private static func signingCredentials(context: CommandContext) throws -> Credentials? {
        let environment = context.environment
        func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        let keyId = value("RETENTION_SYNC_KEY_ID")
        let issuerId = value("RETENTION_SYNC_ISSUER_ID")
        let keyText = value("RETENTION_SYNC_PRIVATE_KEY")
        let keyFile = value("RETENTION_SYNC_PRIVATE_KEY_FILE")
        if keyId == nil, issuerId == nil, keyText == nil, keyFile == nil { return nil }
        var missing: [String] = []
        if keyId == nil { missing.append("RETENTION_SYNC_KEY_ID") }
        if issuerId == nil { missing.append("RETENTION_SYNC_ISSUER_ID") }
        if keyText == nil, keyFile == nil { missing.append("RETENTION_SYNC_PRIVATE_KEY or RETENTION_SYNC_PRIVATE_KEY_FILE") }
        guard let keyId, let issuerId, missing.isEmpty else {
            throw CommandError("signing credentials are incomplete: set \(missing.joined(separator: ", ")) "
                               + "(or unset them all for an unsigned preview)")
        }
        do {
            if let keyText { return Credentials(keyId: keyId, issuerId: issuerId, key: try ES256PrivateKey(pem: keyText)) }
            let path = context.url(keyFile ?? "").path
            return Credentials(keyId: keyId, issuerId: issuerId, key: try ES256PrivateKey(contentsOfFile: path))
        } catch {
            let source = keyText != nil ? "RETENTION_SYNC_PRIVATE_KEY" : "RETENTION_SYNC_PRIVATE_KEY_FILE (\(keyFile ?? ""))"
            throw CommandError("\(source) is not a usable In-App Purchase key (.p8, EC P-256): \(error.description)")
        }
    }

    private static func read(_ path: String, context: CommandContext) throws -> Data {
        do {
            return try Data(contentsOf: context.url(path))
        } catch {
            throw CommandError("\(path): cannot read the file (\(error.localizedDescription))")
        }
    }

    private static func reason(_ error: any Error) -> String {
        switch error as? DecodingError {
        case .keyNotFound(let key, _)?: "missing '\(key.stringValue)'"
        case .typeMismatch(_, let context)?, .valueNotFound(_, let context)?:
            "\(context.codingPath.map(\.stringValue).joined(separator: ".")): \(context.debugDescription)"
        case .dataCorrupted?: "not valid JSON"
        default: "\(error)"
        }
    }
}
