import Basics
import Foundation
import Crypto
public import Manifests
import RetentionMessaging
public import RetentionMessagingModels
import Runtime


/// Content-addressed identifiers (design.md, idea 1). Every identifier is a UUIDv5 in one fixed
/// namespace over a name string that holds everything that makes the content what it is, so anyone
/// can recompute it with any UUIDv5 library:
///
/// - image: `{bundleId}:{environment}:image:{imageSize}:{sha256 hex of the PNG}`
/// - message: `{bundleId}:{environment}:{productScope}:{locale}:{purpose}:{contentVersion}`
///   where `contentVersion` is the first 16 hex digits of SHA-256 over the canonical JSON of the
///   exact upload body, image references already resolved to image identifiers.
public enum Identities {
    /// The project's namespace UUID; an App manifest's `identityNamespace` overrides it.
    public static let namespace = "3d4bd7a5-9c3e-4a55-8f0e-2b6f6b1c9e71"

    public static func imageName(bundleId: String, environment: Environment, size: ImageSize, sha256: String) -> String {
        "\(bundleId):\(environment.rawValue):image:\(size.rawValue):\(sha256)"
    }

    public static func messageName(bundleId: String, environment: Environment, productScope: String,
                                   locale: String, purpose: String, contentVersion: String) -> String {
        "\(bundleId):\(environment.rawValue):\(productScope):\(locale):\(purpose):\(contentVersion)"
    }

    /// First 16 hex digits of SHA-256 over `CanonicalJSON.encode(body)`.
    public static func contentVersion(of body: UploadMessageRequestBody) throws -> String {
        String(Hashing.sha256Hex(try CanonicalJSON.encode(body)).prefix(16))
    }

    public static func uuid(namespace: String, name: String) throws(ReconcilerError) -> String {
        do {
            return try UUIDv5.make(namespace: namespace, name: name)
        } catch {
            throw .manifest(location: nil, message: "identity namespace '\(namespace)' is not a UUID: \(error)")
        }
    }

    /// Validates a set built in memory, then derives it; a reference that names nothing is an
    /// error worded as the validator words it.
    public static func derive(_ manifests: ManifestSet, environment: Environment) throws(ReconcilerError) -> DesiredState {
        switch ManifestValidator.check(manifests).validated {
        case .success(let validated):
            return try derive(validated, environment: environment)
        case .failure(let unresolved):
            throw .manifest(location: unresolved.location, message: unresolved.message)
        }
    }

    /// Derives every identifier and the desired state of one environment. Every name the manifests
    /// use was resolved by the validator, so nothing here looks one up.
    public static func derive(_ validated: ValidatedManifests, environment: Environment) throws(ReconcilerError) -> DesiredState {
        let app = validated.set.app
        let derivation = Derivation(validated: validated, environment: environment, namespace: app.identityNamespace ?? Self.namespace)
        let images = try derivation.images()
        let messages = try derivation.messages(images: images)
        let (defaults, leftAlone) = derivation.defaults(messages: messages)
        let (rules, fallbacks) = try RuleCompiler.compile(validated, environment: environment, messageIds: messages.localizedIds)
        let external = derivation.externalMessages()
        let externalImages = derivation.externalImages()
        let settings = app.settings(for: environment)
        return DesiredState(environment: environment, bundleId: app.bundleId, appAppleId: app.appAppleId,
                            identityNamespace: derivation.namespace,
                            images: images.byId.values.sorted { $0.identifier < $1.identifier },
                            messages: messages.all, declaredPairs: derivation.declaredPairs(defaults: defaults, leftAlone: leftAlone),
                            defaults: defaults,
                            realtimeURL: settings?.realtimeURL, snapshotPath: settings?.snapshotPath,
                            rules: rules, localeFallbacks: fallbacks, externalMessages: external.isEmpty ? nil : external,
                            externalImages: externalImages.isEmpty ? nil : externalImages,
                            pngs: images.pngs)
    }
}

/// One environment's identifiers, kind by kind, from the elements validation resolved: every
/// reference arrives as the element it names, so nothing here looks a name or a position up.
private struct Derivation {
    /// The managed images: each identifier once, with every name that shares its bytes.
    struct Images {
        var byId: [String: DesiredImage] = [:]
        var pngs: [String: [UInt8]] = [:]
        /// By image name (names are unique in a valid set; the first wins).
        var idByName: [String: String] = [:]
    }

    /// The managed messages' localizations and their identifiers.
    struct Messages {
        /// Sorted by name, then locale.
        var all: [DesiredMessage] = []
        /// Per message name (the first message of a name wins), its identifiers by locale (the first
        /// localization of a locale wins): what rules and defaults resolve to.
        var localizedIds: [String: [String: String]] = [:]
    }

    let validated: ValidatedManifests
    let environment: Environment
    let namespace: String

    private var bundleId: String { validated.set.app.bundleId }

    func images() throws(ReconcilerError) -> Images {
        var images = Images()
        for image in validated.set.images {
            let id = try Identities.uuid(namespace: namespace, name: Identities.imageName(bundleId: bundleId, environment: environment,
                                                                                          size: image.size, sha256: image.sha256))
            if images.idByName[image.name] == nil { images.idByName[image.name] = id }
            images.pngs[id] = image.png
            if var existing = images.byId[id] {
                existing.names = (existing.names + [image.name]).sorted()
                images.byId[id] = existing
            } else {
                images.byId[id] = DesiredImage(identifier: id, names: [image.name], size: image.size, sha256: image.sha256)
            }
        }
        return images
    }

    /// The identifier a localization's image reference carries in the upload body.
    private func identifier(of shown: ShownImage, images: Images, at location: SourceLocation) throws(ReconcilerError) -> String {
        switch shown {
        case .image(let image):
            guard let id = images.idByName[image.name] else {
                throw .manifest(location: location, message: "image '\(image.name)' was not derived")
            }
            return id
        case .external(let image):
            guard let id = image.identifier(in: environment) else {
                throw .manifest(location: location, message: "external image '\(image.name)' has no \(environment.rawValue) identifier (\(image.location))")
            }
            return id
        }
    }

    /// Every localization's upload body, named by its content.
    func messages(images: Images) throws(ReconcilerError) -> Messages {
        var messages = Messages()
        for resolved in validated.messages {
            let message = resolved.message
            var ids: [String: String] = [:]
            for shown in resolved.localizations {
                let localization = shown.localization
                var image: UploadMessageImage?
                if let reference = localization.image, let target = shown.image {
                    image = UploadMessageImage(imageIdentifier: try identifier(of: target, images: images, at: reference.location),
                                               altText: reference.altText)
                }
                var bullets: [UploadMessageBulletPoint] = []
                for (bullet, target) in zip(localization.bulletPoints, shown.bulletPoints) {
                    bullets.append(UploadMessageBulletPoint(text: bullet.text, imageIdentifier: try identifier(of: target, images: images, at: bullet.location),
                                                            altText: bullet.altText))
                }
                let body = UploadMessageRequestBody(header: localization.header, body: localization.body, image: image,
                                                    bulletPoints: bullets.isEmpty ? nil : bullets,
                                                    headerPosition: message.headerPosition)
                let desired = try self.message(message, localization, body: body)
                messages.all.append(desired)
                if ids[localization.locale] == nil { ids[localization.locale] = desired.identifier }
            }
            if messages.localizedIds[message.name] == nil { messages.localizedIds[message.name] = ids }
        }
        messages.all.sort { ($0.name, $0.locale) < ($1.name, $1.locale) }
        return messages
    }

    /// One localization's upload body named by its content: the version, then the identifier.
    private func message(_ message: MessageManifest, _ localization: MessageLocalization,
                         body: UploadMessageRequestBody) throws(ReconcilerError) -> DesiredMessage {
        let version: String
        do { version = try Identities.contentVersion(of: body) } catch {
            throw .manifest(location: localization.location, message: "cannot encode message: \(error)")
        }
        let id = try Identities.uuid(namespace: namespace, name: Identities.messageName(
            bundleId: bundleId, environment: environment, productScope: message.productScope,
            locale: localization.locale, purpose: message.name, contentVersion: version))
        return DesiredMessage(identifier: id, name: message.name, locale: localization.locale,
                              productScope: message.productScope, contentVersion: version, body: body)
    }

    /// The defaults, sorted, and the pairs whose default is an external message without an
    /// identifier here: those are left as they are.
    func defaults(messages: Messages) -> ([DesiredDefault], Set<ProductLocale>) {
        var defaults: [DesiredDefault] = []
        var leftAlone = Set<ProductLocale>()
        for resolved in validated.defaults {
            let assignment = resolved.assignment
            let identifier: String
            switch resolved.assigns {
            case .localization(let message, let locale):
                guard let id = messages.localizedIds[message.name]?[locale] else { continue }
                identifier = id
            case .external(let message):
                guard let id = message.identifier(in: environment) else {
                    leftAlone.insert(ProductLocale(productId: assignment.productId, locale: assignment.locale))
                    continue
                }
                identifier = id
            }
            defaults.append(DesiredDefault(productId: assignment.productId, locale: assignment.locale,
                                           messageName: assignment.message, messageIdentifier: identifier))
        }
        defaults.sort { ($0.productId, $0.locale) < ($1.productId, $1.locale) }
        return (defaults, leftAlone)
    }

    /// Every pair the app's products declare or a default names, but those left alone.
    func declaredPairs(defaults: [DesiredDefault], leftAlone: Set<ProductLocale>) -> [ProductLocale] {
        var pairs = Set(validated.set.app.products.flatMap { product in
            product.locales.map { ProductLocale(productId: product.id, locale: $0) }
        })
        pairs.formUnion(defaults.map { ProductLocale(productId: $0.productId, locale: $0.locale) })
        pairs.subtract(leftAlone)
        return pairs.sorted()
    }

    func externalMessages() -> [DesiredExternalMessage] {
        validated.set.externalMessages.compactMap { message in
            message.identifier(in: environment).map {
                DesiredExternalMessage(identifier: $0, name: message.name, assumedText: message.assumedText.isEmpty ? nil : message.assumedText)
            }
        }
    }

    func externalImages() -> [DesiredExternalImage] {
        validated.set.externalImages.compactMap { image in
            image.identifier(in: environment).map { DesiredExternalImage(identifier: $0, name: image.name) }
        }
    }
}

/// Turns the resolved rules into snapshot rules, as if every message were approved.
enum RuleCompiler {
    /// `messageIds`, per managed message name, its identifiers by locale.
    static func compile(_ validated: ValidatedManifests, environment: Environment,
                        messageIds: [String: [String: String]]) throws(ReconcilerError) -> ([SnapshotRule], [String: String]) {
        let app = validated.app
        var fallbacks: [String: String] = [:]
        for flow in validated.set.flows {
            for (from, to) in flow.localeFallbacks where fallbacks[from] == nil { fallbacks[from] = to }
        }
        var rules: [SnapshotRule] = []
        // Bucket ranges are laid out over every rule as written, before environment filtering, so a
        // customer lands in the same share in both environments and whatever else is held back.
        var groupCursor: [String: Double] = [:]
        for rule in validated.rules {
            guard let match = compileMatch(rule, environment: environment, groupCursor: &groupCursor) else { continue }
            var localized: [String: String] = [:]
            switch rule.shows {
            case .message(let message)?:
                localized = messageIds[message.name] ?? [:]
            case .external(let message)?:
                // An external message has one identifier for every locale the rule serves.
                if let id = message.identifier(in: environment) {
                    localized = Dictionary(uniqueKeysWithValues: rule.servedLocales(in: app).map { ($0, id) })
                }
            case nil:
                break
            }
            let response = compileResponse(rule, app: app, localizedIds: localized)
            let version = try ruleVersion(match: match, response: response)
            rules.append(SnapshotRule(id: rule.id, version: version, match: match, response: response))
        }
        return (rules, fallbacks)
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
