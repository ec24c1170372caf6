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

@Suite("Plan views: limits, escaping, and what a sandbox apply does in one run")
struct PlanViewTests {
    /// The golden plan with one stray message whose name a hostile manifest could hold.
    static func hostilePlan(name: String) throws -> Plan {
        var plan = try GoldenPlanTests.everyActionPlan()
        plan.actions.append(PlanAction(id: .deleteMessage("2f2e2d2c-2b2a-4929-8827-262524232221"), reason: ActionReason(.unusedMessage),
                                       change: MessageChange.delete("2f2e2d2c-2b2a-4929-8827-262524232221", name: name)))
        return plan
    }

    static let hostile = "evil\n</details>\n<!-- retention-sync: next comment -->\n\u{1B}[2J\u{7}| `x`"

    @Test("--markdown-max-chars is never exceeded, even when one line is longer than a comment", arguments: [500, 700, 1_000, 1_500, 4_000])
    func markdownHonoursTheLimit(limit: Int) throws {
        let plan = try Self.hostilePlan(name: String(repeating: "long-name-", count: 300))
        let comments = PlanView.markdown(plan, maxCharacters: limit)
        #expect(comments.count > 1)
        for comment in comments {
            #expect(comment.utf16.count <= limit, "a comment of \(comment.utf16.count) characters")
            #expect(comment.components(separatedBy: "<details>").count == comment.components(separatedBy: "</details>").count)
        }
        #expect(comments[0].hasPrefix("### retention-sync plan"))
    }

    @Test("names holding newlines, </details>, the split marker or escape sequences cannot break the Markdown")
    func markdownEscapesNames() throws {
        let comments = PlanView.markdown(try Self.hostilePlan(name: Self.hostile))
        #expect(comments.count == 1)
        let text = comments[0]
        #expect(!text.contains("\u{1B}") && !text.contains("\u{7}"))
        #expect(!text.contains("<!-- retention-sync: next comment -->"))
        #expect(text.components(separatedBy: "<details>").count == text.components(separatedBy: "</details>").count)
        #expect(!text.contains("\n</details>\n<!--"))
    }

    @Test("names holding escape sequences or newlines reach the terminal as visible text")
    func terminalEscapesNames() throws {
        let plan = try Self.hostilePlan(name: Self.hostile)
        let plain = PlanView.text(plan, painter: Painter(enabled: false))
        #expect(!plain.contains("\u{1B}") && !plain.contains("\u{7}"))
        #expect(plain.contains("evil\\u{A}</details>"))
        let coloured = PlanView.text(plan, painter: Painter(enabled: true))
        #expect(!coloured.contains("\u{1B}[2J"))
    }

    @Test("a first sandbox plan lists the defaults the same apply sets apart from what waits for App Review, and says the digest changes")
    func sandboxSameRunIsNotBlocked() async throws {
        let harness = Harness(environment: .sandbox)
        let plan = try await harness.plan().plan
        let afterRelist = plan.actions.filter { plan.runsAfterRelist($0) }
        #expect(!afterRelist.isEmpty)
        let markdown = PlanView.markdown(plan).joined()
        #expect(!markdown.contains("Blocked until App Review approves"))
        #expect(markdown.contains("Done by this apply once sandbox approves its uploads"))
        let text = PlanView.text(plan, painter: Painter(enabled: false))
        #expect(!text.contains("\nBlocked ("))
        #expect(text.contains("\nAfter this apply's uploads (\(afterRelist.count))"))
        if plan.snapshotDigestChangesInApply {
            #expect(text.contains("publish snapshot sha256:") && text.contains("apply publishes the snapshot compiled after that"))
        }
        // What apply publishes is what the label promised: a digest other than the one shown.
        let shown = plan.actions.first { $0.kind == .publishSnapshot }.flatMap { action -> String? in
            if let compiled = action.change.as(SnapshotChange.self)?.compiled { return compiled.snapshot.digest }
            return nil
        }
        let report = try await harness.apply()
        #expect(report.completed)
        if plan.snapshotDigestChangesInApply { #expect(report.publishedSnapshot != shown) }
    }

    @Test("an image whose PNG was not loaded is an error in the apply report, never an empty upload")
    func missingPNGIsAnError() async throws {
        let harness = Harness(environment: .production)
        let reconciler = try harness.reconciler()
        var planned = try await reconciler.plan(try harness.desired())
        planned.desired.pngs = [:]
        let report = try await reconciler.apply(planned)
        let uploads = report.results.filter { $0.kind == .uploadImage }
        #expect(!uploads.isEmpty && uploads.allSatisfy { $0.outcome == .error })
        #expect(harness.state.images.isEmpty)
    }

    @Test("apply runs every action kind in ActionKind.applyOrder, each once")
    func applyOrderCoversEveryKind() {
        let kinds = ActionKind.applyOrder.compactMap { step -> ActionKind? in
            if case .perform(let kind) = step { return kind }
            return nil
        }
        #expect(kinds.count == ActionKind.allCases.count && Set(kinds) == Set(ActionKind.allCases))
        #expect(ActionKind.applyOrder.contains(.relist))
    }
}
