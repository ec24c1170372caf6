import YAML

/// `kind: Flow`: ordered realtime rules.
enum FlowKind: NamedManifestKind {
    typealias Element = FlowManifest
    static let name = "Flow"

    static func add(_ raw: RawFlow, node: YAMLNode, to loader: inout Loader) {
        append(loader.convert(raw, node: node), to: &loader)
    }

    static func markBroken(name: String?, in loader: inout Loader) {
        loader.broken.kinds.insert(Self.name)
        if let name { loader.broken.names.insert(name) }
    }

    static func validate(_ run: inout ValidationRun) { run.checkFlows() }

    /// Nothing refers to a flow: the realtime endpoint serves every one.
    static func checkUnused(_ run: inout ValidationRun) {}
}

extension FlowManifest: NamedDeclaration, FieldLocated {}
extension FlowRule: FieldLocated {}

extension ManifestSet {
    /// Sorted by name.
    public var flows: [FlowManifest] {
        get { declarations[FlowKind.self] }
        set { declarations[FlowKind.self] = newValue }
    }
}
