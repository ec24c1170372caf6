import Basics
import YAML

/// One kind of manifest document (`kind: Image`, …) and everything the loader, the set and the
/// validator do with it: its name, the raw form its documents decode into, how that becomes the
/// model, what the set holds of it, and its part of validation. Each kind lives in its own folder
/// under `Kinds/` and is listed once in `ManifestKinds.all`; nothing else decides which kind a
/// document is, and nothing outside the kind's folder stores what it declared: the loader and the
/// set keep it in `ManifestDeclarations`, under the kind.
protocol ManifestKind: DeclarationKey {
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
    /// Runs once every file was read: resolves what needs the whole directory and puts what this
    /// kind declared in its final order (named kinds: sorted by name).
    static func finish(_ loader: inout Loader)
    /// This kind's part of validation.
    static func validate(_ run: inout ValidationRun)
    /// Warnings for what this kind declared and nothing uses; runs after every kind validated.
    static func checkUnused(_ run: inout ValidationRun)
    /// Where each name this kind declares first appears in what the set holds of it; empty for a
    /// kind whose documents have no name. What a reference to the kind resolves through.
    static func positions(in declarations: ManifestDeclarations) -> [String: Int]
}

extension ManifestKind {
    /// Decodes and adds one document whose header named this kind.
    static func load(_ node: YAMLNode, name: String?, into loader: inout Loader) {
        guard let raw = loader.decode(Raw.self, node) else {
            markBroken(name: name, in: &loader)
            return
        }
        add(raw, node: node, to: &loader)
    }
}

/// A manifest element that other documents name.
protocol NamedDeclaration: Sendable {
    var name: String { get }
}

/// A kind whose documents each declare one named element; the set holds them sorted by name.
protocol NamedManifestKind: ManifestKind where Value == [Element] {
    associatedtype Element: NamedDeclaration
}

extension NamedManifestKind {
    static var initialValue: [Element] { [] }

    /// Sorted by name; elements with the same name (an error the validator reports) stay in the order written.
    static func finish(_ loader: inout Loader) {
        loader.declarations[Self.self] = loader.declarations[Self.self].enumerated().sorted { lhs, rhs in
            let (l, r) = (lhs.element.name, rhs.element.name)
            return l != r ? l < r : lhs.offset < rhs.offset
        }.map(\.element)
    }

    static func positions(in declarations: ManifestDeclarations) -> [String: Int] {
        Dictionary(declarations[Self.self].enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// Adds one converted element.
    static func append(_ element: Element, to loader: inout Loader) {
        loader.declarations[Self.self].append(element)
    }
}

/// Every manifest kind, in the order validation checks them. Adding a kind is a folder under
/// `Kinds/` and one line here.
enum ManifestKinds {
    static var all: [any ManifestKind.Type] { [
        AppKind.self,
        ImageKind.self,
        ExternalImageKind.self,
        MessageKind.self,
        ExternalMessageKind.self,
        DefaultsKind.self,
        FlowKind.self,
    ] }

    /// The kind a document's `kind:` names, or nil: an unknown kind is a diagnostic, never a guess.
    static func named(_ name: String) -> (any ManifestKind.Type)? { all.first { $0.name == name } }
}
