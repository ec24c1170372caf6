import Basics
import Manifests
import RetentionMessagingModels
import Runtime

// The snapshot's slice of the desired state: the rules, compiled as if every message were approved.
extension SnapshotResource {
    static func derive(_ derivation: Derivation, messages: MessageResource.Derived) throws(ReconcilerError) -> (rules: [SnapshotRule], localeFallbacks: [String: String]) {
        try RuleCompiler.compile(derivation.validated, environment: derivation.environment, messageIds: messages.localizedIds)
    }
}

/// Turns the resolved rules into snapshot rules, as if every message were approved.
enum RuleCompiler {
    /// `messageIds`, per managed message name, its identifiers by locale.
    static func compile(_ validated: ValidatedManifests, environment: Environment,
                        messageIds: [String: [String: String]]) throws(ReconcilerError) -> ([SnapshotRule], [String: String]) {
        let app = validated.app
        var rules: [SnapshotRule] = []
        // Bucket ranges are laid out over every rule as written, before environment filtering, so a
        // customer lands in the same share in both environments and whatever else is held back.
        var groupCursor: [String: Double] = [:]
        let segments = declaredSegments(validated)
        for rule in validated.rules {
            guard var match = compileMatch(rule, environment: environment, groupCursor: &groupCursor) else { continue }
            if let group = match.split?.salt, let declared = segments["\(rule.flow)\u{0}\(group)"] {
                match.split?.confirm = declared
            }
            var localized: [String: String] = [:]
            switch rule.shows {
            case .message(let message)?:
                localized = messageIds[message.name] ?? [:]
            case .external(let message)?:
                // An external message has one identifier for every locale the rule serves, or one per locale.
                for locale in rule.servedLocales(in: app) {
                    if let id = message.identifier(in: environment, locale: locale) { localized[locale] = id }
                }
            case nil:
                break
            }
            let response = compileResponse(rule, app: app, localizedIds: localized)
            let version = try ruleVersion(match: match, response: response)
            rules.append(SnapshotRule(id: rule.id, version: version, match: match, response: response))
        }
        return (rules, validated.localeFallbacks)
    }

    /// Per flow and split group (`flow\0group`), the breakdowns its Flow declares under `segments:`,
    /// sorted and once each, as every arm of the group carries them.
    static func declaredSegments(_ validated: ValidatedManifests) -> [String: [String]] {
        var declared: [String: Set<String>] = [:]
        for flow in validated.set.flows {
            for segment in flow.segments where FlowSegment.breakdowns.contains(segment.by) {
                declared["\(flow.name)\u{0}\(segment.group)", default: []].insert(segment.by)
            }
        }
        return declared.mapValues { $0.sorted() }
    }

    /// What `serve` checks of a customer for this rule, or nil when the rule is not published to
    /// `environment`. Every condition is handled here: a condition left out would match everyone.
    static func compileMatch(_ rule: ResolvedRule, environment: Environment, groupCursor: inout [String: Double]) -> SnapshotMatch? {
        var match = SnapshotMatch()
        var published = true
        for condition in rule.match.conditions {
            switch condition {
            case .products(let products):
                match.products = products
            case .locales(let locales):
                match.locales = locales
            case .environments(let environments):
                published = environments.contains(environment)
            case .window(let notBefore, let notAfter):
                (match.notBefore, match.notAfter) = (notBefore, notAfter)
            case .customer(let conditions):
                match.customer = conditions
            case .split(let share):
                let start = groupCursor[share.group, default: 0]
                let end = start + share.percent
                groupCursor[share.group] = end
                match.split = SnapshotSplit(salt: share.group, lowerBucket: Int((start * 100).rounded()),
                                            upperBucket: min(SnapshotSplit.bucketCount, Int((end * 100).rounded())),
                                            control: share.control)
            }
        }
        return published ? match : nil
    }

    /// `localizedIds`: the identifiers of the rule's message by locale, as the validator resolved it.
    static func compileResponse(_ rule: ResolvedRule, app: AppManifest, localizedIds localized: [String: String]) -> SnapshotResponse {
        guard let name = rule.response.messageName else { return SnapshotResponse(kind: .none) }
        var identifiers: [String: String] = [:]
        for locale in rule.servedLocales(in: app) {
            if let id = localized[locale] { identifiers[locale] = id }
        }
        switch rule.response {
        case .message:
            return SnapshotResponse(kind: .message, message: name, messageIdentifiers: identifiers)
        case .alternateProduct(_, let productId, let billingPlanType):
            return SnapshotResponse(kind: .alternateProduct, message: name, messageIdentifiers: identifiers,
                                    productId: productId, billingPlanType: billingPlanType)
        case .promotionalOffer(_, let offerIdentifier):
            return SnapshotResponse(kind: .promotionalOffer, message: name, messageIdentifiers: identifiers,
                                    offerIdentifier: offerIdentifier)
        case .advancedCommerce(_, let change):
            return SnapshotResponse(kind: .advancedCommerce, message: name, messageIdentifiers: identifiers,
                                    advancedCommerce: change)
        case .none:
            return SnapshotResponse(kind: .none)
        }
    }

    struct VersionedPart: Encodable {
        var match: SnapshotMatch
        var response: SnapshotResponse
    }

    static func ruleVersion(match: SnapshotMatch, response: SnapshotResponse) throws(ReconcilerError) -> String {
        do {
            return String(Hashing.sha256Hex(try CanonicalJSON.encode(VersionedPart(match: match, response: response))).prefix(16))
        } catch {
            throw .internal("cannot encode a rule: \(error)")
        }
    }
}
