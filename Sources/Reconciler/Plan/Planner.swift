import RetentionMessaging
import RetentionMessagingModels
import Runtime
import StateStore

public struct PlanOptions: Sendable, Hashable {
    /// Consider deleting remote content that nothing derives or uses.
    public var prune: Bool
    /// Allow a prune that deletes more than `pruneProtectionShare` of the remote content.
    public var pruneForce: Bool
    /// Rollback targets a prune deletes anyway, because the operator named them.
    public var pruneNamed: Set<String>
    /// How many approved earlier versions of each message localization the state recorded are kept
    /// as rollback targets (a revert then needs no upload and no review).
    public var rollbackVersions: Int

    public init(prune: Bool = false, pruneForce: Bool = false, pruneNamed: Set<String> = [],
                rollbackVersions: Int = PlanOptions.defaultRollbackVersions) {
        self.prune = prune
        self.pruneForce = pruneForce
        self.pruneNamed = pruneNamed
        self.rollbackVersions = rollbackVersions
    }

    /// Kept per message localization by default: enough to revert the last few changes of a message.
    public static let defaultRollbackVersions = 3

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
    /// Where remote content is in use (defaults, the published snapshot's rules).
    public var usage: UsageIndex
}

/// Computes the plan: a pure function of the desired state, the remote state and the options,
/// so the same inputs always give a byte-identical plan.
public enum Planner {
    public static func plan(desired: DesiredState, remote: RemoteState, options: PlanOptions = PlanOptions(),
                            hasSnapshotStore: Bool) throws -> PlanResult {
        let gate = ReviewGate(desired: desired, remote: remote)
        let environment = desired.environment
        var actions: [PlanAction] = []
        var problems: [PlanProblem] = []

        // Images first: messages refer to them.
        var imageUploads: [PlanAction] = []
        for image in desired.images {
            switch remote.images[image.identifier]?.state {
            case nil:
                imageUploads.append(PlanAction(
                    id: .uploadImage(image.identifier),
                    reason: ActionReason(.imageNotUploaded(name: image.name, environment: environment)),
                    change: .uploadImage(image)))
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
                let needs = Set(message.imageIdentifiers.filter { remote.images[$0] == nil }.map(ActionID.uploadImage))
                messageUploads.append(PlanAction(
                    id: .uploadMessage(message.identifier),
                    reason: ActionReason(.messageNotUploaded(name: message.name, locale: message.locale,
                                                             version: message.contentVersion, environment: environment)),
                    change: .uploadMessage(message), dependsOn: needs.sorted()))
            case .rejected?:
                problems.append(PlanProblem(kind: .rejectedMessage, identifier: message.identifier, name: message.name,
                                            locale: message.locale,
                                            message: "message '\(message.name)' (\(message.locale)) version \(message.contentVersion) was REJECTED by App Review; change its \(message.locale) text to upload a new version"))
            default:
                break
            }
        }

        // Apple's caps count what is already there; uploads come before deletions in apply.
        func capUploads(_ uploads: inout [PlanAction], kind: ReviewItem.Kind, existing: Int, cap: Int) {
            guard existing + uploads.count > cap else { return }
            for index in uploads.indices {
                uploads[index].state = .error
                uploads[index].error = .overCap(kind, existing: existing, uploading: uploads.count, environment: environment)
            }
        }
        capUploads(&messageUploads, kind: .message, existing: remote.messages.count, cap: RetentionLimits.messages)
        capUploads(&imageUploads, kind: .image, existing: remote.images.count, cap: RetentionLimits.images)
        var capped: [ActionID: String] = [:]
        for action in imageUploads where action.state == .error {
            if case .uploadImage(let image) = action.change, capped[action.id] == nil { capped[action.id] = image.name }
        }
        for index in messageUploads.indices where messageUploads[index].state == .ready {
            guard let image = messageUploads[index].dependsOn.first(where: { capped[$0] != nil }) else { continue }
            messageUploads[index].state = .error
            messageUploads[index].error = .pictureOverCap(imageName: capped[image] ?? "?")
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
                    id: .setDefault(pair, to: wanted.messageIdentifier),
                    reason: ActionReason(current == nil ? .noDefault(pair, assigned: wanted.messageName)
                                                        : .otherDefault(pair, assigned: wanted.messageName)),
                    change: .setDefault(pair, to: wanted.messageIdentifier, name: wanted.messageName, current: current),
                    dependsOn: remote.messages[wanted.messageIdentifier] == nil ? [.uploadMessage(wanted.messageIdentifier)] : [])
                applyGate(gate.readiness(ofMessages: [wanted.messageIdentifier]), to: &action,
                          serving: current == nil ? .nothingYet : .currentDefault, environment: environment)
                actions.append(action)
            } else if let current {
                actions.append(PlanAction(id: .deleteDefault(pair), reason: ActionReason(.defaultNoLongerAssigned(pair)),
                                          change: .deleteDefault(pair, current: current)))
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
            // An empty snapshot where none is published changes nothing a customer sees.
            let changes = snapshot.snapshot.digest != publishedDigest
                && !(publishedDigest == nil && snapshot.snapshot.rules.isEmpty)
            let change = Change.publishSnapshot(snapshot, current: publishedDigest)
            if changes {
                let changed = snapshot.outcomes.filter { [.added, .updated, .removed].contains($0.outcome) }.count
                actions.append(PlanAction(
                    id: .publishSnapshot,
                    reason: ActionReason(publishedDigest == nil ? .noSnapshotPublished(waitingRules: pending.count)
                                                                : .rulesChanged(changed, waitingRules: pending.count)),
                    change: change, waitingFor: pending.isEmpty ? [] : waiting))
            } else if !pending.isEmpty {
                var action = PlanAction(id: .publishSnapshot, reason: ActionReason(.rulesWaiting(pending.count)), change: change)
                applyGate(waiting.contains { $0.state == .rejected } ? .rejected(waiting) : .waiting(waiting),
                          to: &action, serving: .publishedSnapshot, environment: environment)
                actions.append(action)
            }
        }

        if let url = desired.realtimeURL, remote.realtimeURL != url {
            var action = PlanAction(
                id: .setRealtimeURL(url),
                reason: ActionReason(remote.realtimeURL == nil ? .noRealtimeURL : .otherRealtimeURL),
                change: .setRealtimeURL(url, current: remote.realtimeURL))
            // The state records a URL Apple refused until a sandbox performance test passes (403 4030026).
            if environment == .production && remote.state?.document?.realtimeURLAwaitingPerformanceTest?.url == url {
                action.state = .blocked
                action.reason.wait = .performanceTest
            }
            actions.append(action)
        }

        var usage = UsageIndex(remote: remote)
        usage.add(compiled, derived: Set(desired.messages.map(\.identifier)))
        for index in actions.indices {
            if case .uploadMessage(let message) = actions[index].change {
                actions[index].textChanges = TextChanges.find(for: message, remote: remote, usage: usage)
            }
        }
        let (prune, inventory) = inventoryAndPrune(desired: desired, remote: remote, usage: usage, options: options)
        actions += prune

        var plan = Plan(
            // 1.1 adds `replaces` and `text_changes`; a plan without them reads as 1.0.
            formatVersion: actions.contains { $0.textChanges != nil } ? Plan.textChangesFormatVersion : Plan.currentFormatVersion,
            environment: environment, bundleId: desired.bundleId, prune: options.prune,
            converged: actions.isEmpty, health: health(desired: desired, remote: remote),
            summary: summary(actions, problems: problems), actions: actions,
            problems: problems.sorted { ($0.name, $0.locale ?? "", $0.identifier) < ($1.name, $1.locale ?? "", $1.identifier) },
            inventory: inventory,
            estimate: estimate(actions, desired: desired, remote: remote),
            apiCalls: remote.apiCalls,
            fingerprints: Fingerprints(manifests: try desired.fingerprint(), remote: try remote.fingerprint()))
        plan.rollbackVersions = options.rollbackVersions == PlanOptions.defaultRollbackVersions ? nil : options.rollbackVersions
        if remote.isFirstPublish, let store = remote.stateStoreName {
            let atApple = desired.messages.filter { remote.messages[$0.identifier] != nil }.count
                + desired.images.filter { remote.images[$0.identifier] != nil }.count
            if atApple > 0 {
                plan.missingState = MissingState(store: store, contentAtApple: atApple,
                                                 contentDerived: desired.messages.count + desired.images.count)
            }
        }
        return PlanResult(plan: plan, desired: desired, remote: remote, snapshot: compiled, options: options, usage: usage)
    }

    static func applyGate(_ readiness: ReviewGate.Readiness, to action: inout PlanAction, serving: ActionReason.Serving,
                          environment: Environment) {
        switch readiness {
        case .approved:
            return
        case .waiting(let items):
            action.state = .blocked
            action.waitingFor = items
            action.reason.wait = environment == .sandbox && items.allSatisfy({ $0.state == .notUploaded })
                ? .sameApply : .review(serving: serving)
        case .rejected(let items):
            action.state = .error
            action.waitingFor = items
            action.error = .usesRejected(items.filter { $0.state == .rejected })
        }
    }

    static func inventoryAndPrune(desired: DesiredState, remote: RemoteState, usage: UsageIndex,
                                  options: PlanOptions) -> ([PlanAction], [InventoryItem]) {
        let derivedMessages = Set(desired.messages.map(\.identifier))
        let derivedImages = Set(desired.images.map(\.identifier))

        let unknownMessages = remote.messages.keys.filter { !derivedMessages.contains($0) }.sorted()
        let rollbackTargets = VersionHistory(records: remote.state?.document?.content ?? [], desired: desired, remote: remote,
                                             keep: options.rollbackVersions).targets.subtracting(options.pruneNamed)
        let deletableMessages = unknownMessages.filter { !usage.isInUse($0) && !rollbackTargets.contains($0) }
        let keptUnknown = unknownMessages.count - deletableMessages.count
        let unknownImages = remote.images.keys.filter { !derivedImages.contains($0) }.sorted()

        let history = VersionHistory(records: remote.state?.document?.content ?? [], desired: desired, remote: remote,
                                     keep: options.rollbackVersions)
        var items: [InventoryItem] = []
        var deletes: [PlanAction] = []
        for id in unknownMessages {
            let uses = usage.uses[id] ?? []
            let recorded = history.describe(id)
            let name = recorded?.name ?? usage.publishedNames[id]
            let label = recorded?.label ?? (name == nil ? .unmanaged : .olderVersion)
            let keptForRollback = label == .rollbackTarget && !options.pruneNamed.contains(id)
            let verdict: PruneVerdict = !uses.isEmpty ? .inUse : (keptForRollback ? .rollbackTarget : .deletable)
            items.append(InventoryItem(kind: .message, identifier: id, state: ReviewState(remote.messages[id]),
                                       label: label, name: name, usedBy: uses, prune: verdict))
            if options.prune && verdict == .deletable {
                deletes.append(PlanAction(id: .deleteMessage(id), reason: ActionReason(.unusedMessage),
                                          change: .deleteMessage(id, name: name)))
            }
        }
        // The list calls never say which images a message uses, so an image is provably unused only
        // when no message we do not know the content of remains.
        for id in unknownImages {
            let provable = keptUnknown == 0
            items.append(InventoryItem(kind: .image, identifier: id, state: ReviewState(remote.images[id]?.state),
                                       label: .unmanaged, name: nil, usedBy: [],
                                       prune: provable ? .deletable : .mayBeShownByUnknownMessages(keptUnknown)))
            if options.prune && provable {
                deletes.append(PlanAction(id: .deleteImage(id), reason: ActionReason(.unusedImage),
                                          change: .deleteImage(id, size: remote.images[id]?.size),
                                          dependsOn: deletableMessages.map(ActionID.deleteMessage)))
            }
        }
        let remoteTotal = remote.messages.count + remote.images.count
        if !deletes.isEmpty, !options.pruneForce,
           Double(deletes.count) > PlanOptions.pruneProtectionShare * Double(remoteTotal) {
            for index in deletes.indices {
                deletes[index].state = .error
                deletes[index].error = .pruneProtection(deleting: deletes.count, of: remoteTotal)
            }
        }
        items.sort { ($0.kind.rawValue, $0.identifier) < ($1.kind.rawValue, $1.identifier) }
        return (deletes, items)
    }

    static func health(desired: DesiredState, remote: RemoteState) -> Health {
        let states = desired.messages.map { ReviewState(remote.messages[$0.identifier]) }
            + desired.images.map { ReviewState(remote.images[$0.identifier]?.state) }
        if states.contains(.rejected) { return .degraded }
        if states.contains(.pending) { return .progressing }
        return .healthy
    }

    static func summary(_ actions: [PlanAction], problems: [PlanProblem]) -> PlanSummary {
        func count(_ effect: ActionKind.Effect) -> Int { actions.filter { $0.state == .ready && $0.kind.effect == effect }.count }
        return PlanSummary(
            toUpload: count(.upload),
            toSet: count(.set),
            toDelete: count(.delete),
            blocked: actions.filter { $0.state == .blocked }.count,
            errors: actions.filter { $0.state == .error }.count + problems.count)
    }

    static func estimate(_ actions: [PlanAction], desired: DesiredState, remote: RemoteState) -> Estimate {
        let sandbox = desired.environment == .sandbox
        // In sandbox, uploads are approved at once and the apply re-lists, so blocked actions
        // waiting only on this apply's uploads are expected to run in the same apply.
        func runs(_ action: PlanAction) -> Bool {
            action.state == .ready || (sandbox && action.state == .blocked
                && action.waitingFor.allSatisfy { $0.state == .notUploaded || $0.state == .pending })
        }
        let running = actions.filter(runs)
        let defaults = running.filter { $0.kind == .setDefault }.count
        var other = running.filter { $0.kind != .setDefault && $0.kind != .publishSnapshot }.count
        let uploads = running.filter { $0.kind.effect == .upload }.count
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
            messagesCap: RetentionLimits.messages,
            imagesAfter: remote.images.count + running.filter { $0.kind == .uploadImage }.count - deletedImages,
            imagesCap: RetentionLimits.images)
    }
}
