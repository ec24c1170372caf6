import Basics
import Crypto
import Foundation
import RetentionMessagingModels
import YAML

// Turning decoded documents into the model: names resolved, lists sorted, `*` expanded, and every
// value's place kept in `fieldLocations`.

extension Loader {
    mutating func convert(_ raw: RawApp, node: YAMLNode) -> AppManifest {
        var fields: [AppManifest.Field: SourceLocation] = [.bundleId: raw.bundleId.location]
        fields[.appAppleId] = raw.appAppleId?.location
        fields[.identityNamespace] = raw.identityNamespace?.location
        let environmentKeys = Self.keyLocations(node, "environments")
        fields[.environments] = node["environments"]?.location

        var environments: [EnvironmentSettings] = []
        for (key, settings) in raw.environments.sorted(by: { $0.key < $1.key }) {
            let keyLocation = environmentKeys[key] ?? settings.location
            guard let environment = Environment(rawValue: key) else {
                diagnostics.append(Self.unknownEnvironment(key, at: keyLocation))
                continue
            }
            var snapshotPath: String?
            if let path = settings.value.snapshotPath {
                if path.value.hasPrefix("/") || path.value.isEmpty {
                    diagnostics.append(.error("invalid-snapshot-path", at: path.location,
                                              "snapshotPath '\(path.value)' must be a relative path",
                                              hint: "write it relative to the manifest directory, e.g. .retention-sync/\(key)-snapshot.json"))
                } else {
                    snapshotPath = directory.appendingPathComponent(path.value).standardizedFileURL.path
                }
            }
            var settingsFields: [EnvironmentSettings.Field: SourceLocation] = [:]
            settingsFields[.realtimeURL] = settings.value.realtimeURL?.location
            settingsFields[.snapshotPath] = settings.value.snapshotPath?.location
            var converted = EnvironmentSettings(environment: environment, realtimeURL: settings.value.realtimeURL?.value,
                                                snapshotPath: snapshotPath, location: keyLocation)
            converted.fieldLocations = settingsFields
            environments.append(converted)
        }
        environments.sort { $0.environment < $1.environment }

        var products: [ProductManifest] = []
        for item in raw.products {
            var localeFields: [ProductManifest.Field: SourceLocation] = [.id: item.value.id.location]
            var locales: [String] = []
            for locale in item.value.locales {
                if let first = localeFields[.locale(locale.value)] {
                    diagnostics.append(.warning("duplicate-locale", at: locale.location,
                                                "locale '\(locale.value)' is listed twice for product '\(item.value.id.value)'",
                                                hint: "remove one; the first is at \(first)"))
                    continue
                }
                localeFields[.locale(locale.value)] = locale.location
                locales.append(locale.value)
            }
            var product = ProductManifest(id: item.value.id.value, locales: locales.sorted(), location: item.location)
            product.fieldLocations = localeFields
            products.append(product)
        }
        products = products.enumerated().sorted { ($0.element.id, $0.offset) < ($1.element.id, $1.offset) }.map(\.element)

        var app = AppManifest(bundleId: raw.bundleId.value, appAppleId: raw.appAppleId?.value,
                              identityNamespace: raw.identityNamespace?.value.lowercased(),
                              environments: environments, products: products, location: node.location)
        app.fieldLocations = fields
        return app
    }

    mutating func convert(_ raw: RawImage) -> ImageManifest {
        let url = raw.file.value.hasPrefix("/") ? URL(fileURLWithPath: raw.file.value)
            : directory.appendingPathComponent(raw.file.value)
        var png: [UInt8] = []
        if let data = FileManager.default.contents(atPath: url.path) {
            png = [UInt8](data)
        } else {
            let exists = FileManager.default.fileExists(atPath: url.path)
            diagnostics.append(.error("missing-image-file", at: raw.file.location,
                                      exists ? "cannot read image file '\(raw.file.value)'" : "image file '\(raw.file.value)' does not exist",
                                      hint: "image paths are relative to the manifest directory '\(displayPath)'"))
        }
        var image = ImageManifest(name: raw.name.value, file: raw.file.value, size: ImageSize(rawValue: raw.size.value),
                                  png: png, sha256: png.isEmpty ? "" : Digest.sha256Hex(png), location: raw.name.location)
        image.fieldLocations = [.name: raw.name.location, .file: raw.file.location, .size: raw.size.location]
        return image
    }

    mutating func convert(_ raw: RawMessage, node: YAMLNode) -> MessageManifest {
        let localeKeys = Self.keyLocations(node, "localizations")
        var localizations: [MessageLocalization] = []
        for (locale, item) in raw.localizations {
            let value = item.value
            var image: ImageReference?
            if let reference = value.image {
                image = ImageReference(name: reference.value.name.value, altText: reference.value.altText.value,
                                       location: reference.location)
                image?.fieldLocations = [.name: reference.value.name.location, .altText: reference.value.altText.location]
            }
            let bullets = (value.bulletPoints ?? []).map { bullet in
                var converted = BulletPoint(text: bullet.value.text.value, image: bullet.value.image.value,
                                            altText: bullet.value.altText.value, location: bullet.location)
                converted.fieldLocations = [.text: bullet.value.text.location, .image: bullet.value.image.location,
                                            .altText: bullet.value.altText.location]
                return converted
            }
            var localization = MessageLocalization(locale: locale, header: value.header.value, body: value.body.value,
                                                   image: image, bulletPoints: bullets,
                                                   location: localeKeys[locale] ?? item.location)
            var fields: [MessageLocalization.Field: SourceLocation] = [.header: value.header.location, .body: value.body.location]
            fields[.bulletPoints] = node["localizations"]?[locale]?["bulletPoints"]?.location
            localization.fieldLocations = fields
            localizations.append(localization)
        }
        localizations.sort { $0.locale < $1.locale }
        var message = MessageManifest(name: raw.name.value, product: raw.product?.value,
                                      headerPosition: raw.headerPosition.map { HeaderPosition(rawValue: $0.value) },
                                      localizations: localizations, location: raw.name.location)
        var fields: [MessageManifest.Field: SourceLocation] = [.name: raw.name.location]
        fields[.product] = raw.product?.location
        fields[.headerPosition] = raw.headerPosition?.location
        message.fieldLocations = fields
        return message
    }

    mutating func convert(_ raw: RawFlow, node: YAMLNode) -> FlowManifest {
        var fields: [FlowManifest.Field: SourceLocation] = [.name: raw.name.location]
        let fallbackKeys = Self.keyLocations(node, "localeFallbacks")
        var fallbacks: [String: String] = [:]
        for (from, to) in raw.localeFallbacks ?? [:] {
            fallbacks[from] = to.value
            fields[.fallbackKey(from)] = fallbackKeys[from] ?? to.location
            fields[.fallbackTarget(from)] = to.location
        }
        let rules = raw.rules.map { convert($0) }
        var flow = FlowManifest(name: raw.name.value, localeFallbacks: fallbacks, rules: rules, location: raw.name.location)
        flow.fieldLocations = fields
        return flow
    }

    private mutating func convert(_ item: Located<RawRule>) -> FlowRule {
        let raw = item.value
        var fields: [FlowRule.Field: SourceLocation] = [.name: raw.name.location, .response: raw.response.location]
        var match = RuleMatch()
        if let located = raw.match {
            let written = located.value
            fields[.match] = located.location
            if let products = written.products {
                match.products = products.map(\.value)
                for product in products where fields[.matchProduct(product.value)] == nil {
                    fields[.matchProduct(product.value)] = product.location
                }
            }
            if let locales = written.locales {
                match.locales = locales.map(\.value)
                for locale in locales where fields[.matchLocale(locale.value)] == nil {
                    fields[.matchLocale(locale.value)] = locale.location
                }
            }
            if let environments = written.environments {
                var parsed: [Environment] = []
                for environment in environments {
                    if let known = Environment(rawValue: environment.value) {
                        if !parsed.contains(known) { parsed.append(known) }
                        fields[.matchEnvironment(known)] = environment.location
                    } else {
                        diagnostics.append(Self.unknownEnvironment(environment.value, at: environment.location))
                    }
                }
                match.environments = parsed.sorted()
            }
            if let window = written.window {
                fields[.window] = window.location
                if let from = window.value.from {
                    fields[.windowFrom] = from.location
                    match.notBefore = timestamp(from)
                }
                if let until = window.value.until {
                    fields[.windowUntil] = until.location
                    match.notAfter = timestamp(until)
                }
            }
            if let split = written.split {
                fields[.split] = split.location
                fields[.splitGroup] = split.value.group.location
                fields[.splitPercent] = split.value.percent.location
                match.split = TrafficSplit(group: split.value.group.value, percent: split.value.percent.value)
            }
        }

        let response: RuleResponse
        switch raw.response.value {
        case .none:
            response = .none
        case .kinds(let kinds):
            var found: [(name: String, response: RuleResponse)] = []
            if let message = kinds.message {
                fields[.responseMessage] = message.location
                found.append(("message", .message(name: message.value)))
            }
            if let offer = kinds.promotionalOffer {
                fields[.responseMessage] = offer.value.message.location
                fields[.responseOfferIdentifier] = offer.value.offerIdentifier.location
                found.append(("promotionalOffer", .promotionalOffer(message: offer.value.message.value,
                                                                    offerIdentifier: offer.value.offerIdentifier.value)))
            }
            if let alternate = kinds.alternateProduct {
                fields[.responseMessage] = alternate.value.message.location
                fields[.responseProductId] = alternate.value.productId.location
                fields[.responseBillingPlanType] = alternate.value.billingPlanType?.location
                found.append(("alternateProduct", .alternateProduct(message: alternate.value.message.value,
                                                                    productId: alternate.value.productId.value,
                                                                    billingPlanType: alternate.value.billingPlanType.map {
                                                                        BillingPlanType(rawValue: $0.value)
                                                                    })))
            }
            if found.count == 1 {
                response = found[0].response
            } else if found.isEmpty {
                diagnostics.append(.error("invalid-response", at: raw.response.location,
                                          "rule '\(raw.name.value)' has an empty response",
                                          hint: "write one of message, alternateProduct or promotionalOffer, or 'response: none' to let Apple show the default message"))
                response = .none
            } else {
                diagnostics.append(.error("invalid-response", at: raw.response.location,
                                          "rule '\(raw.name.value)' answers with both \(found.map(\.name).joined(separator: " and "))",
                                          hint: "a rule answers with exactly one response; split it into separate rules"))
                response = found[0].response
            }
        }
        var rule = FlowRule(name: raw.name.value, match: match, response: response, location: item.location)
        rule.fieldLocations = fields
        return rule
    }

    /// Expands `Defaults` documents into one assignment per (product, locale), sorted by product
    /// then locale. Products the App does not declare are reported here, where `*` is resolved.
    mutating func expandDefaults(_ documents: [RawDefaults], app: AppManifest) -> [DefaultAssignment] {
        let productIds = app.products.map(\.id)
        var assignments: [DefaultAssignment] = []
        for document in documents {
            for entry in document.defaults {
                var products: [(product: ProductManifest, location: SourceLocation)] = []
                switch entry.value.products {
                case .all(let location):
                    products = app.products.map { ($0, location) }
                case .list(let ids):
                    for id in ids {
                        guard let product = app.product(id.value) else {
                            diagnostics.append(ManifestValidator.unknownProduct(id.value, at: id.location, declared: productIds))
                            continue
                        }
                        products.append((product, id.location))
                    }
                }
                for (product, productLocation) in products {
                    let locales: [(String, SourceLocation)] = switch entry.value.locales {
                    // A misspelt code (en_US) is reported where the product declares it; `*` means
                    // the locale the product meant, so the same mistake is not reported at the `*` too.
                    case .all(let location): product.locales.map { (AppStoreLocales.canonical($0) ?? $0, location) }
                    case .list(let locales): locales.map { ($0.value, $0.location) }
                    }
                    for (locale, location) in locales {
                        var assignment = DefaultAssignment(productId: product.id, locale: locale,
                                                           message: entry.value.message.value, location: location)
                        assignment.fieldLocations = [.product: productLocation, .message: entry.value.message.location]
                        assignments.append(assignment)
                    }
                }
            }
        }
        return assignments.enumerated().sorted { lhs, rhs in
            let (l, r) = (lhs.element, rhs.element)
            if l.productId != r.productId { return l.productId < r.productId }
            if l.locale != r.locale { return l.locale < r.locale }
            return lhs.offset < rhs.offset
        }.map(\.element)
    }

    private mutating func timestamp(_ text: Located<String>) -> Int64? {
        if let date = timestamps.parse(text.value) {
            return Int64((date.timeIntervalSince1970 * 1000).rounded())
        }
        diagnostics.append(.error("invalid-timestamp", at: text.location, "'\(text.value)' is not an RFC 3339 timestamp",
                                  hint: "write a date, a time and a zone, like 2026-03-01T00:00:00Z"))
        return nil
    }

    static func unknownEnvironment(_ name: String, at location: SourceLocation) -> Diagnostic {
        let names = Environment.allCases.map(\.rawValue)
        let suggestion = names.first { !name.isEmpty && $0.hasPrefix(name.lowercased()) } ?? NearMiss.best(name, in: names, maxDistance: 4)
        return .error("unknown-environment", at: location, "unknown environment '\(name)'",
                      hint: suggestion.map { "did you mean '\($0)'? environments are sandbox and production" }
                        ?? "environments are sandbox and production")
    }

    /// Where each key of the mapping at `key` was written.
    static func keyLocations(_ node: YAMLNode, _ key: String) -> [String: SourceLocation] {
        guard case .mapping(let pairs)? = node[key]?.kind else { return [:] }
        var locations: [String: SourceLocation] = [:]
        for pair in pairs {
            if let text = pair.key.scalar?.text, locations[text] == nil { locations[text] = pair.key.location }
        }
        return locations
    }
}

/// RFC 3339 timestamps (`2026-03-01T00:00:00Z`, offsets and fractional seconds allowed). One
/// instance per load, because formatters are costly to make and not safe to share between threads.
final class RFC3339 {
    private let plain = ISO8601DateFormatter()
    private let fractional = ISO8601DateFormatter()

    init() {
        plain.formatOptions = [.withInternetDateTime]
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    }

    func parse(_ text: String) -> Date? {
        plain.date(from: text) ?? fractional.date(from: text)
    }
}
