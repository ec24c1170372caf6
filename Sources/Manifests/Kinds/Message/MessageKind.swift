import YAML

/// `kind: Message`: per-locale text, pictures and bullet points; its name is its purpose.
enum MessageKind: NamedManifestKind {
    typealias Element = MessageManifest
    static let name = "Message"

    static func add(_ raw: RawMessage, node: YAMLNode, to loader: inout Loader) {
        append(loader.convert(raw, node: node), to: &loader)
    }

    static func markBroken(name: String?, in loader: inout Loader) {
        loader.broken.kinds.insert(Self.name)
        if let name { loader.broken.names.insert(name) }
    }

    static func validate(_ run: inout ValidationRun) { run.checkMessages() }

    /// A message is used by defaults and flow rules: unknown when either did not load.
    static func checkUnused(_ run: inout ValidationRun) {
        guard !run.broken.kinds.contains(DefaultsKind.name) && !run.broken.kinds.contains(FlowKind.name) && !run.broken.unknownKind else { return }
        for message in run.set.messages where !run.usedMessages.contains(message.name) && !run.suggestedNames.contains(message.name) {
            run.report(.warning("unused-message", at: message.location, "no default or flow rule uses message '\(message.name)'",
                                hint: "it is still uploaded; remove it if it is no longer needed"))
        }
    }
}

extension MessageManifest: NamedDeclaration, FieldLocated {}
extension MessageLocalization: FieldLocated {}
extension BulletPoint: FieldLocated {}

extension ManifestSet {
    /// Sorted by name.
    public var messages: [MessageManifest] {
        get { declarations[MessageKind.self] }
        set { declarations[MessageKind.self] = newValue }
    }

    public func message(named name: String) -> MessageManifest? { messages.first { $0.name == name } }
}
