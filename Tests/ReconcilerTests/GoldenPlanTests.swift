import Basics
import Foundation
import Manifests
import Reconciler
import RetentionMessaging
import RetentionMessagingModels
import Runtime
import TestSupport
import Testing
@testable import Views

/// The three renderings of one plan that holds every action kind and every state, pinned by
/// golden files in fixtures/plans/. Run with UPDATE_GOLDEN=1 to rewrite them after a deliberate change.
@Suite("Plan renderings")
struct GoldenPlanTests {
    /// Production, part-way through: one picture and two messages to upload, a default to set, one
    /// blocked by review and one on a REJECTED message, a default to delete, a snapshot with added,
    /// held, left-out and removed rules, a new realtime URL, and (forced) prune of stray content.
    static func everyActionPlan() throws -> Plan {
        var manifests = Fixtures.manifests(directory: URL(fileURLWithPath: "/app"))
        manifests.defaults = [
            DefaultAssignment(productId: "monthly", locale: "de-DE", message: "winback", location: Fixtures.at("defaults.yaml")),
            DefaultAssignment(productId: "monthly", locale: "en-US", message: "winback", location: Fixtures.at("defaults.yaml")),
            DefaultAssignment(productId: "yearly", locale: "de-DE", message: "standard", location: Fixtures.at("defaults.yaml")),
        ]
        let desired = try Identities.derive(manifests, environment: .production)
        func message(_ name: String, _ locale: String) -> String {
            desired.messages.first { $0.name == name && $0.locale == locale }!.identifier
        }
        let bullet = desired.images.first { $0.name == "bullet" }!.identifier
        let stray = "0f0e0d0c-0b0a-4909-8807-060504030201"
        let strayImage = "1f1e1d1c-1b1a-4919-8817-161514131211"
        let previousOffer = SnapshotRule(id: "retention/offer-a", version: "00000000000000aa", match: SnapshotMatch(products: ["monthly"]),
                                         response: SnapshotResponse(kind: .message, message: "winback",
                                                                    messageIdentifiers: ["en-US": message("winback", "en-US")]))
        let retired = SnapshotRule(id: "retention/retired", version: "00000000000000bb", match: SnapshotMatch(),
                                   response: SnapshotResponse(kind: .none))
        let published = try RuntimeSnapshot(bundleId: Fixtures.bundleId, appAppleId: 1234567890, environment: .production,
                                            localeFallbacks: [:], rules: [previousOffer, retired]).sealed()
        let remote = RemoteState(
            environment: .production,
            messages: [message("winback", "en-US"): .approved, message("winback", "de-DE"): .rejected,
                       message("offer", "en-US"): .pending, message("offer", "de-DE"): .pending, stray: .approved],
            images: [bullet: RemoteImage(state: .approved, size: .bulletPoint),
                     strayImage: RemoteImage(state: .approved, size: .fullSize)],
            defaults: [ProductLocale(productId: "monthly", locale: "en-US"): message("offer", "en-US"),
                       ProductLocale(productId: "yearly", locale: "en-US"): message("winback", "en-US")],
            realtimeURL: "https://old.example.com/retention",
            publishedSnapshot: published, apiCalls: 7)
        return try Planner.plan(desired: desired, remote: remote, options: PlanOptions(prune: true, pruneForce: true, allowDeleteDefaults: true),
                                hasSnapshotStore: true).plan
    }

    /// Fails after recording with UPDATE_GOLDEN=1, so a recording run never passes unnoticed.
    func check(_ rendered: String, against name: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) throws {
        Golden.expect(rendered, matches: "fixtures/plans/\(name)", sourceLocation: sourceLocation)
    }

    @Test("the plan holds every action kind and every state")
    func everyKindAndState() throws {
        let plan = try Self.everyActionPlan()
        #expect(Set(plan.actions.map(\.kind)) == Set(ActionKind.allCases))
        #expect(Set(plan.actions.map(\.state)) == [.ready, .blocked, .error])
        let outcomes = Set(plan.actions.first { $0.kind == .publishSnapshot }?.rules.map(\.outcome) ?? [])
        #expect(outcomes.isSuperset(of: [.held, .leftOut, .removed]))
    }

    @Test("the terminal rendering matches fixtures/plans/every-action.txt")
    func terminal() throws {
        try check(PlanView.text(try Self.everyActionPlan(), painter: Painter(enabled: false)), against: "every-action.txt")
    }

    @Test("the Markdown rendering matches fixtures/plans/every-action.md")
    func markdown() throws {
        let comments = PlanView.markdown(try Self.everyActionPlan())
        #expect(comments.count == 1)
        try check(comments.joined(), against: "every-action.md")
    }

    @Test("the JSON rendering matches fixtures/plans/every-action.json and reads back")
    func json() throws {
        let plan = try Self.everyActionPlan()
        let text = try PlanJSON.encode(plan)
        try check(text, against: "every-action.json")
        #expect(try SavedPlan.load(Data(text.utf8)) == SavedPlan(plan))
    }

    @Test("a long Markdown plan is split into comments that each fit")
    func markdownSplits() throws {
        let comments = PlanView.markdown(try Self.everyActionPlan(), maxCharacters: 1_500)
        #expect(comments.count > 1)
        #expect(comments.allSatisfy { $0.count <= 1_500 })
        #expect(comments.allSatisfy { $0.components(separatedBy: "<details>").count == $0.components(separatedBy: "</details>").count })
        #expect(comments[0].hasPrefix("### retention-sync plan"))
    }

    @Test("colour appears only when the console allows it")
    func colourOnlyWhenAllowed() throws {
        let plan = try Self.everyActionPlan()
        #expect(!PlanView.text(plan, painter: Painter(enabled: false)).contains("\u{1B}["))
        #expect(PlanView.text(plan, painter: Painter(enabled: true)).contains("\u{1B}[31m"))
    }
}
