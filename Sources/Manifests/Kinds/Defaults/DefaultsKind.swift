import YAML

/// `kind: Defaults`: (product, locale) → message, expanded once the App is known.
enum DefaultsKind: ManifestKind {
    static let name = "Defaults"
    static var initialValue: [DefaultAssignment] { [] }

    /// The documents as written, until `finish` expands them.
    enum Documents: DeclarationKey {
        static var initialValue: [RawDefaults] { [] }
    }

    static func add(_ raw: RawDefaults, node: YAMLNode, to loader: inout Loader) {
        loader.declarations[Documents.self].append(raw)
    }

    static func markBroken(name: String?, in loader: inout Loader) {
        loader.broken.kinds.insert(Self.name)
    }

    // `*` and locale lists need the App's products, which may be in any file.
    static func finish(_ loader: inout Loader) {
        let documents = loader.declarations[Documents.self]
        loader.declarations[Documents.self] = []
        guard let app = loader.app, !loader.appBroken else { return }
        loader.declarations[Self.self] = loader.expandDefaults(documents, app: app)
    }

    static func validate(_ run: inout ValidationRun) { run.checkDefaults() }

    /// A default uses what it names; nothing names a default.
    static func checkUnused(_ run: inout ValidationRun) {}

    /// Defaults are named by their (product, locale) pair, not by a name.
    static func positions(in declarations: ManifestDeclarations) -> [String: Int] { [:] }
}

extension DefaultAssignment: FieldLocated {}

extension ManifestSet {
    /// Every (product, locale) → message assignment, expanded from `Defaults` documents
    /// (`*` and locale lists resolved), sorted by product then locale.
    public var defaults: [DefaultAssignment] {
        get { declarations[DefaultsKind.self] }
        set { declarations[DefaultsKind.self] = newValue }
    }
}
