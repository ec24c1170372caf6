import Basics
import Foundation
import RetentionMessaging
import RetentionMessagingModels
import Runtime
public import StateStore

extension ResourceID {
    public static let message = ResourceID(rawValue: "message")
}

extension ActionKind {
    public static let uploadMessage = ActionKind(.upload, .message)
    public static let deleteMessage = ActionKind(.delete, .message)
}

extension ActionID {
    public static func uploadMessage(_ identifier: String) -> ActionID { ActionID(.uploadMessage, identifier) }
    public static func deleteMessage(_ identifier: String) -> ActionID { ActionID(.deleteMessage, identifier) }
}

/// What a message action changes.
public enum MessageChange: ResourceChange {
    case upload(DesiredMessage)
    /// `name`: the message name the published snapshot gives it, if any.
    case delete(String, name: String?)

    public var kind: ActionKind {
        switch self {
        case .upload: .uploadMessage
        case .delete: .deleteMessage
        }
    }

    public var identifier: String? {
        switch self {
        case .upload(let message): message.identifier
        case .delete(let identifier, _): identifier
        }
    }

    public var title: String {
        switch self {
        case .upload(let message): "upload message \(message.name) (\(message.locale)) \(message.identifier)"
        case .delete(let identifier, let name): "delete message \(identifier)" + (name.map { " (\($0))" } ?? "")
        }
    }

    public func drift(against document: StateDocument?) -> Drift? { nil }

    public var fields: ChangeFields {
        var fields = ChangeFields()
        switch self {
        case .upload(let message):
            fields.identifier = message.identifier
            fields.name = message.name
            fields.locale = message.locale
        case .delete(let identifier, let name):
            fields.identifier = identifier
            fields.name = name
        }
        return fields
    }

    public var source: ManifestSource? {
        guard case .upload(let message) = self else { return nil }
        return .message(name: message.name, locale: message.locale)
    }
}

/// Apple's messages, one per localization: uploaded once per content identifier, deleted only by prune.
enum MessageResource: ContentResource {
    static let id = ResourceID.message
    static let isContent = true
    static let verbs: [PlanVerb] = [.upload, .delete]
    static let contentKind = ContentKind.message

    static func derived(in desired: DesiredState) -> [DerivedContent] {
        desired.messages.map {
            DerivedContent(identifier: $0.identifier, name: $0.name, locale: $0.locale, label: $0.label,
                           statusName: $0.name, version: $0.contentVersion, references: $0.imageIdentifiers.map { ContentReference(kind: .image, identifier: $0) })
        }
    }

    static func remoteStates(in remote: RemoteState) -> [String: ReviewState] {
        remote.messages.mapValues { ReviewState($0) }
    }

    static func used(byRule rule: SnapshotRule) -> [String] {
        (rule.response.messageIdentifiers ?? [:]).values.sorted()
    }

    static func list(_ api: any RetentionMessagingAPI, into state: inout RemoteState) async throws {
        let messages = try await api.getMessageList()
        state.messages = Dictionary(messages.messageIdentifiers.map { ($0.messageIdentifier.lowercased(), $0.messageState) },
                                    uniquingKeysWith: { first, _ in first })
    }

    static func fingerprinted(_ remote: RemoteState) -> any Encodable & Sendable { remote.messages }

    /// The list call says nothing of a message's content.
    static func remoteVersion(of identifier: String, in remote: RemoteState) -> String? { nil }

    static func declaredExternal(in desired: DesiredState) -> [String: String] { desired.externalByIdentifier.mapValues(\.name) }

    static func plan(_ context: inout PlanContext) throws {
        let remote = context.remote
        let externalImages = context.desired.externalImagesByIdentifier
        var uploads: [PlanAction] = []
        for message in context.desired.messages {
            switch remote.messages[message.identifier] {
            case nil:
                // An external image has no upload to wait for: Apple holds it, or nothing ever will.
                let needs = Set(message.imageIdentifiers.filter { remote.images[$0] == nil && externalImages[$0] == nil }.map(ActionID.uploadImage))
                var upload = PlanAction(
                    id: .uploadMessage(message.identifier),
                    reason: ActionReason(.messageNotUploaded(name: message.name, locale: message.locale,
                                                             version: message.contentVersion, environment: context.environment)),
                    change: MessageChange.upload(message), dependsOn: needs.sorted())
                if let problem = externalImageProblem(message, externalImages: externalImages, remote: remote) {
                    upload.state = .error
                    upload.error = problem
                }
                uploads.append(upload)
            case .rejected?:
                let severity = context.rejectionSeverity(of: message.identifier)
                context.problems.append(PlanProblem(kind: .rejectedMessage, identifier: message.identifier, name: message.name,
                                                    locale: message.locale,
                                                    message: PlanProblem.rejectedWording("message '\(message.name)' (\(message.locale)) version \(message.contentVersion)",
                                                                                         severity: severity)
                                                        + "; change its \(message.locale) text to upload a new version",
                                                    severity: severity))
            default:
                break
            }
        }
        capUploads(&uploads, existing: remote.messages.count, environment: context.environment)
        // A message whose new picture is over the image cap cannot be uploaded either.
        var capped: [ActionID: String] = [:]
        for action in context.actions where action.state == .error {
            if case .upload(let image)? = action.change.as(ImageChange.self), capped[action.id] == nil { capped[action.id] = image.name }
        }
        for index in uploads.indices where uploads[index].state == .ready {
            guard let image = uploads[index].dependsOn.first(where: { capped[$0] != nil }) else { continue }
            uploads[index].state = .error
            uploads[index].error = .pictureOverCap(imageName: capped[image] ?? "?")
        }
        context.actions += uploads
    }

    /// Why Apple would refuse a message for an external image it shows: the image is not in Apple's
    /// list (nothing will upload it), or the list gives it the wrong size for where it is shown.
    static func externalImageProblem(_ message: DesiredMessage, externalImages: [String: DesiredExternalImage],
                                     remote: RemoteState) -> ActionError? {
        let shown = (message.body.image.map { [($0.imageIdentifier, ImageSize.fullSize)] } ?? [])
            + (message.body.bulletPoints ?? []).map { ($0.imageIdentifier, ImageSize.bulletPoint) }
        for (identifier, required) in shown {
            guard let external = externalImages[identifier] else { continue }
            guard let listed = remote.images[identifier] else {
                return .externalNotAtApple(.image, name: external.name, identifier: identifier, environment: remote.environment)
            }
            if let size = listed.size, size != required {
                return .externalImageSize(name: external.name, identifier: identifier, listed: size, required: required,
                                          environment: remote.environment)
            }
        }
        return nil
    }

    /// A message upload that replaces a recorded version shows what changes in its text.
    static func annotate(_ context: inout PlanContext) {
        for index in context.actions.indices {
            if case .upload(let message)? = context.actions[index].change.as(MessageChange.self) {
                context.actions[index].textChanges = TextChanges.find(for: message, remote: context.remote, usage: context.usage)
            }
        }
    }

    static func prune(_ context: inout PlanContext) {
        let remote = context.remote
        let derived = Set(context.desired.messages.map(\.identifier))
        let history = VersionHistory(context)
        let external = context.desired.externalByIdentifier
        for id in remote.messages.keys.filter({ !derived.contains($0) }).sorted() {
            if let declared = external[id] {
                // Declared external: never pruned unless the operator names it.
                let uses = context.usage.uses[id] ?? []
                let verdict: PruneVerdict = !uses.isEmpty ? .inUse
                    : context.options.pruneNamed.contains(id) ? .deletable : .external
                context.inventory.append(InventoryItem(kind: .message, identifier: id, state: ReviewState(remote.messages[id]),
                                                       label: .external, name: declared.name, usedBy: uses, prune: verdict))
                if context.options.prune && verdict == .deletable {
                    context.actions.append(PlanAction(id: .deleteMessage(id), reason: ActionReason(.unusedMessage),
                                                      change: MessageChange.delete(id, name: declared.name)))
                }
                continue
            }
            let uses = context.usage.uses[id] ?? []
            let recorded = history.describe(id)
            let name = recorded?.name ?? context.usage.publishedNames[id]
            let submitters = context.submitters(of: id)
            let label = recorded?.label ?? (name == nil ? .unmanaged : .olderVersion)
            // The approved versions a revert would use are kept unless named.
            let keptForRollback = label == .rollbackTarget && !context.options.pruneNamed.contains(id)
            let grace = context.graceKept(id)
            let verdict: PruneVerdict = !uses.isEmpty ? .inUse
                : keptForRollback ? .rollbackTarget
                : grace.map { .withinGrace(until: $0.until) } ?? .deletable
            var item = InventoryItem(kind: .message, identifier: id, state: ReviewState(remote.messages[id]),
                                     label: label, name: name, usedBy: uses, prune: verdict)
            item.submittedBy = submitters
            context.inventory.append(item)
            if context.options.prune && verdict == .deletable {
                context.actions.append(PlanAction(id: .deleteMessage(id), reason: ActionReason(.unusedMessage),
                                                  change: MessageChange.delete(id, name: name)))
            }
        }
    }

    static func perform(_ change: MessageChange, in planned: PlanResult, api: any RetentionMessagingAPI,
                        report: inout ApplyReport, recorder: inout StateRecorder?) async throws -> Refusal? {
        switch change {
        case .upload(let message):
            do {
                try await api.uploadMessage(identifier: message.identifier, body: message.body)
            } catch let error as RetentionMessagingError where error.errorCode == AppleErrorCode.messageAlreadyExists {
                return Refusal(.alreadyDone, "the message was already there")
            }
        case .delete(let identifier, _):
            do {
                try await api.deleteMessage(identifier: identifier)
            } catch let error as RetentionMessagingError where error.isAlreadyGone {
                return Refusal(.alreadyDone, "the message was already gone")
            }
        }
        return nil
    }

    static func recordDone(_ change: MessageChange, in planned: PlanResult, recorder: inout StateRecorder?, at time: UTCTime) {
        if case .delete(let identifier, _) = change, let external = planned.desired.externalByIdentifier[identifier] {
            recorder?.record { $0.recordAdoptedDeletion(of: identifier, kind: .message, name: external.name, at: time) }
            return
        }
        guard case .upload(let message) = change else { return }
        // Every upload starts PENDING; the review age counts from here.
        recorder?.record {
            $0.recordUpload(.message(message, at: time))
            $0.observeReviewState(MessageState.pending.rawValue, of: message.identifier, at: time)
        }
    }
}
