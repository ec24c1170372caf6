import YAML

/// `kind: Image`: a PNG file and its size.
enum ImageKind: NamedManifestKind {
    typealias Element = ImageManifest
    static let name = "Image"

    static func add(_ raw: RawImage, node: YAMLNode, to loader: inout Loader) {
        append(loader.convert(raw), to: &loader)
    }

    static func markBroken(name: String?, in loader: inout Loader) {
        if let name { loader.broken.names.insert(name) }
    }

    static func validate(_ run: inout ValidationRun) { run.checkImages() }

    /// An image is used by the messages that show it: unknown when a Message did not load.
    static func checkUnused(_ run: inout ValidationRun) {
        guard !run.broken.kinds.contains(MessageKind.name) && !run.broken.unknownKind else { return }
        for image in run.set.images where !run.usedImages.contains(image.name) && !run.suggestedNames.contains(image.name) {
            run.report(.warning("unused-image", at: image.location, "no message uses image '\(image.name)'",
                                hint: "it is still uploaded; remove it if it is no longer needed"))
        }
    }
}

extension ImageManifest: NamedDeclaration, FieldLocated {}
extension ImageReference: FieldLocated {}

extension ManifestSet {
    /// Sorted by name.
    public var images: [ImageManifest] {
        get { declarations[ImageKind.self] }
        set { declarations[ImageKind.self] = newValue }
    }

    public func image(named name: String) -> ImageManifest? { images.first { $0.name == name } }
}
