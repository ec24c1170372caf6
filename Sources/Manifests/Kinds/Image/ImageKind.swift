import YAML

/// `kind: Image`: a PNG file and its size.
enum ImageKind: ManifestKind {
    static let name = "Image"

    static func add(_ raw: RawImage, node: YAMLNode, to loader: inout Loader) {
        loader.images.append(loader.convert(raw))
    }

    static func markBroken(name: String?, in loader: inout Loader) {
        if let name { loader.broken.names.insert(name) }
    }

    static func validate(_ run: inout ValidationRun) { run.checkImages() }
}
