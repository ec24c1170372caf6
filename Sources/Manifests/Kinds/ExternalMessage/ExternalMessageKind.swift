import Basics
import RetentionMessagingModels
import YAML

/// `kind: ExternalMessage`: a message someone else uploaded, known by its identifier per environment.
enum ExternalMessageKind: NamedManifestKind {
    typealias Element = ExternalMessageManifest
    static let name = "ExternalMessage"

    static func add(_ raw: RawExternalMessage, node: YAMLNode, to loader: inout Loader) {
        append(loader.convert(raw, node: node), to: &loader)
    }

    static func markBroken(name: String?, in loader: inout Loader) {
        loader.broken.kinds.insert(Self.name)
        if let name { loader.broken.names.insert(name) }
    }

    static func validate(_ run: inout ValidationRun) { run.checkExternalMessages() }

    /// An external message nobody uses is harmless: it is never uploaded nor pruned.
    static func checkUnused(_ run: inout ValidationRun) {}
}

extension ExternalMessageManifest: NamedDeclaration {}

extension ManifestSet {
    /// Messages the tool did not upload, known by identifier (`kind: ExternalMessage`), sorted by name.
    public var externalMessages: [ExternalMessageManifest] {
        get { declarations[ExternalMessageKind.self] }
        set { declarations[ExternalMessageKind.self] = newValue }
    }

    public func externalMessage(named name: String) -> ExternalMessageManifest? { externalMessages.first { $0.name == name } }
}

extension Loader {
    mutating func convert(_ raw: RawExternalMessage, node: YAMLNode) -> ExternalMessageManifest {
        let (identifiers, locations) = convertIdentifiers(raw.identifiers ?? [:], node: node)
        let localeKeys = Self.keyLocations(node, "assumedText")
        var texts: [AssumedText] = []
        for (locale, item) in raw.assumedText ?? [:] {
            var text = AssumedText(locale: locale, header: item.value.header.value, body: item.value.body.value)
            text.location = localeKeys[locale] ?? item.location
            text.headerLocation = item.value.header.location
            text.bodyLocation = item.value.body.location
            texts.append(text)
        }
        texts.sort { $0.locale < $1.locale }
        var message = ExternalMessageManifest(name: raw.name.value, identifiers: identifiers, assumedText: texts,
                                              location: raw.name.location)
        message.identifierLocations = locations
        let localeKeys2 = Self.keyLocations(node, "localizations")
        for (locale, byEnvironment) in (raw.localizations ?? [:]).sorted(by: { $0.key < $1.key }) {
            let (identifiers, locations) = convertIdentifiers(byEnvironment.value, node: node["localizations"] ?? node, key: locale)
            message.localizations[locale] = identifiers
            message.localizationLocations[locale] = localeKeys2[locale] ?? byEnvironment.location
            message.localizedIdentifierLocations[locale] = locations
        }
        if raw.identifiers != nil && raw.localizations != nil {
            diagnostics.append(.error("identifiers-and-localizations", at: raw.name.location,
                                      "external message '\(Diagnostic.visible(raw.name.value))' has both 'identifiers:' and 'localizations:'",
                                      hint: "write 'identifiers:' when one message serves every locale, or 'localizations:' with each locale's identifiers, not both"))
        }
        return message
    }
}

extension ValidationRun {
    mutating func checkExternalMessages() {
        var firstByIdentifier: [String: ExternalDeclaration] = [:]
        var firstByName: [String: ExternalMessageManifest] = [:]
        for message in set.externalMessages {
            if let managed = messagesByName[message.name] {
                report(.error("duplicate-message", at: message.location,
                              "message name '\(message.name)' is used by a Message and an ExternalMessage",
                              hint: "the Message is at \(managed.location); give each its own name (an external message never turns into a managed one)"))
            } else if let first = firstByName[message.name] {
                report(.error("duplicate-message", at: message.location, "message name '\(message.name)' is used twice",
                              hint: "the first is at \(first.location); give each message its own name"))
            } else {
                firstByName[message.name] = message
            }
            if !ManifestValidator.isValidMessageName(message.name) {
                report(.error("invalid-name", at: message.location,
                              "message name '\(Diagnostic.visible(message.name))' must be lowercase letters, digits and hyphens, not starting with a hyphen",
                              hint: "try '\(ManifestValidator.suggestedName(message.name))'"))
            }
            if message.isLocalized {
                for (locale, identifiers) in message.localizations.sorted(by: { $0.key < $1.key }) {
                    let location = message.localizationLocations[locale] ?? message.location
                    _ = checkLocale(locale, at: location)
                    checkIdentifiers(of: ExternalDeclaration(kind: .message, name: message.name, identifiers: identifiers,
                                                             identifierLocations: message.localizedIdentifierLocations[locale] ?? [:], location: location),
                                     seen: &firstByIdentifier)
                }
            } else {
                checkIdentifiers(of: ExternalDeclaration(kind: .message, name: message.name, identifiers: message.identifiers,
                                                         identifierLocations: message.identifierLocations, location: message.location),
                                 seen: &firstByIdentifier)
            }
            for text in message.assumedText {
                checkLocale(text.locale, at: text.location ?? message.location)
                checkLength(text.header, limit: RetentionLimits.headerLength, what: "assumed header", code: "header-too-long",
                            at: text.headerLocation ?? message.location)
                checkLength(text.body, limit: RetentionLimits.bodyLength, what: "assumed body", code: "body-too-long",
                            at: text.bodyLocation ?? message.location)
            }
        }
    }

    /// A default naming an external message that has no identifier in a declared environment
    /// leaves those pairs' defaults as Apple holds them there (what `import` of one environment
    /// writes for an App with two): said once, as a warning.
    mutating func warnExternalDefaultOutside(_ position: Int, locale: String, at location: SourceLocation) {
        let message = set.externalMessages[position]
        let missing = declaredEnvironments.filter { message.identifier(in: $0, locale: locale) == nil }.map(\.rawValue).sorted()
        guard !missing.isEmpty else { return }
        let names = missing.joined(separator: " and ")
        report(.warning("external-not-in-environment", at: location,
                        "external message '\(message.name)' has no \(names) identifier: in \(names), retention-sync leaves the defaults it is assigned to as they are",
                        hint: "add its \(names) identifier under 'identifiers:' (\(message.location)) to manage those defaults there too"))
    }

    /// Reports a use of an external message in an environment where it has no identifier.
    mutating func checkExternalIdentifiers(_ position: Int, environments: [Environment], use: String, at location: SourceLocation) {
        let message = set.externalMessages[position]
        let missing = environments.filter { declaredEnvironments.contains($0) && !message.hasIdentifier(in: $0) }
        guard !missing.isEmpty else { return }
        let names = missing.map(\.rawValue).sorted().joined(separator: " and ")
        report(.error("missing-external-identifier", at: location,
                      "external message '\(message.name)' has no \(names) identifier, but is \(use) there",
                      hint: "add its \(names) identifier under 'identifiers:' (\(message.location)), or limit this use to the environments it has"))
    }
}
