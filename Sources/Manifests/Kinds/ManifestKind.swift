import YAML

/// One kind of manifest document (`kind: Image`, …) and everything the loader and the validator
/// do with it: its name, the raw form its documents decode into, how that becomes the model, and
/// its part of validation. Each kind lives in its own folder under `Kinds/` and is listed once in
/// `ManifestKinds.all`; nothing else decides which kind a document is.
protocol ManifestKind: Sendable {
    /// The document's `kind:` value.
    static var name: String { get }
    /// The document exactly as written: decoding it catches wrong types, missing and unknown keys.
    associatedtype Raw: Decodable

    /// Reads one document whose header named this kind (by default: decode `Raw`, then `add`).
    static func load(_ node: YAMLNode, name: String?, into loader: inout Loader)
    /// Converts one decoded document and adds it to what the loader collected.
    static func add(_ raw: Raw, node: YAMLNode, to loader: inout Loader)
    /// Notes a document of this kind that could not be read (`name`, when it has one), so that
    /// validation does not report a second error about what it would have declared.
    static func markBroken(name: String?, in loader: inout Loader)
    /// Runs once every file was read (to resolve what needs the whole directory).
    static func finish(_ loader: inout Loader)
    /// This kind's part of validation.
    static func validate(_ run: inout ValidationRun)
}

extension ManifestKind {
    static func finish(_ loader: inout Loader) {}

    /// Decodes and adds one document whose header named this kind.
    static func load(_ node: YAMLNode, name: String?, into loader: inout Loader) {
        guard let raw = loader.decode(Raw.self, node) else {
            markBroken(name: name, in: &loader)
            return
        }
        add(raw, node: node, to: &loader)
    }
}

/// Every manifest kind, in the order validation checks them. Adding a kind is a folder under
/// `Kinds/` and one line here.
enum ManifestKinds {
    static let all: [any ManifestKind.Type] = [
        AppKind.self,
        ImageKind.self,
        MessageKind.self,
        ExternalMessageKind.self,
        DefaultsKind.self,
        FlowKind.self,
    ]

    /// The kind a document's `kind:` names, or nil: an unknown kind is a diagnostic, never a guess.
    static func named(_ name: String) -> (any ManifestKind.Type)? { all.first { $0.name == name } }
}
