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

    /// Derives every identifier and the desired state of one environment: each kind derives its own
    /// slice (`<Kind>Resource+Derived.swift`), in dependency order. Every name the manifests use was
    /// resolved by the validator, so nothing here looks one up.
    public static func derive(_ validated: ValidatedManifests, environment: Environment) throws(ReconcilerError) -> DesiredState {
        let app = validated.set.app
        let derivation = Derivation(validated: validated, environment: environment, namespace: app.identityNamespace ?? Self.namespace)
        let images = try ImageResource.derive(derivation)
        let messages = try MessageResource.derive(derivation, images: images)
        let defaults = DefaultResource.derive(derivation, messages: messages)
        let snapshot = try SnapshotResource.derive(derivation, messages: messages)
        let externalMessages = MessageResource.deriveExternal(derivation)
        let externalImages = ImageResource.deriveExternal(derivation)
        return DesiredState(environment: environment, bundleId: app.bundleId, appAppleId: app.appAppleId,
                            identityNamespace: derivation.namespace, images: images.sorted, messages: messages.all,
                            declaredPairs: defaults.declaredPairs, defaults: defaults.defaults,
                            realtimeURL: RealtimeURLResource.derive(derivation), snapshotPath: app.settings(for: environment)?.snapshotPath,
                            rules: snapshot.rules, localeFallbacks: snapshot.localeFallbacks,
                            externalMessages: externalMessages.isEmpty ? nil : externalMessages,
                            externalImages: externalImages.isEmpty ? nil : externalImages,
                            pngs: images.pngs)
    }
}

/// What every kind's derivation reads: the resolved manifests, the environment and the identity
/// namespace. Every reference arrives as the element it names, so no kind looks a name or a
/// position up.
struct Derivation {
    let validated: ValidatedManifests
    let environment: Environment
    let namespace: String

    var bundleId: String { validated.set.app.bundleId }
}
