import RetentionMessaging
import RetentionMessagingModels
import Runtime

/// Decides whether content may be used (design.md, idea 2): a piece of content is usable when it
/// and everything it references (a message's images) are APPROVED in the environment. It knows the
/// kinds only through the registered content resources.
struct ReviewGate {
    enum Readiness: Equatable {
        case approved
        case waiting([ReviewItem])
        case rejected([ReviewItem])

        var items: [ReviewItem] {
            switch self {
            case .approved: []
            case .waiting(let items), .rejected(let items): items
            }
        }
    }

    /// What the manifests derive, by kind and identifier.
    let derived: [ContentKind: [String: DerivedContent]]
    /// What the remote holds, by kind and identifier.
    let states: [ContentKind: [String: ReviewState]]
    /// External content (known by identifier, content unknown), by kind and identifier: gated by
    /// its own listed state alone, like anything whose references are unknown.
    let externalNames: [ContentKind: [String: String]]

    init(desired: DesiredState, remote: RemoteState) {
        var derived: [ContentKind: [String: DerivedContent]] = [:]
        var states: [ContentKind: [String: ReviewState]] = [:]
        var externalNames: [ContentKind: [String: String]] = [:]
        for resource in RemoteResources.content {
            externalNames[resource.contentKind] = resource.declaredExternal(in: desired)
            derived[resource.contentKind] = Dictionary(resource.derived(in: desired).map { ($0.identifier, $0) },
                                                       uniquingKeysWith: { first, _ in first })
            states[resource.contentKind] = resource.remoteStates(in: remote)
        }
        self.derived = derived
        self.states = states
        self.externalNames = externalNames
    }

    /// How many items of every kind the remote holds.
    var remoteCount: Int { states.values.map(\.count).reduce(0, +) }

    /// The review state of every derived item (NOT_UPLOADED when the remote does not hold it).
    var derivedStates: [ReviewState] {
        derived.flatMap { kind, items in items.keys.map { states[kind]?[$0] ?? .notUploaded } }
    }

    func readiness(of references: some Sequence<ContentReference>) -> Readiness {
        var items = Set<ReviewItem>()
        for reference in references { items.formUnion(blockers(of: reference)) }
        let sorted = items.sorted()
        if sorted.isEmpty { return .approved }
        return sorted.contains { $0.state == .rejected } ? .rejected(sorted) : .waiting(sorted)
    }

    /// What a snapshot rule shows, of every kind.
    func readiness(ofRule rule: SnapshotRule) -> Readiness {
        readiness(of: RemoteResources.content.flatMap { resource in
            resource.used(byRule: rule).map { ContentReference(kind: resource.contentKind, identifier: $0) }
        })
    }

    /// The content that keeps a piece of content from being usable. For content the manifests do
    /// not derive, only its own state is known (what it references is unknown).
    func blockers(of reference: ContentReference) -> [ReviewItem] {
        let known = derived[reference.kind]?[reference.identifier]
        let state = states[reference.kind]?[reference.identifier] ?? .notUploaded
        var items: [ReviewItem] = []
        if state != .approved {
            items.append(ReviewItem(kind: reference.kind, identifier: reference.identifier,
                                    name: known?.name ?? externalNames[reference.kind]?[reference.identifier],
                                    locale: known?.locale, state: state))
        }
        for dependency in known?.references ?? [] { items += blockers(of: dependency) }
        return items
    }
}
