import RetentionMessaging
import RetentionMessagingModels

/// Decides whether content may be used (design.md, idea 2): a message is usable when it and
/// every image it references are APPROVED in the environment.
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

    let desired: DesiredState
    let remote: RemoteState
    let messages: [String: DesiredMessage]
    let imageNames: [String: String]

    init(desired: DesiredState, remote: RemoteState) {
        self.desired = desired
        self.remote = remote
        messages = desired.messageIndex
        imageNames = Dictionary(desired.images.map { ($0.identifier, $0.name) }, uniquingKeysWith: { first, _ in first })
    }

    func readiness(ofMessages identifiers: some Sequence<String>) -> Readiness {
        var items = Set<ReviewItem>()
        for id in identifiers { items.formUnion(blockers(ofMessage: id)) }
        let sorted = items.sorted()
        if sorted.isEmpty { return .approved }
        return sorted.contains { $0.state == .rejected } ? .rejected(sorted) : .waiting(sorted)
    }

    /// The message and images that keep a message from being usable. For a message the manifests
    /// do not derive, only its own state is known (its images are unknown).
    func blockers(ofMessage id: String) -> [ReviewItem] {
        let known = messages[id]
        var items: [ReviewItem] = []
        let state = remote.messages[id]
        if state != .approved {
            items.append(ReviewItem(kind: .message, identifier: id, name: known?.name, locale: known?.locale,
                                    state: ReviewState(state)))
        }
        for imageId in known?.imageIdentifiers ?? [] {
            let imageState = remote.images[imageId]?.state
            if imageState != .approved {
                items.append(ReviewItem(kind: .image, identifier: imageId, name: imageNames[imageId],
                                        locale: nil, state: ReviewState(imageState)))
            }
        }
        return items
    }
}
