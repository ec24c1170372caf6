/// A slot in `ManifestDeclarations`: every manifest kind is one (what the set holds of the kind),
/// and a kind may keep what it needs while loading under a key of its own.
protocol DeclarationKey {
    associatedtype Value: Sendable
    /// What the slot holds before anything was declared.
    static var initialValue: Value { get }
}

/// What the manifest kinds declared, each under its own key: the one store the loader fills and
/// the set carries, so a new kind adds no field to either.
public struct ManifestDeclarations: Sendable {
    private var values: [ObjectIdentifier: any Sendable] = [:]

    init() {}

    subscript<Key: DeclarationKey>(key: Key.Type) -> Key.Value {
        get { (values[ObjectIdentifier(key)] as? Key.Value) ?? Key.initialValue }
        set { values[ObjectIdentifier(key)] = newValue }
    }
}
