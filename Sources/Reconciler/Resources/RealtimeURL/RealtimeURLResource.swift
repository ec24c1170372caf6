import Basics
import Foundation
import RetentionMessaging
import RetentionMessagingModels
public import StateStore

extension ResourceID {
    public static let realtimeURL = ResourceID(rawValue: "realtime_url")
}

extension ActionKind {
    public static let setRealtimeURL = ActionKind(.set, .realtimeURL)
}

extension ActionID {
    public static func setRealtimeURL(_ url: String) -> ActionID { ActionID(.setRealtimeURL, url) }
}

/// What setting the realtime URL changes.
public struct RealtimeURLChange: ResourceChange {
    public var url: String
    public var current: String?

    public init(_ url: String, current: String?) {
        self.url = url
        self.current = current
    }

    public var kind: ActionKind { .setRealtimeURL }
    public var title: String { "set realtime URL " + (current.map { "from \($0) → " } ?? "") + url }
    public var source: ManifestSource? { .app }

    public var identifier: String? { nil }

    public func drift(against document: StateDocument?) -> Drift? {
        guard current != url, document?.realtimeURL?.url == url else { return nil }
        return Drift(what: "realtime URL", found: current ?? "(no URL)", correctedTo: url)
    }

    public var fields: ChangeFields {
        var fields = ChangeFields()
        fields.url = url
        fields.currentURL = current
        return fields
    }
}

/// The realtime URL Apple calls. Production takes it only once a sandbox performance test passed.
enum RealtimeURLResource: RemoteResource {
    static let id = ResourceID.realtimeURL
    static let isContent = false
    static let verbs: [PlanVerb] = [.set]

    static func read(_ api: any RetentionMessagingAPI, pairs: [ProductLocale], into state: inout RemoteState) async throws {
        state.realtimeURL = try await api.getRealtimeURL()
    }

    static func plan(_ context: inout PlanContext) throws {
        let remote = context.remote
        warnIfRemoved(&context)
        guard let url = context.desired.realtimeURL, remote.realtimeURL != url else { return }
        var action = PlanAction(
            id: .setRealtimeURL(url),
            reason: ActionReason(remote.realtimeURL == nil ? .noRealtimeURL : .otherRealtimeURL),
            change: RealtimeURLChange(url, current: remote.realtimeURL))
        // The state records a URL Apple refused until a sandbox performance test passes (403 4030026).
        if context.environment == .production && remote.state?.document?.realtimeURLAwaitingPerformanceTest?.url == url {
            action.state = .blocked
            action.reason.wait = .performanceTest
        }
        context.actions.append(action)
    }

    /// An App without a URL leaves Apple's as it is; when the state records one the manifests
    /// declared, removing it changes nothing at Apple, which a revert of the commit that switched
    /// the URL must not hide. The apply of the main branch records the removal, so later plans are quiet.
    static func warnIfRemoved(_ context: inout PlanContext) {
        guard context.desired.realtimeURL == nil, let held = context.remote.realtimeURL,
              let recorded = context.remote.state?.document?.realtimeURL?.url else { return }
        context.warnings.append(.realtimeURLRemoved(environment: context.environment, recorded: recorded, held: held))
    }

    static func perform(_ change: RealtimeURLChange, in planned: PlanResult, api: any RetentionMessagingAPI,
                        report: inout ApplyReport, recorder: inout StateRecorder?) async throws -> Refusal? {
        do {
            try await api.configureRealtimeURL(change.url)
        } catch let error as RetentionMessagingError where error.errorCode == AppleErrorCode.realtimeURLNeedsPerformanceTest {
            return Refusal(.blocked, ActionResult.realtimeURLAwaitingTest, awaiting: .performanceTest)
        }
        return nil
    }

    static func recordDone(_ change: RealtimeURLChange, in planned: PlanResult, recorder: inout StateRecorder?, at time: UTCTime) {
        let url = change.url
        recorder?.record {
            $0.realtimeURL = RealtimeURLRecord(url: url, appliedAt: time)
            $0.realtimeURLAwaitingPerformanceTest = nil
        }
    }

    /// Records that Apple refused the realtime URL until a sandbox performance test passes, so that
    /// every later plan that shares the store shows it waiting, on any runner.
    static func recordRefusal(_ refusal: Refusal, of change: RealtimeURLChange, recorder: inout StateRecorder?, at time: UTCTime) {
        guard refusal.awaiting == .performanceTest else { return }
        let url = change.url
        recorder?.record { document in
            if document.realtimeURLAwaitingPerformanceTest?.url != url {
                document.realtimeURLAwaitingPerformanceTest = RealtimeURLRefusal(url: url, refusedAt: time)
            }
        }
    }
}
