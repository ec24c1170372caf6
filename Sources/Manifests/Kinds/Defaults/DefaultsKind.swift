import YAML

/// `kind: Defaults`: (product, locale) → message, expanded once the App is known.
enum DefaultsKind: ManifestKind {
    static let name = "Defaults"

    static func add(_ raw: RawDefaults, node: YAMLNode, to loader: inout Loader) {
        loader.defaultDocuments.append(raw)
    }

    static func markBroken(name: String?, in loader: inout Loader) {
        loader.broken.kinds.insert(Self.name)
    }

    // `*` and locale lists need the App's products, which may be in any file.
    static func finish(_ loader: inout Loader) {
        guard let app = loader.app, !loader.appBroken else { return }
        loader.defaults = loader.expandDefaults(loader.defaultDocuments, app: app)
    }

    static func validate(_ run: inout ValidationRun) { run.checkDefaults() }
}
