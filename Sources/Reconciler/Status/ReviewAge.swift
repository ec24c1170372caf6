public import Basics
import Foundation
public import RetentionMessagingModels
import StateStore

/// How long one piece of content the manifests derive has been PENDING or REJECTED, from the
/// state record; shown by `plan` and counted by `status`.
public struct ReviewAge: Codable, Sendable, Hashable {
    public var kind: ReviewItem.Kind
    public var identifier: String
    /// `name (locale)` for a message, the image's names for an image.
    public var label: String
    public var state: ReviewState
    /// When the state was first seen; nil when the record has not seen it yet (the next apply records it).
    public var since: UTCTime?
    public var days: Int?
    /// REJECTED, or PENDING longer than the warning threshold.
    public var flagged: Bool

    public init(kind: ReviewItem.Kind, identifier: String, label: String, state: ReviewState, since: UTCTime?, days: Int?, flagged: Bool) {
        self.kind = kind
        self.identifier = identifier
        self.label = label
        self.state = state
        self.since = since
        self.days = days
        self.flagged = flagged
    }

    /// The derived content that is PENDING or REJECTED and has a record, oldest first.
    public static func compute(_ planned: PlanResult, now: UTCTime, warnDays: Int) -> [ReviewAge] {
        guard let document = planned.remote.state?.document else { return [] }
        let items = RemoteResources.content.flatMap { resource in
            let states = resource.remoteStates(in: planned.remote)
            return resource.derived(in: planned.desired).map {
                (resource.contentKind, $0.identifier, $0.label, states[$0.identifier] ?? .notUploaded)
            }
        }
        var ages: [ReviewAge] = []
        for (kind, identifier, label, state) in items where state == .pending || state == .rejected {
            guard let record = document.record(for: identifier) else { continue }
            let since = record.currentReviewState.flatMap { $0.state == state.rawValue ? $0.firstSeenAt : nil }
            let days = since.map { max(0, Int(now.days(since: $0))) }
            ages.append(ReviewAge(kind: kind, identifier: identifier, label: label, state: state, since: since,
                                  days: days, flagged: state == .rejected || (days ?? 0) > warnDays))
        }
        let far = UTCTime(milliseconds: .max)
        return ages.sorted { ($0.since ?? far, $0.label, $0.identifier) < ($1.since ?? far, $1.label, $1.identifier) }
    }
}
