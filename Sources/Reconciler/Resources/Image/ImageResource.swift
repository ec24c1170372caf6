import Foundation
import RetentionMessaging
import RetentionMessagingModels
import StateStore

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

/// Apple's images: uploaded once per content identifier, deleted only by prune.
enum ImageResource: RemoteResource {
    static let id = ResourceID.image
    static let isContent = true
    static let verbs: [PlanVerb] = [.upload, .delete]

    static func plan(_ context: inout PlanContext) throws {
        let remote = context.remote
        var uploads: [PlanAction] = []
        for image in context.desired.images {
            switch remote.images[image.identifier]?.state {
            case nil:
                uploads.append(PlanAction(
                    id: .uploadImage(image.identifier),
                    reason: ActionReason(.imageNotUploaded(name: image.name, environment: context.environment)),
                    change: .uploadImage(image)))
            case .rejected?:
                context.problems.append(PlanProblem(kind: .rejectedImage, identifier: image.identifier, name: image.name, locale: nil,
                                                    message: "image '\(image.name)' (\(image.identifier)) was REJECTED by App Review; replace the PNG to upload a new version"))
            default:
                break
            }
        }
        capUploads(&uploads, kind: .image, existing: remote.images.count, cap: RetentionLimits.images, environment: context.environment)
        context.actions += uploads
    }

    /// Apple's caps count what is already there; uploads come before deletions in apply.
    static func capUploads(_ uploads: inout [PlanAction], kind: ReviewItem.Kind, existing: Int, cap: Int, environment: Environment) {
        guard existing + uploads.count > cap else { return }
        for index in uploads.indices {
            uploads[index].state = .error
            uploads[index].error = .overCap(kind, existing: existing, uploading: uploads.count, environment: environment)
        }
    }

    // The list calls never say which images a message uses, so an image is provably unused only
    // when no message we do not know the content of remains.
    static func prune(_ context: inout PlanContext) {
        let remote = context.remote
        let derivedImages = Set(context.desired.images.map(\.identifier))
        let derivedMessages = Set(context.desired.messages.map(\.identifier))
        let unknownMessages = remote.messages.keys.filter { !derivedMessages.contains($0) }
        let rollbackTargets = VersionHistory(context).targets.subtracting(context.options.pruneNamed)
        let usage = context.usage
        // A message a pull request submitted is kept through the grace period, and so may show an image.
        let withinGrace = Set(unknownMessages.filter { context.graceKept($0) != nil })
        let kept = { (id: String) in usage.isInUse(id) || rollbackTargets.contains(id) || withinGrace.contains(id) }
        let keptUnknown = unknownMessages.filter(kept).count
        let deletableMessages = unknownMessages.filter { !kept($0) }.sorted()
        for id in remote.images.keys.filter({ !derivedImages.contains($0) }).sorted() {
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
                                                  change: .deleteImage(id, size: remote.images[id]?.size),
                                                  dependsOn: deletableMessages.map(ActionID.deleteMessage)))
            }
        }
    }

    static func perform(_ action: PlanAction, in planned: PlanResult, api: any RetentionMessagingAPI,
                        report: inout ApplyReport, recorder: inout StateRecorder?) async throws -> Refusal? {
        switch action.change {
        case .uploadImage(let image):
            guard let png = planned.desired.pngs[image.identifier], !png.isEmpty else {
                return Refusal(.error, "the PNG of image '\(image.name)' was not loaded with the manifests; nothing was uploaded")
            }
            do {
                try await api.uploadImage(identifier: image.identifier, size: image.size, png: png)
            } catch let error as RetentionMessagingError where error.errorCode == AppleErrorCode.imageAlreadyExists {
                return Refusal(.alreadyDone, "the image was already there")
            }
        case .deleteImage(let identifier, _):
            do {
                try await api.deleteImage(identifier: identifier)
            } catch let error as RetentionMessagingError where error.isAlreadyGone {
                return Refusal(.alreadyDone, "the image was already gone")
            } catch let error as RetentionMessagingError where error.errorCode == AppleErrorCode.imageInUse {
                return Refusal(.skipped, "Apple says the image is still in use by a message; kept")
            }
        default:
            return Refusal(.error, "not an image action")
        }
        return nil
    }

    static func recordDone(_ action: PlanAction, in planned: PlanResult, recorder: inout StateRecorder?, at time: Date) {
        guard case .uploadImage(let image) = action.change else { return }
        let png = planned.desired.pngs[image.identifier]
        recorder?.record {
            $0.recordUpload(.image(image, png: png, at: time))
            $0.observeReviewState(ImageState.pending.rawValue, of: image.identifier, at: time)
        }
    }
}
