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
        let (identifiers, locations) = convertIdentifiers(raw.identifiers, node: node)
        var image = ExternalImageManifest(name: raw.name.value, identifiers: identifiers, location: raw.name.location)
        image.identifierLocations = locations
        return image
    }
}

extension ValidationRun {
    mutating func checkExternalImages() {
        var firstByIdentifier: [String: ExternalDeclaration] = [:]
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
            checkIdentifiers(of: ExternalDeclaration(kind: .image, name: image.name, identifiers: image.identifiers,
                                                     identifierLocations: image.identifierLocations, location: image.location),
                             seen: &firstByIdentifier)
        }
    }
}

extension ValidationRun {
    /// A message is uploaded to every environment the App declares, so an external image it shows
    /// needs an identifier in each: reported at the use, naming where the image is declared.
    mutating func checkExternalImageIdentifiers(_ position: Int, use: String, at location: SourceLocation) {
        let image = set.externalImages[position]
        let missing = declaredEnvironments.filter { image.identifiers[$0] == nil }.map(\.rawValue).sorted()
        guard !missing.isEmpty else { return }
        let names = missing.joined(separator: " and ")
        report(.error("missing-external-identifier", at: location,
                      "external image '\(image.name)' has no \(names) identifier, but \(use), and messages are uploaded to every environment the App declares",
                      hint: "add its \(names) identifier under 'identifiers:' (\(image.location)), or show a managed Image here"))
    }
}
