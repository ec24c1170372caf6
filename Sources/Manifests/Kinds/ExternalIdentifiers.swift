import Basics
import RetentionMessagingModels
import YAML

// What the external kinds (`ExternalMessage`, `ExternalImage`) share: content known only by its
// identifier in each environment, read and checked the same way.

extension Loader {
    /// Reads an `identifiers:` mapping: a known environment name → the identifier written there;
    /// an unknown environment is reported at its key.
    mutating func convertIdentifiers(_ raw: [String: Located<String>], node: YAMLNode, key: String = "identifiers")
        -> (identifiers: [Environment: String], locations: [Environment: SourceLocation]) {
        let environmentKeys = Self.keyLocations(node, key)
        var identifiers: [Environment: String] = [:]
        var locations: [Environment: SourceLocation] = [:]
        for (key, identifier) in raw.sorted(by: { $0.key < $1.key }) {
            guard let environment = Environment(rawValue: key) else {
                diagnostics.append(Self.unknownEnvironment(key, at: environmentKeys[key] ?? identifier.location))
                continue
            }
            identifiers[environment] = identifier.value
            locations[environment] = identifier.location
        }
        return (identifiers, locations)
    }
}

/// One external declaration as the identifier checks see it.
struct ExternalDeclaration {
    /// `message` or `image`: what Apple's list of it is called.
    var kind: ContentKind
    var name: String
    var identifiers: [Environment: String]
    var identifierLocations: [Environment: SourceLocation]
    var location: SourceLocation

    var noun: String { "external \(kind.rawValue)" }
}

extension ValidationRun {
    /// At least one identifier, each a UUID, none declared twice in one environment (`seen` holds the
    /// first declaration of each, across the kind's documents), each in an environment the App declares.
    mutating func checkIdentifiers(of declaration: ExternalDeclaration, seen: inout [String: ExternalDeclaration]) {
        let noun = declaration.noun, name = declaration.name, list = "Apple's \(declaration.kind.rawValue) list"
        if declaration.identifiers.isEmpty {
            report(.error("no-identifiers", at: declaration.location, "\(noun) '\(name)' names no identifier",
                          hint: "add 'identifiers:' with the \(declaration.kind.rawValue)'s UUID in sandbox and/or production, as \(list) shows it"))
        }
        for (environment, identifier) in declaration.identifiers.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            let location = declaration.identifierLocations[environment] ?? declaration.location
            guard UUIDText.isUUID(identifier) else {
                report(.error("invalid-identifier", at: location,
                              "the \(environment.rawValue) identifier of \(noun) '\(name)', '\(Diagnostic.visible(identifier))', is not a UUID",
                              hint: "write it as \(list) shows it: 8-4-4-4-12 hexadecimal digits, like 6f1c2d3e-4b5a-4c6d-8e7f-0a1b2c3d4e5f"))
                continue
            }
            let key = "\(environment.rawValue):\(identifier.lowercased())"
            // One message may serve several locales of the same campaign.
            if let first = seen[key], first.name != name {
                report(.error("duplicate-identifier", at: location,
                              "\(noun)s '\(first.name)' and '\(name)' name the same \(environment.rawValue) identifier \(identifier.lowercased())",
                              hint: "keep one of them (\(first.location)) and refer to it by name"))
            } else {
                seen[key] = declaration
            }
            if !declaredEnvironments.contains(environment) {
                report(.warning("undeclared-environment", at: location,
                                "\(noun) '\(name)' names an identifier in \(environment.rawValue), which the App does not declare",
                                hint: "add \(environment.rawValue) under the App's environments, or remove this identifier"))
            }
        }
    }
}
