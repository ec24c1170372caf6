import Basics
import Crypto
import Foundation
import RetentionMessagingModels
import StateLocations
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
            let snapshotPath = settings.value.snapshotPath.flatMap { storePath($0, what: "snapshotPath", environment: key) }
            var stateStore: StateLocation?
            if let store = settings.value.stateStore {
                stateStore = stateStoreLocation(store, environment: key)
            }
            var settingsFields: [EnvironmentSettings.Field: SourceLocation] = [:]
            settingsFields[.realtimeURL] = settings.value.realtimeURL?.location
            settingsFields[.snapshotPath] = settings.value.snapshotPath?.location
            settingsFields[.stateStore] = settings.value.stateStore?.location
            var converted = EnvironmentSettings(environment: environment, realtimeURL: settings.value.realtimeURL?.value,
                                                snapshotPath: snapshotPath, location: keyLocation)
            converted.stateStore = stateStore
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

    /// A store path, resolved once (symlinks included); nil, with a diagnostic, unless it is a
    /// relative path that stays inside the manifest directory, where nothing else is overwritten.
    private mutating func storePath(_ path: Located<String>, what: String, environment: String) -> String? {
        if path.value.hasPrefix("/") || path.value.isEmpty {
            diagnostics.append(.error("invalid-snapshot-path", at: path.location,
                                      "\(what) '\(path.value)' must be a relative path",
                                      hint: "write it relative to the manifest directory, e.g. .retention-sync/\(environment)-\(what == "stateStore" ? "state" : "snapshot").json"))
            return nil
        }
        guard ManifestPaths.isInside(path.value, directory: directory), let resolved = ManifestPaths.resolve(path.value, in: directory) else {
            diagnostics.append(.error("path-outside-manifests", at: path.location,
                                      "\(what) '\(path.value)' resolves outside the manifest directory '\(displayPath)'",
                                      hint: "keep stores inside the manifest directory (e.g. .retention-sync/\(environment)-\(what == "stateStore" ? "state" : "snapshot").json), so an apply never writes elsewhere"))
            return nil
        }
        return resolved
    }

    mutating func convert(_ raw: RawImage) -> ImageManifest {
        let url = raw.file.value.hasPrefix("/") ? URL(fileURLWithPath: raw.file.value)
            : directory.appendingPathComponent(raw.file.value)
        var png: [UInt8] = []
        if !ManifestPaths.isInside(raw.file.value, directory: directory) {
            // Read nothing from outside: a CI runner could otherwise upload any PNG it can read.
            diagnostics.append(.error("path-outside-manifests", at: raw.file.location,
                                      "image file '\(raw.file.value)' resolves outside the manifest directory '\(displayPath)'",
                                      hint: "images live next to the manifests: copy the PNG into '\(displayPath)' (or a folder in it) and write its path relative to it"))
        } else if let data = FileManager.default.contents(atPath: url.path) {
            png = [UInt8](data)
            if png.isEmpty {
                diagnostics.append(.error("invalid-png", at: raw.file.location, "'\(raw.file.value)': \(PNGError.empty)",
                                          hint: "Apple accepts PNG files only; export the image again as PNG"))
            }
        } else {
            let exists = FileManager.default.fileExists(atPath: url.path)
            diagnostics.append(.error("missing-image-file", at: raw.file.location,
                                      exists ? "cannot read image file '\(raw.file.value)'" : "image file '\(raw.file.value)' does not exist",
                                      hint: "image paths are relative to the manifest directory '\(displayPath)'"))
        }
        var image = ImageManifest(name: raw.name.value, file: raw.file.value, size: ImageSize(rawValue: raw.size.value),
                                  png: png, location: raw.name.location)
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
        switch RFC3339.parse(text.value) {
        case .success(let milliseconds):
            return milliseconds
        case .failure(let error):
            diagnostics.append(.error("invalid-timestamp", at: text.location, error.message,
                                      hint: "write a date, a time and a zone, like 2026-03-01T00:00:00Z"))
            return nil
        }
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

/// Strict RFC 3339 timestamps (`2026-03-01T00:00:00Z`, offsets and fractional seconds allowed):
/// every field is range-checked, so `2026-02-29` or `T24:00` is an error that names the part,
/// never a date rolled over into the next month.
enum RFC3339 {
    /// UNIX milliseconds, or why the text is not a timestamp.
    static func parse(_ text: String) -> Result<Int64, TimestampError> {
        let b = Array(text.utf8)
        func digits(_ at: Int, _ count: Int) -> Int? {
            guard at + count <= b.count else { return nil }
            var value = 0
            for byte in b[at..<(at + count)] {
                guard (0x30...0x39).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            return value
        }
        func at(_ index: Int, _ characters: String) -> Bool { index < b.count && characters.utf8.contains(b[index]) }
        let shape = TimestampError("'\(text)' is not an RFC 3339 timestamp")
        guard let year = digits(0, 4), at(4, "-") else {
            return .failure(b.count > 4 && digits(0, 5) != nil ? TimestampError("'\(text)' has a year with more than 4 digits") : shape)
        }
        guard let month = digits(5, 2), at(7, "-"), let day = digits(8, 2) else { return .failure(shape) }
        guard at(10, "Tt") else { return .failure(TimestampError("'\(text)' has no time: RFC 3339 needs a date, 'T', a time and a zone")) }
        guard let hour = digits(11, 2), at(13, ":"), let minute = digits(14, 2), at(16, ":"), let second = digits(17, 2) else {
            return .failure(shape)
        }
        var index = 19
        var milliseconds = 0.0
        if at(index, ".") {
            let start = index + 1
            index = start
            while index < b.count, (0x30...0x39).contains(b[index]) { index += 1 }
            guard index > start, let fraction = Double("0." + String(decoding: b[start..<index], as: UTF8.self)) else { return .failure(shape) }
            milliseconds = fraction * 1000
        }
        var offsetMinutes = 0
        if at(index, "Zz") {
            index += 1
        } else if at(index, "+-") {
            guard let offsetHour = digits(index + 1, 2), at(index + 3, ":"), let offsetMinute = digits(index + 4, 2) else {
                return .failure(TimestampError("'\(text)' has a malformed zone offset (write +HH:MM, -HH:MM or Z)"))
            }
            guard offsetHour <= 23 else { return .failure(TimestampError("'\(text)' has a zone offset of \(offsetHour) hours (at most 23)")) }
            guard offsetMinute <= 59 else { return .failure(TimestampError("'\(text)' has a zone offset with \(offsetMinute) minutes (at most 59)")) }
            offsetMinutes = (offsetHour * 60 + offsetMinute) * (b[index] == UInt8(ascii: "-") ? -1 : 1)
            index += 6
        } else {
            return .failure(TimestampError("'\(text)' has no zone: end it with Z or an offset like +01:00"))
        }
        guard index == b.count else { return .failure(shape) }
        guard (1...12).contains(month) else { return .failure(TimestampError("'\(text)' has month \(month) (months are 01–12)")) }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let monthDays = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        guard (1...monthDays).contains(day) else {
            let name = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
                        "October", "November", "December"][month - 1]
            return .failure(TimestampError("'\(text)' has day \(day), but \(name) \(year) has \(monthDays) days"))
        }
        guard hour <= 23 else { return .failure(TimestampError("'\(text)' has hour \(hour) (hours are 00–23; write the next day's T00:00:00)")) }
        guard minute <= 59 else { return .failure(TimestampError("'\(text)' has minute \(minute) (minutes are 00–59)")) }
        guard second <= 59 else { return .failure(TimestampError("'\(text)' has second \(second) (seconds are 00–59; leap seconds are not supported)")) }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + second) - Int64(offsetMinutes * 60)
        return .success(seconds * 1000 + Int64(milliseconds.rounded(.down)))
    }

    /// Days since 1970-01-01 in the proleptic Gregorian calendar (Howard Hinnant's algorithm).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}

struct TimestampError: Error {
    var message: String
    init(_ message: String) { self.message = message }
}
