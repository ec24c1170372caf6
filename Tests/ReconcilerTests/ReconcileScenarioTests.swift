import Basics
import Emulator
import Foundation
import Manifests
import Reconciler
import RetentionMessaging
import RetentionMessagingModels
import Runtime
import Testing
@testable import Views

@Suite("Reconciling, as a user does it")
struct ReconcileScenarioTests {
    @Test("applying to a fresh sandbox uploads, sets defaults and publishes in the same run")
    func freshSandboxConvergesInOneApply() async throws {
        let harness = Harness(environment: .sandbox)
        let report = try await harness.apply()
        #expect(report.completed)
        #expect(report.count(.blocked) == 0)
        let desired = try harness.desired()
        #expect(harness.state.defaults.count == 4)
        #expect(harness.state.realtimeURL == "https://retention.example.com/sandbox")
        let snapshot = try #require(try harness.published())
        #expect(snapshot.rules.map(\.id) == desired.rules.map(\.id))
        #expect(snapshot.rules.map(\.id).contains("retention/sandbox-only"))

        let again = try await harness.plan()
        #expect(again.plan.converged)
        #expect(PlanView.summaryLine(again.plan) == "Plan (sandbox): 0 to upload, 0 to set, 0 blocked, 0 to delete")
    }

    @Test("applying twice gives no changes and zero uploads the second time")
    func applyingTwiceChangesNothing() async throws {
        let harness = Harness(environment: .sandbox)
        try await harness.apply()
        let before = harness.api.requestCounts
        let second = try await harness.apply()
        #expect(second.results.isEmpty)
        let after = harness.api.requestCounts
        // Only the plan's reads: two lists, four defaults, the realtime URL.
        #expect(after.total - before.total == 7)
        #expect(after.configureDefault == before.configureDefault)
    }

    @Test("in production uploads wait for review while defaults and rules are blocked; approval then publishes")
    func productionWaitsForReviewThenPublishes() async throws {
        let harness = Harness(environment: .production)
        let first = try await harness.apply()
        #expect(first.count(.done) == 2 + 6 + 1)   // images, messages, realtime URL
        #expect(first.count(.blocked) == 5)          // four defaults and the snapshot
        #expect(harness.state.defaults.isEmpty)

        let waiting = try await harness.plan()
        #expect(!waiting.plan.hasReadyActions)
        #expect(waiting.plan.health == .progressing)
        #expect(!waiting.plan.converged)

        harness.approveAll()
        try await harness.apply()
        #expect(harness.state.defaults.count == 4)
        let snapshot = try #require(try harness.published())
        #expect(!snapshot.rules.map(\.id).contains("retention/sandbox-only"))
        #expect(try await harness.plan().plan.converged)
    }

    @Test("an edited message gets a new version that waits for review while the old one keeps serving")
    func editedMessageWaitsWhileOldServes() async throws {
        var harness = Harness(environment: .production)
        try await harness.apply()
        harness.approveAll()
        try await harness.apply()
        let servedBefore = try #require(try harness.published())

        harness.manifests = Fixtures.manifests(directory: harness.directory, winbackDE: "Wir haben etwas Neues für dich")
        let planned = try await harness.plan()
        #expect(planned.plan.summary.toUpload == 1)
        let publish = try #require(planned.plan.actions.first { $0.kind == .publishSnapshot })
        #expect(publish.state == .blocked)
        #expect(publish.rules.first { $0.id == "retention/winback" }?.outcome == .held)

        try await harness.apply()
        #expect(try harness.published() == servedBefore)

        harness.approveAll()
        try await harness.apply()
        let servedAfter = try #require(try harness.published())
        let newId = try harness.desired().messages.first { $0.name == "winback" && $0.locale == "de-DE" }?.identifier
        #expect(servedAfter.rules.first { $0.id == "retention/winback" }?.response.messageIdentifiers?["de-DE"] == newId)
    }

    @Test("reverting a commit rolls back without a new upload")
    func revertRollsBackWithoutUpload() async throws {
        var harness = Harness(environment: .production)
        try await harness.apply()
        harness.approveAll()
        try await harness.apply()
        let original = harness.publishedBytes()
        harness.manifests = Fixtures.manifests(directory: harness.directory, winbackDE: "Neu")
        try await harness.apply()
        harness.approveAll()
        try await harness.apply()
        #expect(harness.publishedBytes() != original)

        harness.manifests = Fixtures.manifests(directory: harness.directory)
        let uploadsBefore = harness.state.messages.count
        let revert = try await harness.plan()
        #expect(revert.plan.summary.toUpload == 0)
        try await harness.apply()
        #expect(harness.state.messages.count == uploadsBefore)
        #expect(harness.publishedBytes() == original)
    }

    @Test("App Review rejecting a message the main branch uses needs attention, naming the message and locale; the rest goes out")
    func rejectedMessageNeedsAttention() async throws {
        let harness = Harness(environment: .production)
        try await harness.apply()
        let winbackDE = try #require(try harness.desired().messages.first { $0.name == "winback" && $0.locale == "de-DE" })
        try harness.apple.emulator.rejectMessage(winbackDE.identifier, in: .production)
        harness.approveAll()
        let planned = try await harness.plan()
        #expect(!planned.plan.hasErrors)
        #expect(planned.plan.needsAttention)
        #expect(planned.plan.health == .degraded)
        let problem = try #require(planned.plan.problems.first)
        #expect(problem.name == "winback" && problem.locale == "de-DE")
        #expect(problem.severity == .attention)
        #expect(problem.message.contains("'winback' (de-DE)"))
        #expect(PlanView.text(planned.plan, painter: Painter(enabled: false)).contains("message 'winback' (de-DE) version"))
        // The rest still goes out; the rejected rule stays out of the snapshot.
        try await harness.apply()
        let snapshot = try #require(try harness.published())
        #expect(!snapshot.rules.map(\.id).contains("retention/winback"))
        #expect(harness.state.defaults.count == 4)
    }

    @Test("a saved plan applied after the manifests changed is refused")
    func savedPlanRefusedAfterManifestsChange() async throws {
        var harness = Harness(environment: .sandbox)
        let saved = try await harness.plan().plan
        let reloaded = try SavedPlan.load(Data(try PlanJSON.encode(saved).utf8))
        #expect(reloaded == SavedPlan(saved))
        harness.manifests = Fixtures.manifests(directory: harness.directory, winbackDE: "Geändert")
        let fresh = try await harness.plan().plan
        #expect(throws: ReconcilerError.self) { try SavedPlan.check(saved: reloaded, fresh: fresh) }
        do {
            _ = try SavedPlan.check(saved: reloaded, fresh: fresh)
        } catch {
            #expect(error.description.contains("the manifests changed"))
        }
    }

    @Test("a saved plan skips what was already done and refuses what it did not contain")
    func savedPlanAgainstChangedRemote() async throws {
        let harness = Harness(environment: .sandbox)
        let saved = try await harness.plan().plan
        try await harness.apply()
        // Already done: nothing left, nothing refused.
        #expect(try SavedPlan.check(saved: SavedPlan(saved), fresh: try await harness.plan().plan) == Set(saved.actions.map(\.id)))
        // Someone points a default elsewhere: the saved plan (made when it was unset) still sets it.
        try await harness.api.deleteDefaultMessage(productId: "monthly", locale: "en-US")
        _ = try SavedPlan.check(saved: SavedPlan(saved), fresh: try await harness.plan().plan)
        // Someone deletes the realtime URL after a plan that found nothing to do: refused.
        let converged = try await harness.plan().plan
        try await harness.api.deleteRealtimeURL()
        let changed = try await harness.plan().plan
        #expect(throws: ReconcilerError.self) { try SavedPlan.check(saved: SavedPlan(converged), fresh: changed) }
    }

    @Test("a prune the plan refused stays refused after the sandbox re-list, although the uploads shrink its share")
    func pruneProtectionHoldsAfterRelist() async throws {
        let harness = Harness(environment: .sandbox)
        let stray = "0f0e0d0c-0b0a-4909-8807-060504030201"
        try await harness.api.uploadMessage(identifier: stray, body: UploadMessageRequestBody(header: "Stray", body: "By hand"))
        let planned = try await harness.plan(PlanOptions(prune: true))
        #expect(planned.plan.action("delete_message:\(stray)")?.state == .error)

        let report = try await harness.reconciler().apply(planned)
        #expect(harness.state.messages[stray] != nil)
        #expect(report.results.first { $0.id == "delete_message:\(stray)" }?.outcome != .done)
        #expect(harness.state.defaults.count == 4)
    }

    @Test("a plan whose reads were retried after server errors prints the same bytes as one without")
    func retriedReadsGiveTheSamePlan() async throws {
        let harness = Harness(environment: .sandbox)
        try await harness.apply()
        let clean = try await harness.plan()

        harness.apple.emulator.setFaults(FaultInjection(serverErrorRate: 0.5, seed: 7))
        let retrying = RetentionMessagingClient(environment: .sandbox, credentials: harness.apple.credentials,
                                                transport: harness.apple.emulator.transport(defaultEnvironment: .sandbox),
                                                pacing: .apple, clock: harness.apple.clock,
                                                retry: RetryPolicy(maxAttempts: 20, baseDelay: 1, maxDelay: 1))
        let retried = try await harness.reconciler(api: retrying).plan(try harness.desired())
        #expect(retrying.requestCounts.retries > 0)
        #expect(try PlanJSON.encode(retried.plan) == PlanJSON.encode(clean.plan))
        #expect(PlanView.text(retried.plan, painter: Painter(enabled: false)) == PlanView.text(clean.plan, painter: Painter(enabled: false)))
    }

    @Test("over Apple's image cap, messages that show a new picture are not uploaded without it")
    func messagesWaitForTheirImages() async throws {
        let harness = Harness(environment: .production)
        let desired = try harness.desired()
        var remote = RemoteState(environment: .production)
        remote.images = Dictionary(uniqueKeysWithValues: (0..<2000).map {
            (String(format: "00000000-0000-4000-8000-%012d", $0), RemoteImage(state: .approved, size: .fullSize))
        })
        let planned = try Planner.plan(desired: desired, remote: remote, hasSnapshotStore: false)
        #expect(planned.plan.actions.filter { $0.kind == .uploadImage }.allSatisfy { $0.state == .error })
        let showsPicture = planned.plan.actions.filter { $0.kind == .uploadMessage && !$0.dependsOn.isEmpty }
        #expect(!showsPicture.isEmpty && showsPicture.allSatisfy { $0.state == .error && $0.error?.description.contains("cap of 2000 images") == true })

        let report = try await Applier(api: harness.api, state: nil, clock: SystemClock()).apply(planned)
        let standard = Set(desired.messages.filter { !$0.imageIdentifiers.isEmpty }.map(\.identifier))
        #expect(!standard.isEmpty)
        #expect(harness.state.messages.keys.allSatisfy { !standard.contains($0) })
        #expect(harness.state.messages.count == desired.messages.count - standard.count)
        for id in standard {
            #expect(report.results.first { $0.id == "upload_message:\(id)" }?.outcome == .error)
        }
    }

    @Test("apply sends no delete for an image while a message that may show it was not deleted first")
    func imageDeleteWaitsForMessageDeletes() async throws {
        let harness = Harness(environment: .sandbox)
        let image = "1f1e1d1c-1b1a-4919-8817-161514131211"
        let message = "0f0e0d0c-0b0a-4909-8807-060504030201"
        try await harness.api.uploadImage(identifier: image, size: .fullSize, png: TestPNG.variant(of: TestPNG.fullSize, tag: "stray"))
        try await harness.api.uploadMessage(identifier: message, body: UploadMessageRequestBody(
            header: "Stray", body: "By hand", image: UploadMessageImage(imageIdentifier: image, altText: "Stray")))
        let planned = try await harness.plan(PlanOptions(prune: true, pruneForce: true))
        #expect(planned.plan.action("delete_image:\(image)")?.dependsOn == ["delete_message:\(message)"])

        let allowed = Set(planned.plan.actions.map(\.id)).subtracting(["delete_message:\(message)"])
        let report = try await harness.reconciler().apply(planned, allowedActions: allowed)
        #expect(report.results.first { $0.id == "delete_image:\(image)" }?.outcome == .blocked)
        #expect(harness.state.images[image] != nil && harness.state.messages[message] != nil)
    }

    @Test("two applies racing on the same manifests both succeed and leave one consistent result")
    func racingApplies() async throws {
        let harness = Harness(environment: .sandbox)
        async let first = harness.apply()
        async let second = harness.apply(api: harness.apple.client(.sandbox))
        let reports = try await [first, second]
        #expect(reports.allSatisfy { $0.completed })
        let alone = Harness(environment: .sandbox)
        try await alone.apply()
        #expect(harness.state == alone.state)
        #expect(harness.publishedBytes() == alone.publishedBytes())
        #expect(try await harness.plan().plan.converged)
    }

    @Test("a reconcile after App Review that dies after any request is finished by the next run")
    func crashAfterReviewConverges() async throws {
        func reviewed() async throws -> Harness {
            let harness = Harness(environment: .production)
            try await harness.apply()
            harness.approveAll()
            return harness
        }
        let reference = try await reviewed()
        let before = reference.api.requestCounts.total
        try await reference.apply()
        let total = reference.api.requestCounts.total - before
        for halt in 0..<total {
            let harness = try await reviewed()
            harness.apple.halt(after: halt)
            await #expect(throws: (any Error).self) { try await harness.apply() }
            harness.apple.halt(after: nil)
            try await harness.apply()
            #expect(harness.state == reference.state, "halted after \(halt) requests")
            #expect(harness.publishedBytes() == reference.publishedBytes(), "halted after \(halt) requests")
        }
    }

    @Test("an apply that dies after any request is finished by the next run")
    func crashAfterEveryRequestConverges() async throws {
        for environment in Environment.allCases {
            let reference = Harness(environment: environment)
            try await reference.apply()
            let total = reference.api.requestCounts.total
            for halt in 0..<total {
                let harness = Harness(environment: environment)
                harness.apple.halt(after: halt)
                await #expect(throws: (any Error).self) { try await harness.apply() }
                harness.apple.halt(after: nil)
                try await harness.apply()
                #expect(harness.state == reference.state, "halted after \(halt) requests in \(environment)")
                #expect(harness.publishedBytes() == reference.publishedBytes(), "halted after \(halt) requests in \(environment)")
            }
        }
    }
}
