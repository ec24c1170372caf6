import Basics
import Foundation
import RetentionMessagingModels
import Runtime
import StateStore
@testable import EngineTestSupport
import Testing

@Suite("State history: who wrote a version, and what it changed")
struct StateHistorySummaryTests {
    typealias Support = StateStoreTestSupport

    @Test("in GitHub Actions the writer is the run's URL; elsewhere the user and host")
    func writerIdentity() {
        let ci = StateWriter.current(environment: [
            "GITHUB_SERVER_URL": "https://github.com/", "GITHUB_REPOSITORY": "acme/app", "GITHUB_RUN_ID": "1234",
            "GITHUB_RUN_ATTEMPT": "2", "GITHUB_REF": "refs/heads/main", "GITHUB_TOKEN": "ghs_never",
        ], host: "runner-7")
        #expect(ci == StateWriter(run: "GitHub Actions run 1234 (attempt 2), acme/app, refs/heads/main",
                                  url: "https://github.com/acme/app/actions/runs/1234/attempts/2"))
        #expect(ci.description == "https://github.com/acme/app/actions/runs/1234/attempts/2")
        let first = StateWriter.current(environment: ["GITHUB_REPOSITORY": "acme/app", "GITHUB_RUN_ID": "9", "GITHUB_RUN_ATTEMPT": "1"], host: "h")
        #expect(first.url == "https://github.com/acme/app/actions/runs/9")
        #expect(StateWriter.current(environment: ["USER": "alice"], host: "laptop") == StateWriter(run: "alice@laptop"))
    }

    @Test("each version is summed up in one line against the one before")
    func summaries() throws {
        let first = try Support.document(for: Support.production)
        let digest = try #require(first.snapshot?.digest)
        #expect(StateChangeSummary.line(from: nil, to: first) == "first version: published \(digest.prefix(19))")
        #expect(StateChangeSummary.line(from: first, to: first) == "no content change (review states re-checked)")

        var second = first
        second.recordUpload(ContentRecord(identifier: "7f1c2d3e-0000-5000-8000-000000000003", kind: .message, name: "winback",
                                          locale: "de-DE", contentVersion: "beef", firstUploadedAt: Support.uploaded))
        second.recordUpload(ContentRecord(identifier: "1a1b2c3d-0000-5000-8000-000000000004", kind: .image, name: "hero2",
                                          contentVersion: "FULL_SIZE:def", firstUploadedAt: Support.uploaded))
        second.observeReviewState("PENDING", of: "0a1b2c3d-0000-5000-8000-000000000002", at: Support.uploaded)
        second.recordDefault(productId: "com.example.app.monthly", locale: "de-DE", messageIdentifier: "7f1c2d3e-0000-5000-8000-000000000003", at: Support.uploaded)
        second.realtimeURL = RealtimeURLRecord(url: nil, appliedAt: Support.uploaded)
        #expect(StateChangeSummary.line(from: first, to: second)
                == "uploaded 1 message; uploaded 1 image; 1 now PENDING; 1 default set; realtime URL removed")

        var third = second
        third.observeReviewState("REJECTED", of: "0a1b2c3d-0000-5000-8000-000000000002", at: Support.uploaded)
        third.snapshot = try Support.snapshot(for: Support.production, message: "stay")
        third.removeRecord(for: "1a1b2c3d-0000-5000-8000-000000000004")
        let published = try #require(third.snapshot?.digest)
        #expect(StateChangeSummary.line(from: second, to: third) == "published \(published.prefix(19)); 1 now REJECTED; removed 1 record")
    }

    @Test("a pull request's run names its submitter pr-N; other runs name none")
    func submitterFromGitHub() {
        #expect(ContentSubmission.submitter(environment: ["GITHUB_REF": "refs/pull/123/merge"]) == "pr-123")
        #expect(ContentSubmission.submitter(environment: ["GITHUB_REF": "refs/heads/main"]) == nil)
        #expect(ContentSubmission.submitter(environment: [:]) == nil)
    }

    @Test("a submission is kept once per submitter, the latest, sorted by submitter")
    func submissionsPerSubmitter() throws {
        var document = try Support.document(for: Support.production)
        let id = "6f1c2d3e-0000-5000-8000-000000000001"
        document.recordSubmission(of: id, by: "pr-9", at: Support.uploaded.adding(seconds: 10), run: nil)
        document.recordSubmission(of: id, by: "pr-12", at: Support.uploaded.adding(seconds: 20), run: "https://x/runs/1")
        document.recordSubmission(of: id, by: "pr-9", at: Support.uploaded.adding(seconds: 30), run: nil)
        let record = try #require(document.record(for: id))
        #expect(record.submissions?.map(\.by) == ["pr-12", "pr-9"])
        #expect(record.lastSubmittedAt == Support.uploaded.adding(seconds: 30))
    }
}
