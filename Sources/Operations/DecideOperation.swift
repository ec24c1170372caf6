import Basics
public import CLIKit
import Foundation
import Manifests
import Reconciler
public import RetentionMessaging
public import RetentionMessagingModels
public import Runtime

/// `decide` as a use case: answers one realtime request from a snapshot as `serve` would, and
/// prints the answer (with `explain`, the rules evaluated and the text the customer sees).
/// Without credentials an offer's signature is a marked, unsigned preview.
public enum DecideOperation {
    public static let unsignedPreview = "<unsigned preview: set RETENTION_SYNC_* credentials to sign>"

    public static func run(_ request: DecodedRealtimeRequestBody, customer: CustomerFacts? = nil, snapshot: RuntimeSnapshot,
                           credentials: Credentials?, explain: Bool,
                           manifestsPath: String, context: CommandContext) throws -> ExitCode {
        let engine: DecisionEngine
        if let credentials {
            engine = DecisionEngine(snapshot: snapshot, signer: PromotionalOfferSigner(
                keyId: credentials.keyId, issuerId: credentials.issuerId, bundleId: snapshot.bundleId,
                privateKey: credentials.privateKey, clock: SystemClock()))
        } else {
            engine = DecisionEngine(snapshot: snapshot, offerSigning: { _, _, _ in unsignedPreview },
                                    advancedCommerceSigning: { _, _ in unsignedPreview })
        }
        let decision = try decide(request, customer: customer, engine: engine, explain: explain, context: context)
        switch decision {
        case .noAnswer(let reason):
            context.console.print("no answer: \(reason) (Apple shows the default message)")
        case .ruleAnswersNone(let answered):
            context.console.print("no answer: rule \(answered.ruleId) answers none (Apple shows the default message)")
        case .respond(let body, _):
            context.console.print(String(decoding: try CanonicalJSON.encodePretty(body), as: UTF8.self))
            if credentials == nil, body.promotionalOffer != nil || body.advancedCommerceInfo != nil {
                let field = body.promotionalOffer != nil ? "promotionalOfferSignatureV2" : "advancedCommerceData"
                context.console.error("note: \(field) is an unsigned preview; set RETENTION_SYNC_KEY_ID, "
                                      + "RETENTION_SYNC_ISSUER_ID and RETENTION_SYNC_PRIVATE_KEY or "
                                      + "RETENTION_SYNC_PRIVATE_KEY_FILE to sign it")
            }
            if explain {
                context.console.print()
                context.console.print(shownText(body, manifests: manifestsPath, environment: snapshot.environment, context: context))
            }
        }
        return .success
    }

    private static func decide(_ request: DecodedRealtimeRequestBody, customer: CustomerFacts?, engine: DecisionEngine, explain: Bool,
                               context: CommandContext) throws -> Decision {
        guard explain else { return try engine.decide(request, customer: customer) }
        let explained = try engine.explain(request, customer: customer)
        for step in explained.trace {
            context.console.print("\(step.matched ? "matched" : "skipped") \(step.ruleId): \(step.reason)")
        }
        if explained.trace.isEmpty { context.console.print("no rule evaluated") }
        context.console.print()
        return explained.decision
    }

    /// What the customer reads: the chosen message's texts from the manifests, in the locale the
    /// engine chose for the request.
    public static func shownText(_ body: RealtimeResponseBody, manifests: String, environment: RetentionMessagingModels.Environment,
                          context: CommandContext) -> String {
        let chosen: String? = body.message?.messageIdentifier ?? body.alternateProduct?.messageIdentifier
            ?? body.promotionalOffer?.messageIdentifier ?? body.advancedCommerceInfo?.messageIdentifier
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
}
