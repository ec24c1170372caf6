import YAML

/// `kind: Flow`: ordered realtime rules.
enum FlowKind: ManifestKind {
    static let name = "Flow"

    static func add(_ raw: RawFlow, node: YAMLNode, to loader: inout Loader) {
        loader.flows.append(loader.convert(raw, node: node))
    }

    static func markBroken(name: String?, in loader: inout Loader) {
        loader.broken.kinds.insert(Self.name)
        if let name { loader.broken.names.insert(name) }
    }

    static func validate(_ run: inout ValidationRun) { run.checkFlows() }
}
