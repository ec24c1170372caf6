import Basics
import CLIKit
import Emulator
import Foundation
import RetentionMessagingModels
@testable import RetentionSyncCommands
import Runtime
import StateStore
@testable import CommandTestSupport
import Testing

/// Production review starts at the pull request: `apply --only-uploads` from the pull request's
/// checkout submits its new content, the merge publishes it once App Review approves, and what an
/// abandoned pull request submitted is pruned only after the grace period.
@Suite("retention-sync apply --only-uploads")
struct PullRequestSubmissionTests {
    /// The state store both checkouts share (in CI an S3 prefix; here the main checkout's file).
    static let stateStore = "manifests/.retention-sync/production-snapshot.json"

    /// Production published and approved, as the main branch leaves it.
    func publishedProduction() async throws -> CommandHarness {
        let harness = try CommandHarness()
        let first = await harness.run(["apply", "--env", "production"])
        #expect(first.code == .success, "\(first.stderr)")
        harness.emulator.approveAllPending(in: .production)
        let second = await harness.run(["apply", "--env", "production"])
        #expect(second.code == .success, "\(second.stderr)")
        return harness
    }

    /// A pull request's checkout: a copy of the manifests with one edit.
    func pullRequest(_ harness: CommandHarness, header: String) throws -> String {
        let path = "pr/manifests"
        try FileManager.default.createDirectory(at: harness.file("pr"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: harness.file("manifests"), to: harness.file(path))
        try? FileManager.default.removeItem(at: harness.file(path + "/.retention-sync"))
        try harness.edit(path + "/messages.yaml", replacing: "header: Before you go", with: "header: \(header)")
        return path
    }

    func submit(_ harness: CommandHarness, manifests: String, _ extra: [String] = [],
                environment: [String: String] = [:]) async -> CommandHarness.Run {
        await harness.run(["apply", "--manifests", manifests, "--env", "production", "--only-uploads", "--auto-approve",
                           "--state-store", Self.stateStore] + extra, environment: environment)
    }

    func state(_ harness: CommandHarness) async throws -> (store: FileStateStore, read: StateRead) {
        let store = FileStateStore(path: harness.file(Self.stateStore).path,
                                   owner: StateOwner(bundleId: "com.example.stillpoint", appAppleId: 6450012345, environment: .production))
        return (store, try await store.read())
    }

    @Test("a pull request submits its new content for review and nothing else; after the merge apply uploads nothing and publishes once approved")
    func submitThenMerge() async throws {
        let harness = try await publishedProduction()
        let before = harness.emulator.state(of: .production)
        let snapshotBefore = try await state(harness).read.document?.snapshot?.digest
        let pr = try pullRequest(harness, header: "Wait a moment")

        let submitted = await submit(harness, manifests: pr, ["--summary", "summary.md", "--report", "report.json"],
                                     environment: ["GITHUB_REF": "refs/pull/12/merge"])
        #expect(submitted.code == .success, "\(submitted.stdout)\(submitted.stderr)")
        #expect(submitted.stdout.contains("Apply complete: 1 done, 0 already there, 0 blocked, 1 not in this run; 1 API request."))
        let report = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: harness.file("report.json"))) as? [String: Any])
        let publish = try #require((report["results"] as? [[String: Any]])?.first { $0["kind"] as? String == "publish_snapshot" })
        #expect(publish["outcome"] as? String == "not_in_run")
        #expect((publish["detail"] as? String)?.hasPrefix("not in this run: --only-uploads performs only uploads") == true)
        let line = try #require(submitted.stdout.split(separator: "\n").first { $0.hasPrefix("Submitted for App Review by pr-12 at ") })
        // The main branch's 15 were there before: not this pull request's, neither counted as its nor recorded.
        #expect(line.hasSuffix(": 1 message, 0 images (0 already submitted by pull requests, 15 already the main branch's)"), "\(line)")
        let markdown = try String(contentsOf: harness.file("summary.md"), encoding: .utf8)
        #expect(markdown.hasPrefix("**Submitted for App Review** by pr-12 at "))

        // Only the new message went up; no default, no snapshot changed.
        let after = harness.emulator.state(of: .production)
        let new = Set(after.messages.keys).subtracting(before.messages.keys)
        #expect(new.count == 1)
        #expect(after.messages[new.first!]?.state == .pending)
        #expect(after.images.count == before.images.count)
        #expect(after.defaults == before.defaults)
        let recorded = try await state(harness).read.document
        #expect(recorded?.snapshot?.digest == snapshotBefore)
        #expect(recorded?.record(for: new.first!)?.submissions?.map(\.by) == ["pr-12"])
        #expect(recorded?.content.filter { $0.submissions != nil }.map(\.identifier) == [new.first!])
        // A second push of the same pull request uploads nothing and names its own earlier submission.
        let again = await submit(harness, manifests: pr, environment: ["GITHUB_REF": "refs/pull/12/merge"])
        let second = try #require(again.stdout.split(separator: "\n").first { $0.hasPrefix("Submitted for App Review by pr-12 at ") })
        #expect(second.hasSuffix(": 0 messages, 0 images (1 already submitted by pull requests, 15 already the main branch's)"), "\(second)")

        // The merge: the same edit on main uploads nothing, and publishes once App Review approves.
        try harness.edit("manifests/messages.yaml", replacing: "header: Before you go", with: "header: Wait a moment")
        let merged = await harness.run(["apply", "--env", "production"])
        #expect(merged.code == .success)
        #expect(merged.stdout.hasPrefix("Plan (production): 0 to upload"), "\(merged.stdout)")
        #expect(harness.emulator.state(of: .production).messages.count == after.messages.count)
        harness.emulator.approveAllPending(in: .production)
        let published = await harness.run(["apply", "--env", "production"])
        #expect(published.code == .success)
        #expect(published.stdout.hasPrefix("Plan (production): 0 to upload"), "\(published.stdout)")
        #expect(try await state(harness).read.document?.snapshot?.digest != snapshotBefore)
        let synced = await harness.run(["plan", "--env", "production", "--detailed-exitcode"])
        #expect(synced.code == .success)
        #expect(synced.stdout.contains("No changes."))

        // Merged, it is the main branch's: the next edit keeps it as the version a revert would use.
        #expect(try await state(harness).read.document?.record(for: new.first!)?.mergedAt != nil)
        try harness.edit("manifests/messages.yaml", replacing: "header: Wait a moment", with: "header: Hold on")
        #expect(await harness.run(["apply", "--env", "production"]).code == .success)
        let next = await harness.run(["plan", "--env", "production", "--format", "json"])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(next.stdout.utf8)) as? [String: Any])
        let item = try #require((json["inventory"] as? [[String: Any]])?.first { $0["identifier"] as? String == new.first! })
        #expect(item["label"] as? String == "rollback_target", "\(item)")
    }

    @Test("a submission that would leave too little room below Apple's limits is refused with the numbers, and nothing is uploaded")
    func headroom() async throws {
        let harness = try await publishedProduction()
        let pr = try pullRequest(harness, header: "Wait a moment")
        let messages = harness.emulator.state(of: .production).messages.count
        let requests = harness.emulator.requestCount(in: .production)
        let refused = await submit(harness, manifests: pr, ["--submitted-by", "pr-3", "--submission-reserve", "1990"])
        #expect(refused.code == .failure)
        #expect(refused.stderr.contains("not submitting: \(messages) messages in production + 1 to upload = \(messages + 1), more than 10 "
                                        + "(Apple's cap of 2000 less 1990 kept free for the main branch)"), "\(refused.stderr)")
        #expect(refused.stderr.contains("Nothing was uploaded."))
        #expect(harness.emulator.state(of: .production).messages.count == messages)
        // Only the plan's reads were sent.
        #expect(harness.emulator.requestCount(in: .production) - requests <= 9)
    }

    @Test("an abandoned pull request's content is kept by --prune within the grace period, deleted after it, and what is in use never")
    func abandonedPullRequest() async throws {
        let harness = try await publishedProduction()
        let pr = try pullRequest(harness, header: "Wait a moment")
        let before = Set(harness.emulator.state(of: .production).messages.keys)
        #expect(await submit(harness, manifests: pr, ["--submitted-by", "pr-7"]).code == .success)
        let abandoned = try #require(Set(harness.emulator.state(of: .production).messages.keys).subtracting(before).first)

        // Within the grace period: kept, and labelled with who submitted it and until when.
        let plan = await harness.run(["plan", "--env", "production", "--prune", "--format", "json"])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(plan.stdout.utf8)) as? [String: Any])
        let item = try #require((json["inventory"] as? [[String: Any]])?.first { $0["identifier"] as? String == abandoned })
        #expect(item["label"] as? String == "submitted")
        #expect(item["submitted_by"] as? [String] == ["pr-7"])
        #expect(item["kept_until"] as? String != nil)
        #expect((item["prune"] as? String)?.hasPrefix("kept until ") == true, "\(item)")
        let text = await harness.run(["plan", "--env", "production", "--prune"])
        #expect(text.stdout.contains("submitted by pr-7 for before-you-go (en-US)"), "\(text.stdout)")
        let kept = await harness.run(["apply", "--env", "production", "--prune"])
        #expect(kept.code == .success)
        #expect(harness.emulator.state(of: .production).messages[abandoned] != nil)

        // Three weeks later (the record dated back, as the clock would have moved on).
        let (store, read) = try await state(harness)
        var document = try #require(read.document)
        let threeWeeks = 21 * UTCTime.day
        for index in document.content.indices {
            document.content[index].firstUploadedAt = document.content[index].firstUploadedAt - threeWeeks
            document.content[index].submissions = document.content[index].submissions?.map {
                ContentSubmission(by: $0.by, at: $0.at - threeWeeks, run: $0.run)
            }
        }
        _ = try await store.write(document, condition: read.writeCondition)

        // Meanwhile main edits the same message: its published version stays in use by the flow
        // until the new one is approved, so even without rollback versions and after the grace
        // period --prune keeps it; the abandoned pull request's version goes.
        try harness.edit("manifests/messages.yaml", replacing: "header: Before you go", with: "header: Stay a while")
        let published = try #require(harness.emulator.state(of: .production).messages.first { $0.value.body.header == "Before you go" }?.key)
        let pruned = await harness.run(["apply", "--env", "production", "--prune", "--rollback-versions", "0"])
        #expect(pruned.code == .success, "\(pruned.stdout)\(pruned.stderr)")
        #expect(harness.emulator.state(of: .production).messages[abandoned] == nil)
        #expect(harness.emulator.state(of: .production).messages[published] != nil)
    }
}
