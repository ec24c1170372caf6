import Basics
import Foundation
import RetentionMessaging
public import RetentionMessagingModels
import Runtime
public import StateStore

extension ResourceID {
    public static let image = ResourceID(rawValue: "image")
}

extension ActionKind {
    public static let uploadImage = ActionKind(.upload, .image)
    public static let deleteImage = ActionKind(.delete, .image)
}

extension ActionID {
    public static func uploadImage(_ identifier: String) -> ActionID { ActionID(.uploadImage, identifier) }
    public static func deleteImage(_ identifier: String) -> ActionID { ActionID(.deleteImage, identifier) }
}

/// What an image action changes.
public enum ImageChange: ResourceChange {
    case upload(DesiredImage)
    case delete(String, size: ImageSize?)

    public var kind: ActionKind {
        switch self {
        case .upload: .uploadImage
        case .delete: .deleteImage
        }
    }

    public var identifier: String? {
        switch self {
        case .upload(let image): image.identifier
        case .delete(let identifier, _): identifier
        }
    }

    public var title: String {
        switch self {
        case .upload(let image): "upload image \(image.name) (\(image.size.rawValue)) \(image.identifier)"
        case .delete(let identifier, _): "delete image \(identifier)"
        }
    }

    public func drift(against document: StateDocument?) -> Drift? { nil }

    public var fields: ChangeFields {
        var fields = ChangeFields()
        switch self {
        case .upload(let image):
            fields.identifier = image.identifier
            fields.name = image.name
            fields.imageSize = image.size
        case .delete(let identifier, let size):
            fields.identifier = identifier
            fields.imageSize = size
        }
        return fields
    }

    public var source: ManifestSource? {
        guard case .upload(let image) = self else { return nil }
        return .image(names: image.names)
    }
}

/// Apple's images: uploaded once per content identifier, deleted only by prune.
enum ImageResource: ContentResource {
    static let id = ResourceID.image
    static let isContent = true
    static let verbs: [PlanVerb] = [.upload, .delete]
    static let contentKind = ContentKind.image

    static func derived(in desired: DesiredState) -> [DerivedContent] {
        desired.images.map {
            DerivedContent(identifier: $0.identifier, name: $0.name, locale: nil, label: $0.names.joined(separator: ", "),
                           statusName: $0.names.joined(separator: ", "), version: $0.size.rawValue)
        }
    }

    static func remoteStates(in remote: RemoteState) -> [String: ReviewState] {
        remote.images.mapValues { ReviewState($0.state) }
    }

    static func used(byRule rule: SnapshotRule) -> [String] { [] }

    static func list(_ api: any RetentionMessagingAPI, into state: inout RemoteState) async throws {
        let images = try await api.getImageList()
        state.images = Dictionary(images.imageIdentifiers.map {
            ($0.imageIdentifier.lowercased(), RemoteImage(state: $0.imageState, size: $0.imageSize))
        }, uniquingKeysWith: { first, _ in first })
    }

    static func fingerprinted(_ remote: RemoteState) -> any Encodable & Sendable { remote.images }

    static func remoteVersion(of identifier: String, in remote: RemoteState) -> String? { remote.images[identifier]?.size?.rawValue }

    static func declaredExternal(in desired: DesiredState) -> [String: String] { desired.externalImagesByIdentifier.mapValues(\.name) }

    static func plan(_ context: inout PlanContext) throws {
        let remote = context.remote
        var uploads: [PlanAction] = []
        for image in context.desired.images {
            switch remote.images[image.identifier]?.state {
            case nil:
                uploads.append(PlanAction(
                    id: .uploadImage(image.identifier),
                    reason: ActionReason(.imageNotUploaded(name: image.name, environment: context.environment)),
                    change: ImageChange.upload(image)))
            case .rejected?:
                let severity = context.rejectionSeverity(of: image.identifier)
                context.problems.append(PlanProblem(kind: .rejectedImage, identifier: image.identifier, name: image.name, locale: nil,
                                                    message: PlanProblem.rejectedWording("image '\(image.name)' (\(image.identifier))", severity: severity)
                                                        + "; replace the PNG to upload a new version",
                                                    severity: severity))
            default:
                break
            }
        }
        capUploads(&uploads, existing: remote.images.count, environment: context.environment)
        context.actions += uploads
    }

    // The list calls never say which images a message uses, so an image is provably unused only
    // when no message we do not know the content of remains.
    static func prune(_ context: inout PlanContext) {
        let remote = context.remote
        let named = context.options.pruneNamed
        let derivedImages = Set(context.desired.images.map(\.identifier))
        let derivedMessages = Set(context.desired.messages.map(\.identifier))
        let externalMessages = context.desired.externalByIdentifier
        let externalImages = context.desired.externalImagesByIdentifier
        let unknownMessages = remote.messages.keys.filter { !derivedMessages.contains($0) }
        let rollbackTargets = VersionHistory(context).targets.subtracting(named)
        let usage = context.usage
        // A message a pull request submitted is kept through the grace period, and so may show an image;
        // so may an external message, which stays unless named.
        let withinGrace = Set(unknownMessages.filter { context.graceKept($0) != nil })
        let kept = { (id: String) in
            usage.isInUse(id) || rollbackTargets.contains(id) || withinGrace.contains(id) || (externalMessages[id] != nil && !named.contains(id))
        }
        let keptUnknown = unknownMessages.filter(kept).count
        let deletableMessages = unknownMessages.filter { !kept($0) }.sorted()
        // The images the manifests' own messages show that they do not derive (external ones), and
        // those earlier versions of them show that stay at Apple: the state recorded their bodies.
        var shownBy: [String: Set<UsageIndex.Use>] = [:]
        for message in context.desired.messages {
            for id in message.imageIdentifiers where !derivedImages.contains(id) { shownBy[id, default: []].insert(.shownByMessage(message.label)) }
        }
        let document = remote.state?.document
        for id in unknownMessages where kept(id) {
            guard let record = document?.record(for: id), let text = record.uploadBody,
                  let body = try? JSONDecoder().decode(UploadMessageRequestBody.self, from: Data(text.utf8)) else { continue }
            let label = "\(record.name) (\(record.locale ?? "?")) \(id), an earlier version"
            for image in body.referencedImageIdentifiers where !derivedImages.contains(image) {
                shownBy[image, default: []].insert(.shownByMessage(label))
            }
        }
        // What stays at Apple whose content nobody recorded: any of it may show any image.
        let keptUnrecorded = unknownMessages.filter { kept($0) && document?.record(for: $0)?.uploadBody == nil }.count
        for id in remote.images.keys.filter({ !derivedImages.contains($0) }).sorted() {
            if let declared = externalImages[id] {
                // Declared external: never pruned unless the operator names it, and never while a message of the manifests shows it.
                let uses = (shownBy[id] ?? []).sorted()
                let verdict: PruneVerdict = !uses.isEmpty ? .inUse : named.contains(id) ? .deletable : .external
                context.inventory.append(InventoryItem(kind: .image, identifier: id, state: ReviewState(remote.images[id]?.state),
                                                       label: .external, name: declared.name, usedBy: uses, prune: verdict))
                if context.options.prune && verdict == .deletable {
                    context.actions.append(PlanAction(id: .deleteImage(id), reason: ActionReason(.namedImage(unknownMessages: keptUnrecorded)),
                                                      change: ImageChange.delete(id, size: remote.images[id]?.size),
                                                      dependsOn: deletableMessages.map(ActionID.deleteMessage)))
                }
                continue
            }
            let provable = keptUnknown == 0
            let submitters = context.submitters(of: id)
            let grace = context.graceKept(id)
            let verdict: PruneVerdict = grace.map { .withinGrace(until: $0.until) }
                ?? (provable ? .deletable : .mayBeShownByUnknownMessages(keptUnknown))
            var item = InventoryItem(kind: .image, identifier: id, state: ReviewState(remote.images[id]?.state),
                                     label: context.isUnmergedSubmission(id) ? .submitted : .unmanaged, name: nil, usedBy: [],
                                     prune: verdict)
            item.submittedBy = submitters
            context.inventory.append(item)
            if context.options.prune && verdict == .deletable {
                context.actions.append(PlanAction(id: .deleteImage(id), reason: ActionReason(.unusedImage),
                                                  change: ImageChange.delete(id, size: remote.images[id]?.size),
                                                  dependsOn: deletableMessages.map(ActionID.deleteMessage)))
            }
        }
    }

    static func perform(_ change: ImageChange, in planned: PlanResult, api: any RetentionMessagingAPI,
                        report: inout ApplyReport, recorder: inout StateRecorder?) async throws -> Refusal? {
        switch change {
        case .upload(let image):
            guard let png = planned.desired.pngs[image.identifier], !png.isEmpty else {
                return Refusal(.error, "the PNG of image '\(image.name)' was not loaded with the manifests; nothing was uploaded")
            }
            do {
                try await api.uploadImage(identifier: image.identifier, size: image.size, png: png)
            } catch let error as RetentionMessagingError where error.errorCode == AppleErrorCode.imageAlreadyExists {
                return Refusal(.alreadyDone, "the image was already there")
            }
        case .delete(let identifier, _):
            do {
                try await api.deleteImage(identifier: identifier)
            } catch let error as RetentionMessagingError where error.isAlreadyGone {
                return Refusal(.alreadyDone, "the image was already gone")
            } catch let error as RetentionMessagingError where error.errorCode == AppleErrorCode.imageInUse {
                return Refusal(.skipped, "Apple says the image is still in use by a message; kept")
            }
        }
        return nil
    }

    static func recordDone(_ change: ImageChange, in planned: PlanResult, recorder: inout StateRecorder?, at time: UTCTime) {
        if case .delete(let identifier, _) = change, let external = planned.desired.externalImagesByIdentifier[identifier] {
            recorder?.record { $0.recordAdoptedDeletion(of: identifier, kind: .image, name: external.name, at: time) }
            return
        }
        guard case .upload(let image) = change else { return }
        let png = planned.desired.pngs[image.identifier]
        recorder?.record {
            $0.recordUpload(.image(image, png: png, at: time))
            $0.observeReviewState(ImageState.pending.rawValue, of: image.identifier, at: time)
        }
    }
}
