import Basics
import Foundation
public import Reconciler
import RetentionMessagingModels
import StateStore

/// The one line `apply --only-uploads` prints, and its Markdown form for the pull request's comment.
public enum SubmissionView {
    /// `Submitted for App Review by pr-12 at 2026-11-26T10:00:00Z: 3 messages, 1 image (2 already submitted)`.
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
            + " (\(summary.alreadySubmitted) already submitted)"
    }

    /// To the second: a comment reader needs no milliseconds.
    static func time(_ date: Date) -> String { UTCTime(date).formatted(.seconds) }
}
