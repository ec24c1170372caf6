public import RetentionMessaging
public import RetentionMessagingModels
import Runtime

/// What happened to one action during an apply.
public struct ActionResult: Codable, Sendable, Hashable {
    public enum Outcome: String, Codable, Sendable, Hashable {
        /// Performed now.
        case done
        /// The remote already had it (409 on upload, 404 on delete).
        case alreadyDone = "already_done"
        /// Not performed: blocked by review, or not part of a saved plan.
        case blocked
        /// Not performed: the plan marks it as an error.
        case error
        /// Not performed, safely (an image Apple says is still in use).
        case skipped
        /// The request failed; the apply stopped here.
        case failed
    }

    public var id: String
    public var kind: ActionKind
    public var title: String
    public var outcome: Outcome
    public var detail: String?

    public init(id: String, kind: ActionKind, title: String, outcome: Outcome, detail: String? = nil) {
        self.id = id
        self.kind = kind
        self.title = title
        self.outcome = outcome
        self.detail = detail
    }
}

/// The record of an apply (`apply --report FILE`): what succeeded before any failure.
public struct ApplyReport: Codable, Sendable, Hashable {
    public var formatVersion: String
    public var environment: Environment
    /// Every action was attempted and none failed.
    public var completed: Bool
    public var failure: String?
    /// In the order they ran.
    public var results: [ActionResult]
    /// Requests this apply sent, by Apple's rate-limit class.
    public var requests: RequestCounts
    /// The digest of the snapshot in the store after the apply.
    public var publishedSnapshot: String?

    enum CodingKeys: String, CodingKey {
        case formatVersion = "format_version", environment, completed, failure, results, requests
        case publishedSnapshot = "published_snapshot"
    }

    public init(environment: Environment, completed: Bool = false, failure: String? = nil, results: [ActionResult] = [],
                requests: RequestCounts = RequestCounts(), publishedSnapshot: String? = nil) {
        formatVersion = Plan.currentFormatVersion
        self.environment = environment
        self.completed = completed
        self.failure = failure
        self.results = results
        self.requests = requests
        self.publishedSnapshot = publishedSnapshot
    }

    public func count(_ outcome: ActionResult.Outcome) -> Int { results.filter { $0.outcome == outcome }.count }

    /// Actions that changed something remotely or in the store.
    public var performed: Int { count(.done) }
}

/// An apply that stopped half-way. The report says what succeeded; running apply again finishes
/// the job, because every action is idempotent by construction.
public struct ApplyFailure: Error, Sendable, CustomStringConvertible {
    public var report: ApplyReport
    public var message: String

    public var description: String { message }
}

/// Progress events for a person watching a long apply.
public enum ApplyEvent: Sendable {
    /// An action finished; `done` of `total` actions are through.
    case finished(ActionResult, done: Int, total: Int)
    /// The apply re-listed (sandbox) and learnt new review states.
    case relisted(approvedMessages: Int, approvedImages: Int)
}

/// Performs a plan's actions in design.md's order: images → messages → (sandbox: re-list and
/// re-plan, so auto-approved content is used in the same run) → defaults → snapshot → realtime
/// URL → deletions. It never runs a blocked or error action, and never deletes anything in use.
public struct Applier: Sendable {
    public var api: any RetentionMessagingAPI
    public var store: SnapshotStore?
    /// When applying a saved plan: the action ids it allows. Anything else is refused.
    public var allowedActions: Set<String>?
    public var progress: @Sendable (ApplyEvent) -> Void

    public init(api: any RetentionMessagingAPI, store: SnapshotStore?, allowedActions: Set<String>? = nil,
                progress: @escaping @Sendable (ApplyEvent) -> Void = { _ in }) {
        self.api = api
        self.store = store
        self.allowedActions = allowedActions
        self.progress = progress
    }

    public func apply(_ planned: PlanResult) async throws(ApplyFailure) -> ApplyReport {
        let start = api.requestCounts
        var report = ApplyReport(environment: planned.desired.environment,
                                 publishedSnapshot: planned.remote.publishedSnapshot?.digest)
        var total = planned.plan.actions.count
        var done = 0

        var succeeded = Set<String>()
        var inPlan = Set(planned.plan.actions.map(\.id))
        func record(_ action: PlanAction, _ outcome: ActionResult.Outcome, _ detail: String? = nil) {
            let result = ActionResult(id: action.id, kind: action.kind, title: action.title, outcome: outcome, detail: detail)
            report.results.append(result)
            if outcome == .done || outcome == .alreadyDone { succeeded.insert(action.id) }
            done += 1
            progress(.finished(result, done: done, total: max(total, done)))
        }

        func fail(_ action: PlanAction, _ error: any Error) -> ApplyFailure {
            record(action, .failed, "\(error)")
            report.requests = counts(since: start)
            report.failure = "\(action.title): \(error)"
            return ApplyFailure(report: report, message: "apply stopped at '\(action.title)': \(error). "
                                + "\(report.performed) action\(report.performed == 1 ? "" : "s") succeeded before it; "
                                + "run apply again to finish (it is safe to repeat)")
        }

        var allowed = allowedActions
        func runnable(_ action: PlanAction) -> Bool {
            if action.state == .blocked { record(action, .blocked, action.waitingFor.map(\.description).joined(separator: "; ")); return false }
            if action.state == .error { record(action, .error, action.error); return false }
            if let allowed, !allowed.contains(action.id) {
                record(action, .blocked, allowedActions == nil ? "not ready or blocked in the plan; the next plan shows it" : "not in the saved plan")
                return false
            }
            // What an action depends on must have succeeded: no message upload without its new
            // picture (over the image cap), no image delete while a message that may show it remains.
            if let unmet = action.dependsOn.first(where: { inPlan.contains($0) && !succeeded.contains($0) }) {
                record(action, .blocked, "needs \(unmet) first, which did not run")
                return false
            }
            return true
        }

        let images = Dictionary(planned.desired.images.map { ($0.identifier, $0) }, uniquingKeysWith: { first, _ in first })
        let messages = planned.desired.messageIndex
        for action in planned.plan.actions where action.kind == .uploadImage {
            guard runnable(action), let id = action.identifier, let image = images[id] else { continue }
            do {
                try await api.uploadImage(identifier: id, size: image.size, png: planned.desired.pngs[id] ?? [])
                record(action, .done)
            } catch let error as RetentionMessagingError where error.errorCode == AppleErrorCode.imageAlreadyExists {
                record(action, .alreadyDone, "the image was already there")
            } catch {
                throw fail(action, error)
            }
        }
        for action in planned.plan.actions where action.kind == .uploadMessage {
            guard runnable(action), let id = action.identifier, let message = messages[id] else { continue }
            do {
                try await api.uploadMessage(identifier: id, body: message.body)
                record(action, .done)
            } catch let error as RetentionMessagingError where error.errorCode == AppleErrorCode.messageAlreadyExists {
                record(action, .alreadyDone, "the message was already there")
            } catch {
                throw fail(action, error)
            }
        }

        var current = planned
        let uploadsAttempted = report.results.contains { ($0.kind == .uploadImage || $0.kind == .uploadMessage) && ($0.outcome == .done || $0.outcome == .alreadyDone) }
        if planned.desired.environment == .sandbox && uploadsAttempted {
            var remote = planned.remote
            do {
                try await RemoteStateReader.readLists(api, into: &remote)
                current = try Planner.plan(desired: planned.desired, remote: remote, options: planned.options,
                                           hasSnapshotStore: store != nil)
            } catch {
                report.requests = counts(since: start)
                report.failure = "re-listing after the uploads: \(error)"
                throw ApplyFailure(report: report, message: "apply stopped re-listing after the uploads: \(error); run apply again to finish")
            }
            // The re-list only teaches review states, so the re-plan may promote a blocked action,
            // never one the plan held as an error (prune protection counted the remote before these
            // uploads) or did not show at all (content someone added meanwhile).
            let shown = Set(planned.plan.actions.filter { $0.state != .error }.map(\.id))
            allowed = allowed?.intersection(shown) ?? shown
            inPlan = Set(current.plan.actions.map(\.id))
            let approvedMessages = planned.desired.messages.filter { remote.isApproved(message: $0.identifier) && !planned.remote.isApproved(message: $0.identifier) }.count
            let approvedImages = planned.desired.images.filter { remote.isApproved(image: $0.identifier) && !planned.remote.isApproved(image: $0.identifier) }.count
            progress(.relisted(approvedMessages: approvedMessages, approvedImages: approvedImages))
            let later = current.plan.actions.filter { ![.uploadImage, .uploadMessage].contains($0.kind) }.count
            let earlier = planned.plan.actions.filter { [.uploadImage, .uploadMessage].contains($0.kind) }.count
            total = earlier + later
        }

        for action in current.plan.actions where action.kind == .setDefault || action.kind == .deleteDefault {
            guard runnable(action), let productId = action.productId, let locale = action.locale else { continue }
            do {
                if action.kind == .setDefault, let id = action.messageIdentifier {
                    try await api.configureDefaultMessage(productId: productId, locale: locale, messageIdentifier: id)
                } else {
                    try await api.deleteDefaultMessage(productId: productId, locale: locale)
                }
                record(action, .done)
            } catch {
                throw fail(action, error)
            }
        }

        for action in current.plan.actions where action.kind == .publishSnapshot {
            guard runnable(action), let store, let compiled = current.snapshot else { continue }
            do {
                try store.write(compiled.snapshot)
                report.publishedSnapshot = compiled.snapshot.digest
                record(action, .done)
            } catch {
                throw fail(action, error)
            }
        }

        for action in current.plan.actions where action.kind == .setRealtimeURL {
            guard runnable(action), let url = action.url else { continue }
            do {
                try await api.configureRealtimeURL(url)
                record(action, .done)
            } catch let error as RetentionMessagingError where error.errorCode == AppleErrorCode.realtimeURLNeedsPerformanceTest {
                record(action, .blocked, "Apple sets a production realtime URL only after a sandbox performance test has passed; run one (POST /performanceTest in sandbox), then apply again")
            } catch {
                throw fail(action, error)
            }
        }

        // Messages before images: Apple refuses to delete an image a message still uses.
        for action in current.plan.actions where action.kind == .deleteMessage {
            guard runnable(action), let id = action.identifier else { continue }
            do {
                try await api.deleteMessage(identifier: id)
                record(action, .done)
            } catch let error as RetentionMessagingError where error.errorCode == AppleErrorCode.messageNotFound {
                record(action, .alreadyDone, "the message was already gone")
            } catch {
                throw fail(action, error)
            }
        }
        for action in current.plan.actions where action.kind == .deleteImage {
            guard runnable(action), let id = action.identifier else { continue }
            do {
                try await api.deleteImage(identifier: id)
                record(action, .done)
            } catch let error as RetentionMessagingError where error.errorCode == AppleErrorCode.imageNotFound {
                record(action, .alreadyDone, "the image was already gone")
            } catch let error as RetentionMessagingError where error.errorCode == AppleErrorCode.imageInUse {
                record(action, .skipped, "Apple says the image is still in use by a message; kept")
            } catch {
                throw fail(action, error)
            }
        }

        report.requests = counts(since: start)
        report.completed = true
        return report
    }

    func counts(since start: RequestCounts) -> RequestCounts {
        let now = api.requestCounts
        return RequestCounts(configureDefault: now.configureDefault - start.configureDefault,
                             other: now.other - start.other, retries: now.retries - start.retries)
    }
}
