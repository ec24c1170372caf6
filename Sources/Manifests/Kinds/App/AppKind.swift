import YAML

/// `kind: App`: the one document everything else hangs off. Its raw form, model, conversion (with
/// the state-store setting) and validation are the other files of this folder.
enum AppKind: ManifestKind {
    static let name = "App"

    static func load(_ node: YAMLNode, name: String?, into loader: inout Loader) {
        if loader.sawApp {
            loader.diagnostics.append(.error("duplicate-app", at: node.location,
                                             "a second App document; a manifest directory describes exactly one app",
                                             hint: loader.app.map { "the first App is at \($0.location)" } ?? "keep one App document"))
            return
        }
        loader.sawApp = true
        guard let raw = loader.decode(RawApp.self, node) else { loader.appBroken = true; return }
        add(raw, node: node, to: &loader)
    }

    static func add(_ raw: RawApp, node: YAMLNode, to loader: inout Loader) {
        loader.app = loader.convert(raw, node: node)
    }

    static func markBroken(name: String?, in loader: inout Loader) {
        loader.sawApp = true
        loader.appBroken = true
    }

    static func validate(_ run: inout ValidationRun) { run.checkApp() }
}
