import Basics
import RetentionMessagingModels
import YAML

extension ValidationRun {
    mutating func checkMessages() {
        var firstByName: [String: MessageManifest] = [:]
        var uploadCount = 0
        for (position, message) in set.messages.enumerated() {
            if let first = firstByName[message.name] {
                report(.error("duplicate-message", at: message.location, "message name '\(message.name)' is used twice",
                              hint: "the first is at \(first.location); give each message its own name"))
            } else {
                firstByName[message.name] = message
            }
            if !ManifestValidator.isValidMessageName(message.name) {
                let suggestion = ManifestValidator.suggestedName(message.name)
                report(.error("invalid-name", at: message.location,
                              "message name '\(Diagnostic.visible(message.name))' must be lowercase letters, digits and hyphens, not starting with a hyphen",
                              hint: "the name is part of the message's identity; try '\(suggestion)'"))
            }
            if let product = message.product, productsById[product] == nil {
                report(ManifestValidator.unknownProduct(product, at: message.location(of: .product), declared: productIds))
            }
            if let position = message.headerPosition, position != .aboveBody, position != .aboveImage {
                report(.error("unknown-header-position", at: message.location(of: .headerPosition),
                              "unknown headerPosition '\(position.rawValue)'", hint: "write ABOVE_BODY or ABOVE_IMAGE"))
            }
            if message.localizations.isEmpty {
                report(.error("no-localizations", at: message.location, "message '\(message.name)' has no localizations",
                              hint: "add 'localizations:' with at least one locale"))
            }
            uploadCount += message.localizations.count
            let withoutImage = message.localizations.filter { $0.image == nil }.map(\.locale)
            if message.headerPosition == .aboveImage && !withoutImage.isEmpty {
                let which = withoutImage.count == 1 ? "the \(withoutImage[0]) localization has" : "the localizations \(withoutImage.joined(separator: ", ")) have"
                report(.error("header-position-needs-image", at: message.location(of: .headerPosition),
                              "headerPosition ABOVE_IMAGE needs an image, but \(which) none",
                              hint: "add an image to every localization of '\(message.name)', or remove headerPosition (ABOVE_BODY is the default)"))
            }
            for (index, localization) in message.localizations.enumerated() {
                references.localizationImages[position][index] = check(localization, of: message)
            }
        }
        if uploadCount > RetentionLimits.messages {
            report(.error("too-many-messages", at: nil,
                          "the manifests declare \(uploadCount) messages (one per message and locale); Apple allows at most \(RetentionLimits.messages) per app in each environment",
                          hint: "remove messages or locales no default or flow uses; the plan also counts messages already uploaded"))
        }
    }

    /// Checks one localization; returns the images it shows, resolved (nil for one that names nothing).
    private mutating func check(_ localization: MessageLocalization, of message: MessageManifest) -> ResolvedReferences.LocalizationImages? {
        let locale = localization.locale
        checkLocale(locale, at: localization.location)
        checkLength(localization.header, limit: RetentionLimits.headerLength, what: "header", code: "header-too-long",
                    at: localization.location(of: .header))
        checkLength(localization.body, limit: RetentionLimits.bodyLength, what: "body", code: "body-too-long",
                    at: localization.location(of: .body))
        var images: ResolvedReferences.LocalizationImages? = ResolvedReferences.LocalizationImages(image: nil, bulletPoints: [])
        if let image = localization.image {
            checkLength(image.altText, limit: RetentionLimits.altTextLength, what: "altText", code: "alt-text-too-long",
                        at: image.location(of: .altText))
            let target = checkImageReference(image.name, at: image.location(of: .name), required: .fullSize, use: "a message image",
                                             shownBy: "message '\(message.name)' (\(locale)) shows it")
            if let target { images?.image = target } else { images = nil }
        }
        if localization.bulletPoints.count > RetentionLimits.bulletPoints {
            report(.error("too-many-bullet-points", at: localization.location(of: .bulletPoints),
                          "\(localization.bulletPoints.count) bullet points; Apple allows at most \(RetentionLimits.bulletPoints)",
                          hint: "keep the \(RetentionLimits.bulletPoints) that matter most"))
        }
        for bullet in localization.bulletPoints {
            checkLength(bullet.text, limit: RetentionLimits.bulletPointTextLength, what: "bullet point text",
                        code: "bullet-text-too-long", at: bullet.location(of: .text))
            checkLength(bullet.altText, limit: RetentionLimits.altTextLength, what: "altText", code: "alt-text-too-long",
                        at: bullet.location(of: .altText))
            let target = checkImageReference(bullet.image, at: bullet.location(of: .image), required: .bulletPoint, use: "a bullet point image",
                                             shownBy: "message '\(message.name)' (\(locale)) shows it as a bullet point icon")
            if let target { images?.bulletPoints.append(target) } else { images = nil }
        }
        return images
    }

    /// Checks a reference to an image; returns what it names when the name resolves: a managed
    /// image, or an external one (whose size only Apple's image list knows: the plan checks it).
    private mutating func checkImageReference(_ name: String, at location: SourceLocation, required: ImageSize, use: String,
                                              shownBy: String) -> ResolvedReferences.ImageTarget? {
        usedImages.insert(name)
        guard let position = self.position(of: name, in: ImageKind.self) else {
            if let external = self.position(of: name, in: ExternalImageKind.self) {
                checkExternalImageIdentifiers(external, use: shownBy, at: location)
                return .external(external)
            }
            reportUnresolved("unknown-image", noun: "image", name, at: location,
                             candidates: set.images.map(\.name) + set.externalImages.map(\.name))
            return nil
        }
        let image = set.images[position]
        let known = image.size == .fullSize || image.size == .bulletPoint
        if known && image.size != required {
            report(.error("wrong-image-size", at: location,
                          "image '\(name)' is a \(image.size.rawValue) image, but \(use) must be \(required.rawValue)",
                          hint: "use a \(required.rawValue) image here (declared at \(image.location))"))
        }
        return .image(position)
    }
}
