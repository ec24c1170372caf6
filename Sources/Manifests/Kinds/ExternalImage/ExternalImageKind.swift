import Basics
import RetentionMessagingModels
import YAML

/// `kind: ExternalImage`: an image someone else uploaded, known by its identifier per environment.
enum ExternalImageKind: NamedManifestKind {
    typealias Element = ExternalImageManifest
    static let name = "ExternalImage"

    static func add(_ raw: RawExternalImage, node: YAMLNode, to loader: inout Loader) {
        append(loader.convert(raw, node: node), to: &loader)
    }

    static func markBroken(name: String?, in loader: inout Loader) {
        loader.broken.kinds.insert(Self.name)
        if let name { loader.broken.names.insert(name) }
    }

    static func validate(_ run: inout ValidationRun) { run.checkExternalImages() }

    /// An external image nobody shows is harmless: it is never uploaded nor pruned.
    static func checkUnused(_ run: inout ValidationRun) {}
}

extension ExternalImageManifest: NamedDeclaration {}

extension ManifestSet {
    /// Images the tool did not upload, known by identifier (`kind: ExternalImage`), sorted by name.
    public var externalImages: [ExternalImageManifest] {
        get { declarations[ExternalImageKind.self] }
        set { declarations[ExternalImageKind.self] = newValue }
    }

    public func externalImage(named name: String) -> ExternalImageManifest? { externalImages.first { $0.name == name } }
}

extension Loader {
    mutating func convert(_ raw: RawExternalImage, node: YAMLNode) -> ExternalImageManifest {
        let environmentKeys = Self.keyLocations(node, "identifiers")
        var identifiers: [Environment: String] = [:]
        var locations: [Environment: SourceLocation] = [:]
        for (key, identifier) in raw.identifiers.sorted(by: { $0.key < $1.key }) {
            guard let environment = Environment(rawValue: key) else {
                diagnostics.append(Self.unknownEnvironment(key, at: environmentKeys[key] ?? identifier.location))
                continue
            }
            identifiers[environment] = identifier.value
            locations[environment] = identifier.location
        }
        var image = ExternalImageManifest(name: raw.name.value, identifiers: identifiers, location: raw.name.location)
        image.identifierLocations = locations
        return image
    }
}

extension ValidationRun {
    mutating func checkExternalImages() {
        var firstByIdentifier: [String: ExternalImageManifest] = [:]
        var firstByName: [String: ExternalImageManifest] = [:]
        for image in set.externalImages {
            if let managed = position(of: image.name, in: ImageKind.self).map({ set.images[$0] }) {
                report(.error("duplicate-image", at: image.location,
                              "image name '\(image.name)' is used by an Image and an ExternalImage",
                              hint: "the Image is at \(managed.location); give each its own name (an external image never turns into a managed one)"))
            } else if let first = firstByName[image.name] {
                report(.error("duplicate-image", at: image.location, "image name '\(image.name)' is used twice",
                              hint: "the first is at \(first.location); give each image its own name"))
            } else {
                firstByName[image.name] = image
            }
            if image.identifiers.isEmpty {
                report(.error("no-identifiers", at: image.location, "external image '\(image.name)' names no identifier",
                              hint: "add 'identifiers:' with the image's UUID in sandbox and/or production, as Apple's image list shows it"))
            }
            for (environment, identifier) in image.identifiers.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                let location = image.identifierLocations[environment] ?? image.location
                guard UUIDText.isUUID(identifier) else {
                    report(.error("invalid-identifier", at: location,
                                  "the \(environment.rawValue) identifier of external image '\(image.name)', '\(Diagnostic.visible(identifier))', is not a UUID",
                                  hint: "write it as Apple's image list shows it: 8-4-4-4-12 hexadecimal digits, like 6f1c2d3e-4b5a-4c6d-8e7f-0a1b2c3d4e5f"))
                    continue
                }
                let key = "\(environment.rawValue):\(identifier.lowercased())"
                if let first = firstByIdentifier[key] {
                    report(.error("duplicate-identifier", at: location,
                                  "external images '\(first.name)' and '\(image.name)' name the same \(environment.rawValue) identifier \(identifier.lowercased())",
                                  hint: "keep one of them (\(first.location)) and refer to it by name"))
                } else {
                    firstByIdentifier[key] = image
                }
                if !declaredEnvironments.contains(environment) {
                    report(.warning("undeclared-environment", at: location,
                                    "external image '\(image.name)' names an identifier in \(environment.rawValue), which the App does not declare",
                                    hint: "add \(environment.rawValue) under the App's environments, or remove this identifier"))
                }
            }
        }
    }
}
