public import Basics
public import Foundation
public import RetentionMessagingModels
public import StateStore

/// How long App Review takes for this App, measured from the review states the state record
/// observed, and when content still PENDING is likely to be decided.
///
/// Definitions (the README's "Review time" repeats them):
/// - A review lasts from the upload (`first_uploaded_at`) to the first time a run saw APPROVED or
///   REJECTED after it had seen PENDING. Runs see a decision only when they look, so each figure is
///   late by up to the time between reconciles. Content never seen PENDING (the sandbox approves at
///   once) is no review and is not counted.
/// - Recent: uploaded within `windowDays` before `now`.
/// - Median and 90th percentile interpolate linearly between the closest ranks (numpy's default,
///   Excel's PERCENTILE.INC).
/// - An estimate for pending content is upload + median of its locale's recent reviews when the
///   locale has at least `minimumLocaleSamples`, else of all recent reviews; once it has waited past
///   the median, upload + 90th percentile; past that too, it is overdue.
public struct ReviewTimes: Sendable, Hashable {
    public static let defaultWindowDays = 90
    public static let minimumLocaleSamples = 3

    public var environment: Environment
    public var windowDays: Int
    /// Every recent review (messages and images); nil when there is none.
    public var overall: ReviewTimeFigures?
    /// Messages only, by locale (sorted).
    public var byLocale: [String: ReviewTimeFigures]
    /// Content whose last observed state is PENDING, longest waiting first.
    public var pending: [PendingReview]

    public var sortedLocales: [(locale: String, figures: ReviewTimeFigures)] {
        byLocale.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    /// `observed`: the review states this run read from Apple, by identifier, which are newer than
    /// the record's (a plan writes nothing); content Apple no longer holds as PENDING is not waiting.
    public static func measure(_ document: StateDocument, now: UTCTime, windowDays: Int = defaultWindowDays,
                               observed: [String: ReviewState] = [:]) -> ReviewTimes {
        let horizon = now - Int64(windowDays) * UTCTime.day
        var all: [Review] = []
        var pending: [ContentRecord] = []
        for record in document.content {
            if let seen = observed[record.identifier], seen != .pending {
                if let review = Review(record), record.firstUploadedAt >= horizon { all.append(review) }
            } else if record.currentReviewState?.state == "PENDING" {
                pending.append(record)
            } else if let review = Review(record), record.firstUploadedAt >= horizon {
                all.append(review)
            }
        }
        let overall = ReviewTimeFigures(all)
        var byLocale: [String: ReviewTimeFigures] = [:]
        for (locale, reviews) in Dictionary(grouping: all.filter { $0.locale != nil }, by: { $0.locale! }) {
            byLocale[locale] = ReviewTimeFigures(reviews)
        }
        let waiting = pending.map { record -> PendingReview in
            let waited = max(0, now.seconds(since: record.firstUploadedAt))
            let local = record.locale.flatMap { byLocale[$0] }.flatMap { $0.count >= minimumLocaleSamples ? $0 : nil }
            let scope: ReviewEstimate.Scope = local != nil ? .locale(record.locale!) : .overall
            let estimate = (local ?? overall).map { figures -> ReviewEstimate in
                if waited <= figures.median {
                    return ReviewEstimate(statistic: .median, scope: scope, sampleCount: figures.count,
                                          likelyBy: record.firstUploadedAt + Int64((figures.median * 1000).rounded(.down)))
                }
                if waited <= figures.p90 {
                    return ReviewEstimate(statistic: .p90, scope: scope, sampleCount: figures.count,
                                          likelyBy: record.firstUploadedAt + Int64((figures.p90 * 1000).rounded(.down)))
                }
                return ReviewEstimate(statistic: .overdue, scope: scope, sampleCount: figures.count, likelyBy: nil)
            }
            return PendingReview(identifier: record.identifier, kind: record.kind, name: record.name, locale: record.locale,
                                 submittedAt: record.firstUploadedAt, waited: waited, estimate: estimate)
        }
        return ReviewTimes(environment: document.environment, windowDays: windowDays, overall: overall, byLocale: byLocale,
                           pending: waiting.sorted { ($0.submittedAt, $0.identifier) < ($1.submittedAt, $1.identifier) })
    }

    /// One finished review.
    struct Review {
        var locale: String?
        var seconds: TimeInterval
        var approved: Bool

        init?(_ record: ContentRecord) {
            guard let pendingIndex = record.reviewStates.firstIndex(where: { $0.state == "PENDING" }),
                  let decision = record.reviewStates[pendingIndex...].first(where: { $0.state == "APPROVED" || $0.state == "REJECTED" })
            else { return nil }
            locale = record.locale
            seconds = max(0, decision.firstSeenAt.seconds(since: record.firstUploadedAt))
            approved = decision.state == "APPROVED"
        }
    }
}

/// Median and 90th percentile of a set of review durations, in whole seconds.
public struct ReviewTimeFigures: Sendable, Hashable {
    public var count: Int
    public var approved: Int
    public var rejected: Int
    public var median: TimeInterval
    public var p90: TimeInterval

    init?(_ reviews: [ReviewTimes.Review]) {
        guard !reviews.isEmpty else { return nil }
        let sorted = reviews.map(\.seconds).sorted()
        count = sorted.count
        approved = reviews.filter(\.approved).count
        rejected = count - approved
        // Whole seconds: the observations are late by a reconcile interval anyway.
        median = Self.percentile(sorted, 0.5).rounded()
        p90 = Self.percentile(sorted, 0.9).rounded()
    }

    public init(count: Int, approved: Int, rejected: Int, median: TimeInterval, p90: TimeInterval) {
        self.count = count
        self.approved = approved
        self.rejected = rejected
        self.median = median
        self.p90 = p90
    }

    /// Linear interpolation between closest ranks over ascending `values`.
    static func percentile(_ values: [Double], _ p: Double) -> Double {
        let position = Double(values.count - 1) * p
        let lower = Int(position.rounded(.down))
        let upper = min(lower + 1, values.count - 1)
        return values[lower] + (values[upper] - values[lower]) * (position - Double(lower))
    }
}

/// Content still PENDING: how long it has waited and when it is likely decided.
public struct PendingReview: Sendable, Hashable {
    public var identifier: String
    public var kind: ContentRecord.Kind
    public var name: String
    public var locale: String?
    public var submittedAt: UTCTime
    public var waited: TimeInterval
    /// nil when there is no recent review to estimate from.
    public var estimate: ReviewEstimate?
}

public struct ReviewEstimate: Sendable, Hashable {
    public enum Statistic: String, Sendable, Hashable {
        /// Likely decided by upload + median.
        case median
        /// Waited past the median: likely by upload + 90th percentile.
        case p90
        /// Waited longer than 90% of recent reviews.
        case overdue
    }

    public enum Scope: Sendable, Hashable {
        case locale(String)
        case overall
    }

    public var statistic: Statistic
    public var scope: Scope
    /// How many recent reviews the figure comes from.
    public var sampleCount: Int
    /// nil when overdue.
    public var likelyBy: UTCTime?

    public init(statistic: Statistic, scope: Scope, sampleCount: Int, likelyBy: UTCTime?) {
        self.statistic = statistic
        self.scope = scope
        self.sampleCount = sampleCount
        self.likelyBy = likelyBy
    }
}
