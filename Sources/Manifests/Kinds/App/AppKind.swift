import YAML

/// `kind: App`: the one document everything else hangs off. Its raw form, model, conversion (with
/// the state-store setting) and validation are the other files of this folder. The set holds it
/// as `ManifestSet.app`: without it there is no set.
enum AppKind: ManifestKind {
    static let name = "App"
    static var initialValue: AppManifest? { nil }

    /// Whether an App document was seen, and whether one could not be read.
    enum Seen: DeclarationKey {
        static var initialValue: (seen: Bool, broken: Bool) { (false, false) }
    }

    static func load(_ node: YAMLNode, name: String?, into loader: inout Loader) {
        if loader.declarations[Seen.self].seen {
            loader.diagnostics.append(.error("duplicate-app", at: node.location,
                                             "a second App document; a manifest directory describes exactly one app",
                                             hint: loader.app.map { "the first App is at \($0.location)" } ?? "keep one App document"))
            return
        }
        loader.declarations[Seen.self].seen = true
        guard let raw = loader.decode(RawApp.self, node) else { loader.declarations[Seen.self].broken = true; return }
        add(raw, node: node, to: &loader)
    }

    static func add(_ raw: RawApp, node: YAMLNode, to loader: inout Loader) {
        loader.declarations[Self.self] = loader.convert(raw, node: node)
    }

    static func markBroken(name: String?, in loader: inout Loader) {
        loader.declarations[Seen.self] = (true, true)
    }

    static func finish(_ loader: inout Loader) {}

    static func validate(_ run: inout ValidationRun) { run.checkApp() }

    /// Everything uses the App.
    static func checkUnused(_ run: inout ValidationRun) {}

    static func positions(in declarations: ManifestDeclarations) -> [String: Int] { [:] }
}

extension AppManifest: FieldLocated {}
extension EnvironmentSettings: FieldLocated {}
extension ProductManifest: FieldLocated {}

extension Loader {
    /// The App document, once read.
    var app: AppManifest? { declarations[AppKind.self] }
    /// Whether the App document could not be read (then there is no set).
    var appBroken: Bool { declarations[AppKind.Seen.self].broken }
    var sawApp: Bool { declarations[AppKind.Seen.self].seen }
}
