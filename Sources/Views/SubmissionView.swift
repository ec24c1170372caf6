import Basics
import Foundation
public import Reconciler
import RetentionMessagingModels
import StateStore

/// The one line `apply --only-uploads` prints, and its Markdown form for the pull request's comment.
public enum SubmissionView {
    /// `Submitted for App Review by pr-12 at 2026-11-26T10:00:00Z: 3 messages, 1 image (2 already submitted by
    /// pull requests, 14 already the main branch's)`.
    public static func line(_ summary: SubmissionSummary) -> String {
        "Submitted for App Review by \(summary.by) at \(time(summary.at)): \(counts(summary))"
    }

    /// The same line for a pull request comment, with a link to the run when there is one.
    public static func markdown(_ summary: SubmissionSummary) -> String {
        let run = summary.run.map { " ([run](\($0)))" } ?? ""
        return "**Submitted for App Review** by \(MarkdownText.escape(summary.by)) at \(time(summary.at)): \(counts(summary))\(run)\n"
    }

    static func counts(_ summary: SubmissionSummary) -> String {
        func count(_ number: Int, _ noun: String) -> String { "\(number) \(noun)\(number == 1 ? "" : "s")" }
        return summary.uploaded.map { count($0.count, $0.kind.rawValue) }.joined(separator: ", ")
            + " (\(summary.alreadySubmitted) already submitted by pull requests, \(summary.alreadyOnMain) already the main branch's)"
    }

    /// Why a pull request's submission is refused, with the numbers and what to do; nil when it is allowed.
    public static func refusal(_ headroom: SubmissionHeadroom) -> String? {
        guard !headroom.allowed else { return nil }
        let reserve = headroom.reserve
        let numbers = headroom.tooFull.map {
            "\($0.existing) \($0.kind.rawValue)s in \(headroom.environment.rawValue) + \($0.uploading) to upload = \($0.after), "
                + "more than \($0.cap - reserve) (Apple's cap of \($0.cap) less \(reserve) kept free for the main branch)"
        }
        return "not submitting: " + numbers.joined(separator: "; ")
            + "; prune what abandoned pull requests left (apply --prune --prune-grace DAYS on the main branch), then push again"
    }

    /// To the second: a comment reader needs no milliseconds.
    static func time(_ time: UTCTime) -> String { time.formatted(.seconds) }
}
