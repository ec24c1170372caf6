import Basics
import Manifests
import RetentionMessagingModels

// The message kind's slice of the desired state: what `Identities.derive` asks of it.
extension MessageResource {
    /// The managed messages' localizations and their identifiers.
    struct Derived {
        /// Sorted by name, then locale.
        var all: [DesiredMessage] = []
        /// Per message name (the first message of a name wins), its identifiers by locale (the first
        /// localization of a locale wins): what rules and defaults resolve to.
        var localizedIds: [String: [String: String]] = [:]
    }

    /// The identifier a localization's image reference carries in the upload body.
    private static func identifier(of shown: ShownImage, images: ImageResource.Derived, in environment: Environment,
                                   at location: SourceLocation) throws(ReconcilerError) -> String {
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
    static func derive(_ derivation: Derivation, images: ImageResource.Derived) throws(ReconcilerError) -> Derived {
        var messages = Derived()
        for resolved in derivation.validated.messages {
            let message = resolved.message
            var ids: [String: String] = [:]
            for shown in resolved.localizations {
                let localization = shown.localization
                var image: UploadMessageImage?
                if let reference = localization.image, let target = shown.image {
                    image = UploadMessageImage(imageIdentifier: try identifier(of: target, images: images, in: derivation.environment, at: reference.location),
                                               altText: reference.altText)
                }
                var bullets: [UploadMessageBulletPoint] = []
                for (bullet, target) in zip(localization.bulletPoints, shown.bulletPoints) {
                    bullets.append(UploadMessageBulletPoint(text: bullet.text, imageIdentifier: try identifier(of: target, images: images, in: derivation.environment, at: bullet.location),
                                                            altText: bullet.altText))
                }
                let body = UploadMessageRequestBody(header: localization.header, body: localization.body, image: image,
                                                    bulletPoints: bullets.isEmpty ? nil : bullets,
                                                    headerPosition: message.headerPosition)
                let desired = try self.message(message, localization, body: body, derivation: derivation)
                messages.all.append(desired)
                if ids[localization.locale] == nil { ids[localization.locale] = desired.identifier }
            }
            if messages.localizedIds[message.name] == nil { messages.localizedIds[message.name] = ids }
        }
        messages.all.sort { ($0.name, $0.locale) < ($1.name, $1.locale) }
        return messages
    }

    /// One localization's upload body named by its content: the version, then the identifier.
    private static func message(_ message: MessageManifest, _ localization: MessageLocalization, body: UploadMessageRequestBody,
                                derivation: Derivation) throws(ReconcilerError) -> DesiredMessage {
        let version: String
        do { version = try Identities.contentVersion(of: body) } catch {
            throw .manifest(location: localization.location, message: "cannot encode message: \(error)")
        }
        let id = try Identities.uuid(namespace: derivation.namespace, name: Identities.messageName(
            bundleId: derivation.bundleId, environment: derivation.environment, productScope: message.productScope,
            locale: localization.locale, purpose: message.name, contentVersion: version))
        return DesiredMessage(identifier: id, name: message.name, locale: localization.locale,
                              productScope: message.productScope, contentVersion: version, body: body)
    }

    /// The messages used by identifier (`kind: ExternalMessage`) that have one in this environment.
    static func deriveExternal(_ derivation: Derivation) -> [DesiredExternalMessage] {
        derivation.validated.set.externalMessages.flatMap { message in
            message.identifiers(in: derivation.environment).map { entry in
                // A localized one is a message per locale: each carries its own locales' assumed text.
                let texts = message.assumedText.filter { entry.locales?.contains($0.locale) ?? true }
                return DesiredExternalMessage(identifier: entry.identifier, name: message.name, assumedText: texts.isEmpty ? nil : texts,
                                              locales: entry.locales)
            }
        }
    }

}
