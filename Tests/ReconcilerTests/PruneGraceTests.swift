import Basics
import Foundation
import Reconciler
import RetentionMessagingModels
import StateStore
import Testing

@Suite("The prune grace period")
struct PruneGraceTests {
    static let t0 = StateTime.parse("2026-11-01T00:00:00.000Z")!

    static func record(submittedAt: UTCTime?) -> ContentRecord {
        ContentRecord(identifier: "id", kind: .message, name: "winback", locale: "en-US", contentVersion: "v", firstUploadedAt: t0,
                      submissions: submittedAt.map { [ContentSubmission(by: "pr-8", at: $0)] })
    }

    @Test("content is kept for DAYS after its last submission, then it may be pruned")
    func keptThenPrunable() {
        let grace = PruneGrace(days: 14)
        let record = Self.record(submittedAt: Self.t0.adding(seconds: 3 * 86_400))
        #expect(grace.keptUntil(record, now: Self.t0.adding(seconds: 10 * 86_400)) == Self.t0.adding(seconds: 17 * 86_400))
        #expect(grace.keptUntil(record, now: Self.t0.adding(seconds: 17 * 86_400)) == nil)
        // Uploaded by main only: the upload starts the clock.
        #expect(grace.keptUntil(Self.record(submittedAt: nil), now: Self.t0.adding(seconds: 86_400)) == Self.t0.adding(seconds: 14 * 86_400))
        #expect(grace.keptUntil(nil, now: Self.t0) == nil)
        #expect(PruneGrace(days: 0).keptUntil(record, now: Self.t0) == nil)
    }
}
