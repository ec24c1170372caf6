import Basics
import Foundation
import Reconciler
import RetentionMessaging
import RetentionMessagingModels
import StateStore
import Testing

@Suite("Prune grace in the plan")
struct PlanPruneGraceTests {
    /// Sandbox applied, plus a message a pull request submitted at `submitted` that no manifest derives.
    func submittedStray(at submitted: UTCTime) async throws -> (Harness, String) {
        let harness = Harness(environment: .sandbox)
        try await harness.apply()
        let stray = "0f0e0d0c-0b0a-4909-8807-060504030201"
        try await harness.api.uploadMessage(identifier: stray, body: UploadMessageRequestBody(header: "Stray", body: "From a PR"))
        let binding = try #require(try harness.reconciler().state)
        let read = try await binding.read()
        var document = try #require(read.document)
        document.recordUpload(ContentRecord(identifier: stray, kind: .message, name: "stray", locale: "en-US",
                                            contentVersion: "0", firstUploadedAt: submitted))
        Submissions.record([stray], by: "pr-9", run: nil, at: submitted, in: &document)
        _ = try await binding.store.write(document, condition: read.writeCondition)
        return (harness, stray)
    }

    @Test("a plan counts the grace period to the time it is given, so the same inputs give the same plan, and deletes once it is over")
    func graceCountsToThePlansTime() async throws {
        let submitted = UTCTime(milliseconds: 1790000000000)
        let (harness, stray) = try await submittedStray(at: submitted)
        let within = PlanOptions(prune: true, now: submitted.adding(seconds: 13 * 86_400))
        let first = try await harness.plan(within).plan
        let second = try await harness.plan(within).plan
        #expect(first == second)
        let item = try #require(first.inventory.first { $0.identifier == stray })
        #expect(item.label == .submitted)
        #expect(item.submittedBy == ["pr-9"])
        #expect(item.prune == .withinGrace(until: submitted.adding(seconds: 14 * 86_400)))
        #expect(first.action("delete_message:\(stray)") == nil)

        let after = try await harness.plan(PlanOptions(prune: true, now: submitted.adding(seconds: 15 * 86_400))).plan
        #expect(after.inventory.first { $0.identifier == stray }?.prune == .deletable)
        #expect(after.action("delete_message:\(stray)")?.state == .ready)
        // A longer grace keeps it again, and a saved plan carries that grace.
        let longer = try await harness.plan(PlanOptions(prune: true, pruneGraceDays: 30,
                                                        now: submitted.adding(seconds: 15 * 86_400))).plan
        #expect(longer.action("delete_message:\(stray)") == nil)
        #expect(longer.pruneGraceDays == 30)
        #expect(after.pruneGraceDays == nil)
    }
}
