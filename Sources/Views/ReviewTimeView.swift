import Basics
import Foundation
public import Reconciler
import RetentionMessagingModels
import StateStore

/// How long App Review takes, as `status` and `plan` show it (text, Markdown, JSON). The
/// definitions are `ReviewTimes`'; this only words them.
public enum ReviewTimeView {
    /// `36 h` under two days, `3.4 d` from there.
    static func duration(_ seconds: TimeInterval) -> String {
        let hours = seconds / 3600
        return hours < 48 ? "\(Int(hours.rounded())) h" : String(format: "%.1f d", hours / 24)
    }

    static func figures(_ figures: ReviewTimeFigures) -> String {
        "median \(duration(figures.median)), 90th percentile \(duration(figures.p90)) over \(figures.count) review\(figures.count == 1 ? "" : "s")"
            + " (\(figures.approved) approved, \(figures.rejected) rejected)"
    }

    /// `likely by 2026-11-20 12:00 UTC (median of en-US, 4 reviews)`.
    static func estimate(_ estimate: ReviewEstimate?) -> String {
        guard let estimate else { return "no recent review to estimate from" }
        let scope: String
        switch estimate.scope {
        case .locale(let locale): scope = locale
        case .overall: scope = "all recent reviews"
        }
        let basis = "\(scope), \(estimate.sampleCount) review\(estimate.sampleCount == 1 ? "" : "s")"
        switch estimate.statistic {
        case .median: return "likely by \(time(estimate.likelyBy)) (median of \(basis))"
        case .p90: return "past the median; likely by \(time(estimate.likelyBy)) (90th percentile of \(basis))"
        case .overdue: return "longer than 90% of recent reviews (\(basis)); App Review sets no deadline"
        }
    }

    static func time(_ time: UTCTime?) -> String {
        guard let time else { return "?" }
        let text = time.formatted()
        return text.prefix(10) + " " + text.dropFirst(11).prefix(5) + " UTC"
    }

    static func label(_ pending: PendingReview) -> String {
        pending.locale.map { "\(pending.kind.rawValue) \(pending.name) (\($0))" } ?? "\(pending.kind.rawValue) \(pending.name)"
    }

    /// Nothing when there is neither a finished review nor pending content.
    public static func textLines(_ times: ReviewTimes?) -> [String] {
        guard let times, times.overall != nil || !times.pending.isEmpty else { return [] }
        var out = ["Review time (\(times.environment.rawValue), uploads of the last \(times.windowDays) days): "
            + (times.overall.map(figures) ?? "no review finished yet")]
        for (locale, value) in times.sortedLocales {
            out.append("  \(locale): \(figures(value))")
        }
        for pending in times.pending {
            out.append("  waiting: \(label(pending)) for \(duration(pending.waited)); \(estimate(pending.estimate))")
        }
        return out
    }

    public static func markdown(_ times: ReviewTimes?) -> String? {
        guard let times, times.overall != nil || !times.pending.isEmpty else { return nil }
        var lines = ["<details><summary>Review time (\(times.environment.rawValue)): "
            + (times.overall.map { "median \(duration($0.median)), 90th percentile \(duration($0.p90)) over \($0.count) reviews" } ?? "no review finished yet")
            + "</summary>", "",
            "Uploads of the last \(times.windowDays) days, from upload to the first run that saw the decision.", ""]
        if !times.byLocale.isEmpty {
            lines += ["| Locale | Median | 90th percentile | Reviews |", "|---|---|---|---|"]
            for (locale, value) in times.sortedLocales {
                lines.append("| \(locale) | \(duration(value.median)) | \(duration(value.p90)) | \(value.count) |")
            }
            lines.append("")
        }
        if !times.pending.isEmpty {
            lines += ["| Waiting | For | Likely decided |", "|---|---|---|"]
            for pending in times.pending {
                lines.append("| \(label(pending).replacingOccurrences(of: "|", with: "\\|")) | \(duration(pending.waited)) | \(estimate(pending.estimate)) |")
            }
            lines.append("")
        }
        lines.append("</details>")
        return lines.joined(separator: "\n")
    }

    /// The `review_time` object of the status and plan JSON.
    struct JSON: Encodable {
        struct Figures: Encodable {
            var count: Int
            var approved: Int
            var rejected: Int
            var medianSeconds: Int
            var p90Seconds: Int

            init(_ figures: ReviewTimeFigures) {
                count = figures.count
                approved = figures.approved
                rejected = figures.rejected
                medianSeconds = Int(figures.median)
                p90Seconds = Int(figures.p90)
            }

            enum CodingKeys: String, CodingKey {
                case count, approved, rejected, medianSeconds = "median_seconds", p90Seconds = "p90_seconds"
            }
        }

        struct Pending: Encodable {
            var identifier: String
            var kind: String
            var name: String
            var locale: String?
            var submittedAt: String
            var waitedSeconds: Int
            var likelyBy: String?
            /// `median`, `p90` or `overdue`; nil without an estimate.
            var basis: String?
            /// A locale, or `all`.
            var basisScope: String?
            var basisReviews: Int?

            enum CodingKeys: String, CodingKey {
                case identifier, kind, name, locale, submittedAt = "submitted_at", waitedSeconds = "waited_seconds"
                case likelyBy = "likely_by", basis, basisScope = "basis_scope", basisReviews = "basis_reviews"
            }
        }

        var windowDays: Int
        var overall: Figures?
        var byLocale: [String: Figures]
        var pending: [Pending]

        enum CodingKeys: String, CodingKey {
            case windowDays = "window_days", overall, byLocale = "by_locale", pending
        }

        init?(_ times: ReviewTimes?) {
            guard let times, times.overall != nil || !times.pending.isEmpty else { return nil }
            windowDays = times.windowDays
            overall = times.overall.map(Figures.init)
            byLocale = times.byLocale.mapValues(Figures.init)
            pending = times.pending.map { pending in
                var scope: String?
                if case .locale(let locale) = pending.estimate?.scope { scope = locale } else if pending.estimate != nil { scope = "all" }
                return Pending(identifier: pending.identifier, kind: pending.kind.rawValue, name: pending.name, locale: pending.locale,
                               submittedAt: StateTime.format(pending.submittedAt), waitedSeconds: Int(pending.waited),
                               likelyBy: pending.estimate?.likelyBy.map(StateTime.format), basis: pending.estimate?.statistic.rawValue,
                               basisScope: scope, basisReviews: pending.estimate?.sampleCount)
            }
        }
    }
}
