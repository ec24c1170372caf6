import YAML

/// `kind: Message`: per-locale text, pictures and bullet points; its name is its purpose.
enum MessageKind: ManifestKind {
    static let name = "Message"

    static func add(_ raw: RawMessage, node: YAMLNode, to loader: inout Loader) {
        loader.messages.append(loader.convert(raw, node: node))
    }

    static func markBroken(name: String?, in loader: inout Loader) {
        loader.broken.kinds.insert(Self.name)
        if let name { loader.broken.names.insert(name) }
    }

    static func validate(_ run: inout ValidationRun) { run.checkMessages() }
}
