import RetentionMessaging
import RetentionMessagingModels
import Runtime

public struct PlanOptions: Sendable, Hashable {
    /// Consider deleting remote content that nothing derives or uses.
    public var prune: Bool
    /// Allow a prune that deletes more than `pruneProtectionShare` of the remote content.
    public var pruneForce: Bool

    public init(prune: Bool = false, pruneForce: Bool = false) {
        self.prune = prune
        self.pruneForce = pruneForce
    }

    /// A prune that would delete more than this share of remote content is refused without `pruneForce`.
    public static let pruneProtectionShare = 0.25
}

/// A plan with everything apply needs to carry it out.
public struct PlanResult: Sendable {
    public var plan: Plan
    public var desired: DesiredState
    public var remote: RemoteState
    /// The snapshot apply would publish (nil when the environment has no snapshot store).
    public var snapshot: CompiledSnapshot?
    public var options: PlanOptions
}

/// Computes the plan: a pure function of the desired state, the remote state and the options,
/// so the same inputs always give a byte-identical plan.
public enum Planner {
    public static func plan(desired: DesiredState, remote: RemoteState, options: PlanOptions = PlanOptions(),
                            hasSnapshotStore: Bool) throws -> PlanResult {
        let gate = ReviewGate(desired: desired, remote: remote)
        var actions: [PlanAction] = []
        var problems: [PlanProblem] = []

        // Images first: messages refer to them.
        var imageUploads: [PlanAction] = []
        for image in desired.images {
            switch remote.images[image.identifier]?.state {
            case nil:
                imageUploads.append(PlanAction(
                    id: "\(ActionKind.uploadImage.rawValue):\(image.identifier)", kind: .uploadImage, state: .ready,
                    reason: "image '\(image.name)' is not in \(desired.environment.rawValue) yet",
                    identifier: image.identifier, name: image.name, imageSize: image.size))
            case .rejected?:
                problems.append(PlanProblem(kind: .rejectedImage, identifier: image.identifier, name: image.name, locale: nil,
                                            message: "image '\(image.name)' (\(image.identifier)) was REJECTED by App Review; replace the PNG to upload a new version"))
            default:
                break
            }
        }
        var messageUploads: [PlanAction] = []
        for message in desired.messages {
            switch remote.messages[message.identifier] {
            case nil:
                let needs = message.imageIdentifiers.filter { remote.images[$0] == nil }
                    .map { "\(ActionKind.uploadImage.rawValue):\($0)" }
                messageUploads.append(PlanAction(
                    id: "\(ActionKind.uploadMessage.rawValue):\(message.identifier)", kind: .uploadMessage, state: .ready,
                    reason: "message '\(message.name)' (\(message.locale)) version \(message.contentVersion) is not in \(desired.environment.rawValue) yet",
                    identifier: message.identifier, name: message.name, locale: message.locale,
                    dependsOn: Array(Set(needs)).sorted()))
            case .rejected?:
                problems.append(PlanProblem(kind: .rejectedMessage, identifier: message.identifier, name: message.name,
                                            locale: message.locale,
                                            message: "message '\(message.name)' (\(message.locale)) version \(message.contentVersion) was REJECTED by App Review; change its \(message.locale) text to upload a new version"))
            default:
                break
            }
        }

        // Apple's caps count what is already there; uploads come before deletions in apply.
        func capUploads(_ uploads: inout [PlanAction], existing: Int, noun: String) {
            let after = existing + uploads.count
            guard after > 2000 else { return }
            let text = "over Apple's cap of 2000 \(noun): \(existing) in \(desired.environment.rawValue) + \(uploads.count) to upload = \(after); delete unused \(noun) (plan --prune) first"
            for index in uploads.indices {
                uploads[index].state = .error
                uploads[index].error = text
            }
        }
        capUploads(&messageUploads, existing: remote.messages.count, noun: "messages")
        capUploads(&imageUploads, existing: remote.images.count, noun: "images")
        let capped = Dictionary(imageUploads.filter { $0.state == .error }.map { ($0.id, $0.name ?? "?") },
                                uniquingKeysWith: { first, _ in first })
        for index in messageUploads.indices where messageUploads[index].state == .ready {
            guard let image = messageUploads[index].dependsOn.first(where: { capped[$0] != nil }) else { continue }
            messageUploads[index].state = .error
            messageUploads[index].error = "its picture '\(capped[image] ?? "?")' cannot be uploaded: over Apple's cap of 2000 images; delete unused images (plan --prune) first"
        }
        actions += imageUploads
        actions += messageUploads

        // Defaults, for every declared pair: set what the manifests assign, delete what they no longer do.
        let assignments = Dictionary(desired.defaults.map { (ProductLocale(productId: $0.productId, locale: $0.locale), $0) },
                                     uniquingKeysWith: { first, _ in first })
        for pair in desired.declaredPairs {
            let current = remote.defaults[pair]
            if let wanted = assignments[pair] {
                guard current != wanted.messageIdentifier else { continue }
                var action = PlanAction(
                    id: "\(ActionKind.setDefault.rawValue):\(pair):\(wanted.messageIdentifier)", kind: .setDefault, state: .ready,
                    reason: current == nil
                        ? "no default is configured for \(pair); the manifests assign '\(wanted.messageName)'"
                        : "the default for \(pair) is another message; the manifests assign '\(wanted.messageName)'",
                    name: wanted.messageName, locale: pair.locale, productId: pair.productId,
                    messageIdentifier: wanted.messageIdentifier, currentMessageIdentifier: current,
                    dependsOn: remote.messages[wanted.messageIdentifier] == nil
                        ? ["\(ActionKind.uploadMessage.rawValue):\(wanted.messageIdentifier)"] : [])
                applyGate(gate.readiness(ofMessages: [wanted.messageIdentifier]), to: &action,
                          serving: current == nil ? "no default is shown until then" : "the current default keeps serving until then",
                          environment: desired.environment)
                actions.append(action)
            } else if let current {
                actions.append(PlanAction(
                    id: "\(ActionKind.deleteDefault.rawValue):\(pair)", kind: .deleteDefault, state: .ready,
                    reason: "the manifests no longer assign a default for \(pair)",
                    locale: pair.locale, productId: pair.productId, currentMessageIdentifier: current))
            }
        }

        // The runtime snapshot.
        var compiled: CompiledSnapshot?
        if hasSnapshotStore, !(desired.rules.isEmpty && remote.publishedSnapshot == nil) {
            let snapshot = try SnapshotCompiler.compile(desired: desired, remote: remote, gate: gate)
            compiled = snapshot
            let publishedDigest = remote.publishedSnapshot?.digest
            let pending = snapshot.outcomes.filter { $0.outcome == .held || $0.outcome == .leftOut }
            let waiting = Array(Set(pending.flatMap(\.waitingFor))).sorted()
            var action = PlanAction(
                id: ActionKind.publishSnapshot.rawValue, kind: .publishSnapshot, state: .ready, reason: "",
                snapshotDigest: snapshot.snapshot.digest, currentSnapshotDigest: publishedDigest,
                rules: snapshot.outcomes)
            // An empty snapshot where none is published changes nothing a customer sees.
            let changes = snapshot.snapshot.digest != publishedDigest
                && !(publishedDigest == nil && snapshot.snapshot.rules.isEmpty)
            if changes {
                let changed = snapshot.outcomes.filter { [.added, .updated, .removed].contains($0.outcome) }.count
                action.reason = publishedDigest == nil
                    ? "no snapshot is published yet"
                    : "\(changed) rule\(changed == 1 ? "" : "s") changed since the published snapshot"
                if !pending.isEmpty {
                    action.reason += "; \(pending.count) rule\(pending.count == 1 ? "" : "s") wait for review"
                    action.waitingFor = waiting
                }
                actions.append(action)
            } else if !pending.isEmpty {
                action.reason = "\(pending.count) rule\(pending.count == 1 ? "" : "s") changed"
                applyGate(waiting.contains { $0.state == MessageState.rejected.rawValue } ? .rejected(waiting) : .waiting(waiting),
                          to: &action, serving: "the published snapshot keeps serving until then", environment: desired.environment)
                actions.append(action)
            }
        }

        if let url = desired.realtimeURL, remote.realtimeURL != url {
            actions.append(PlanAction(
                id: "\(ActionKind.setRealtimeURL.rawValue):\(url)", kind: .setRealtimeURL, state: .ready,
                reason: remote.realtimeURL == nil ? "no realtime URL is configured" : "the configured realtime URL differs",
                url: url, currentURL: remote.realtimeURL))
        }

        let (prune, inventory) = inventoryAndPrune(desired: desired, remote: remote, compiled: compiled, options: options)
        actions += prune

        let plan = Plan(
            environment: desired.environment, bundleId: desired.bundleId, prune: options.prune,
            converged: actions.isEmpty, health: health(desired: desired, remote: remote),
            summary: summary(actions, problems: problems), actions: actions,
            problems: problems.sorted { ($0.name, $0.locale ?? "", $0.identifier) < ($1.name, $1.locale ?? "", $1.identifier) },
            inventory: inventory,
            estimate: estimate(actions, desired: desired, remote: remote),
            apiCalls: remote.apiCalls,
            fingerprints: Fingerprints(manifests: try desired.fingerprint(), remote: try remote.fingerprint()))
        return PlanResult(plan: plan, desired: desired, remote: remote, snapshot: compiled, options: options)
    }

    static func applyGate(_ readiness: ReviewGate.Readiness, to action: inout PlanAction, serving: String,
                          environment: Environment) {
        switch readiness {
        case .approved:
            return
        case .waiting(let items):
            action.state = .blocked
            action.waitingFor = items
            if environment == .sandbox && items.allSatisfy({ $0.state == "NOT_UPLOADED" }) {
                action.reason += "; waiting for this apply's uploads, which sandbox approves at once, so apply does it in the same run"
            } else {
                action.reason += "; waiting for review (\(serving))"
            }
        case .rejected(let items):
            action.state = .error
            action.waitingFor = items
            let rejected = items.filter { $0.state == MessageState.rejected.rawValue }
            action.error = "uses REJECTED content: " + rejected.map(\.description).joined(separator: ", ")
                + "; change that content in the manifests"
        }
    }

    static func inventoryAndPrune(desired: DesiredState, remote: RemoteState, compiled: CompiledSnapshot?,
                                  options: PlanOptions) -> ([PlanAction], [InventoryItem]) {
        let derivedMessages = Set(desired.messages.map(\.identifier))
        let derivedImages = Set(desired.images.map(\.identifier))

        var usedBy: [String: [String]] = [:]
        var namedBy: [String: String] = [:]
        for (pair, id) in remote.defaults { usedBy[id, default: []].append("default \(pair)") }
        for rule in remote.publishedSnapshot?.rules ?? [] {
            for (locale, id) in rule.response.messageIdentifiers ?? [:] {
                usedBy[id, default: []].append("rule \(rule.id) (\(locale), published)")
                if let name = rule.response.message { namedBy[id] = "\(name) (\(locale))" }
            }
        }
        for rule in compiled?.snapshot.rules ?? [] {
            for (_, id) in rule.response.messageIdentifiers ?? [:] where !derivedMessages.contains(id) {
                usedBy[id, default: []].append("rule \(rule.id) (to be published)")
            }
        }

        let unknownMessages = remote.messages.keys.filter { !derivedMessages.contains($0) }.sorted()
        let deletableMessages = unknownMessages.filter { usedBy[$0] == nil }
        let keptUnknown = unknownMessages.count - deletableMessages.count
        let unknownImages = remote.images.keys.filter { !derivedImages.contains($0) }.sorted()

        var items: [InventoryItem] = []
        var deletes: [PlanAction] = []
        for id in unknownMessages {
            let uses = Array(Set(usedBy[id] ?? [])).sorted()
            let pruneNote = uses.isEmpty ? "deleted by --prune" : "kept: in use"
            items.append(InventoryItem(kind: .message, identifier: id, state: remote.messages[id]?.rawValue ?? "",
                                       label: namedBy[id] == nil ? .unmanaged : .olderVersion, name: namedBy[id],
                                       usedBy: uses, prune: pruneNote))
            if options.prune && uses.isEmpty {
                deletes.append(PlanAction(
                    id: "\(ActionKind.deleteMessage.rawValue):\(id)", kind: .deleteMessage, state: .ready,
                    reason: "no manifest derives it and nothing in use refers to it", identifier: id, name: namedBy[id]))
            }
        }
        // The list calls never say which images a message uses, so an image is provably unused only
        // when no message we do not know the content of remains.
        for id in unknownImages {
            let provable = keptUnknown == 0
            items.append(InventoryItem(kind: .image, identifier: id, state: remote.images[id]?.state.rawValue ?? "",
                                       label: .unmanaged, name: nil, usedBy: [],
                                       prune: provable ? "deleted by --prune"
                                           : "kept: \(keptUnknown) message\(keptUnknown == 1 ? "" : "s") of unknown content remain and may use it"))
            if options.prune && provable {
                deletes.append(PlanAction(
                    id: "\(ActionKind.deleteImage.rawValue):\(id)", kind: .deleteImage, state: .ready,
                    reason: "no manifest derives it and every message that could use it is known or deleted first",
                    identifier: id, imageSize: remote.images[id]?.size,
                    dependsOn: deletableMessages.map { "\(ActionKind.deleteMessage.rawValue):\($0)" }))
            }
        }
        let remoteTotal = remote.messages.count + remote.images.count
        if !deletes.isEmpty, !options.pruneForce,
           Double(deletes.count) > PlanOptions.pruneProtectionShare * Double(remoteTotal) {
            let text = "prune protection: this would delete \(deletes.count) of \(remoteTotal) remote messages and images (more than 25%); check the inventory, then run again with --prune-force"
            for index in deletes.indices {
                deletes[index].state = .error
                deletes[index].error = text
            }
        }
        items.sort { ($0.kind.rawValue, $0.identifier) < ($1.kind.rawValue, $1.identifier) }
        return (deletes, items)
    }

    static func health(desired: DesiredState, remote: RemoteState) -> Health {
        let states = desired.messages.compactMap { remote.messages[$0.identifier]?.rawValue }
            + desired.images.compactMap { remote.images[$0.identifier]?.state.rawValue }
        if states.contains(MessageState.rejected.rawValue) { return .degraded }
        if states.contains(MessageState.pending.rawValue) { return .progressing }
        return .healthy
    }

    static func summary(_ actions: [PlanAction], problems: [PlanProblem]) -> PlanSummary {
        func count(_ kinds: Set<ActionKind>) -> Int { actions.filter { $0.state == .ready && kinds.contains($0.kind) }.count }
        return PlanSummary(
            toUpload: count([.uploadImage, .uploadMessage]),
            toSet: count([.setDefault, .publishSnapshot, .setRealtimeURL]),
            toDelete: count([.deleteDefault, .deleteMessage, .deleteImage]),
            blocked: actions.filter { $0.state == .blocked }.count,
            errors: actions.filter { $0.state == .error }.count + problems.count)
    }

    static func estimate(_ actions: [PlanAction], desired: DesiredState, remote: RemoteState) -> Estimate {
        let sandbox = desired.environment == .sandbox
        // In sandbox, uploads are approved at once and the apply re-lists, so blocked actions
        // waiting only on this apply's uploads are expected to run in the same apply.
        func runs(_ action: PlanAction) -> Bool {
            action.state == .ready || (sandbox && action.state == .blocked
                && action.waitingFor.allSatisfy { $0.state == "NOT_UPLOADED" || $0.state == MessageState.pending.rawValue })
        }
        let running = actions.filter(runs)
        let defaults = running.filter { $0.kind == .setDefault }.count
        var other = running.filter { $0.kind != .setDefault && $0.kind != .publishSnapshot }.count
        let uploads = running.filter { $0.kind == .uploadImage || $0.kind == .uploadMessage }.count
        if sandbox && uploads > 0 { other += 2 }
        let rates = Estimate.rates(for: desired.environment)
        let deletedMessages = running.filter { $0.kind == .deleteMessage }.count
        let deletedImages = running.filter { $0.kind == .deleteImage }.count
        return Estimate(
            configureDefaultRequests: defaults, otherRequests: other,
            configureDefaultRate: rates.configureDefault, otherRate: rates.other,
            // The plan's own reads already spent part of the hour's budget for the other class.
            minimumSeconds: Estimate.floorSeconds(requests: defaults, rate: rates.configureDefault)
                + max(0, Estimate.floorSeconds(requests: other + remote.apiCalls, rate: rates.other)
                         - Estimate.floorSeconds(requests: remote.apiCalls, rate: rates.other)),
            messagesAfter: remote.messages.count + running.filter { $0.kind == .uploadMessage }.count - deletedMessages,
            messagesCap: 2000,
            imagesAfter: remote.images.count + running.filter { $0.kind == .uploadImage }.count - deletedImages,
            imagesCap: 2000)
    }
}
