import RetentionMessagingModels
/// Every remote resource, in dependency order (what is referred to before what refers to it):
/// the planner folds over this list and the applier's order is derived from it. Adding a
/// resource is a folder under `Resources/` and one line here.
enum RemoteResources {
    static let all: [any RemoteResource.Type] = [
        ImageResource.self,
        MessageResource.self,
        DefaultResource.self,
        SnapshotResource.self,
        RealtimeURLResource.self,
    ]

    /// The resources Apple reviews, in dependency order.
    static let content: [any ContentResource.Type] = all.compactMap { $0 as? any ContentResource.Type }

    /// The content resource of each kind.
    static let contentByKind: [ContentKind: any ContentResource.Type] =
        Dictionary(content.map { ($0.contentKind, $0) }, uniquingKeysWith: { first, _ in first })

    static func resource(of kind: ContentKind) -> any ContentResource.Type {
        guard let resource = contentByKind[kind] else { preconditionFailure("no registered content resource for '\(kind)'") }
        return resource
    }

    static let byID: [ResourceID: any RemoteResource.Type] = Dictionary(uniqueKeysWithValues: all.map { ($0.id, $0) })

    /// The resource an action kind acts on.
    static func resource(of kind: ActionKind) -> any RemoteResource.Type {
        guard let resource = byID[kind.resource] else { preconditionFailure("no registered resource '\(kind.resource)'") }
        return resource
    }

    /// Content uploads in dependency order, the re-list, configuration in dependency order, then
    /// content deletions in reverse: messages go before images because Apple refuses to delete an
    /// image a message still uses.
    static let applyOrder: [ActionKind.Step] = {
        let content = all.filter { $0.isContent }
        let uploads = content.flatMap { resource in resource.actionKinds.filter { $0.verb == .upload } }
        let configuration = all.filter { !$0.isContent }.flatMap { $0.actionKinds }
        let deletions = content.reversed().flatMap { resource in resource.actionKinds.filter { $0.verb == .delete } }
        return uploads.map(ActionKind.Step.perform) + [.relist] + (configuration + deletions).map(ActionKind.Step.perform)
    }()

    static let actionKinds: [ActionKind] = applyOrder.compactMap {
        if case .perform(let kind) = $0 { return kind }
        return nil
    }
}
