import Basics
import Emulator
import Foundation
import Manifests
@testable import Reconciler
import RetentionMessagingModels
import Runtime
import Testing

/// A split group goes live whole: while any arm waits for App Review, every arm of the group stays as
/// it was published (or unpublished), so no customer's arm changes because of another arm's review.
@Suite("Split groups are published as a whole")
struct SplitGroupPublishingTests {
    /// A three-arm group (`save-test`: standard 45%, winback 45%, a `none` holdout 10%) and one rule
    /// outside any group, for production (manual review).
    static func harness(percents: (Double, Double, Double) = (45, 45, 10)) -> Harness {
        var harness = Harness(environment: .production)
        harness.manifests.flows = [FlowManifest(name: "retention", localeFallbacks: [:], rules: [
            FlowRule(name: "arm-standard", match: RuleMatch(products: ["monthly"], split: TrafficSplit(group: "save-test", percent: percents.0, control: true)),
                     response: .message(name: "standard"), location: Fixtures.at("flow.yaml", 3)),
            FlowRule(name: "arm-winback", match: RuleMatch(products: ["monthly"], split: TrafficSplit(group: "save-test", percent: percents.1)),
                     response: .message(name: "winback"), location: Fixtures.at("flow.yaml", 8)),
            FlowRule(name: "holdout", match: RuleMatch(products: ["monthly"], split: TrafficSplit(group: "save-test", percent: percents.2)),
                     response: .none, location: Fixtures.at("flow.yaml", 13)),
            FlowRule(name: "yearly", match: RuleMatch(products: ["yearly"]), response: .message(name: "standard"),
                     location: Fixtures.at("flow.yaml", 18)),
        ], location: Fixtures.at("flow.yaml"))]
        return harness
    }

    static let arms: Set<String> = ["retention/arm-standard", "retention/arm-winback", "retention/holdout"]

    /// Approves every pending message of `name` and every pending image.
    static func approve(_ name: String, in harness: Harness) throws {
        for message in try harness.desired().messages where message.name == name && harness.state.messages[message.identifier]?.state == .pending {
            try harness.apple.emulator.approveMessage(message.identifier, in: .production)
        }
        for (id, image) in harness.state.images where image.state == .pending {
            try harness.apple.emulator.approveImage(id, in: .production)
        }
    }

    static func outcomes(_ planned: PlanResult) -> [String: RuleOutcome] {
        Dictionary(uniqueKeysWithValues: (planned.snapshot?.outcomes ?? []).map { ($0.id, $0) })
    }

    @Test("a first publish with one arm in review publishes no arm of its group, names the arm that holds it back, and publishes the rule outside")
    func firstPublishWaitsForTheWholeGroup() async throws {
        let harness = Self.harness()
        try await harness.apply()
        try Self.approve("standard", in: harness)
        let planned = try await harness.plan()
        let outcomes = Self.outcomes(planned)
        #expect(outcomes["retention/arm-standard"]?.outcome == .leftOut)
        #expect(outcomes["retention/arm-standard"]?.heldBy == ["retention/arm-winback"])
        #expect(outcomes["retention/holdout"]?.outcome == .leftOut)
        #expect(outcomes["retention/holdout"]?.heldBy == ["retention/arm-winback"])
        #expect(outcomes["retention/arm-winback"]?.outcome == .leftOut)
        #expect(outcomes["retention/arm-winback"]?.heldBy == [])
        #expect(outcomes["retention/arm-winback"]?.waitingFor.contains { $0.name == "winback" && $0.state == .pending } == true)
        #expect(outcomes["retention/yearly"]?.outcome == .added)
        // status says the same of the ready arm's message: it goes live with its group, once winback is approved.
        let status = Status.report(planned, now: SystemClock().time(), pendingWarnDays: 7)
        let standard = status.messages.filter { $0.name == "standard" }
        #expect(!standard.isEmpty)
        for entry in standard {
            guard case .proceed(let steps) = entry.next else {
                Issue.record("standard (\(entry.locale ?? "")) is \(entry.next), not approved and waiting for its group")
                continue
            }
            #expect(steps.contains(.publishedWithGroup("retention/arm-standard", heldBy: ["retention/arm-winback"])), "\(steps)")
        }

        try await harness.apply()
        let published = try #require(try harness.published())
        #expect(Set(published.rules.map(\.id)).isDisjoint(with: Self.arms))
        #expect(published.rules.map(\.id) == ["retention/yearly"])

        try Self.approve("winback", in: harness)
        try await harness.apply()
        #expect(Set(try #require(try harness.published()).rules.map(\.id)) == Self.arms.union(["retention/yearly"]))
    }

    @Test("changing a running group while one arm's new text is in review keeps every arm at its published version until all are approved")
    func runningGroupChangesTogether() async throws {
        var harness = Self.harness()
        try await harness.apply()
        harness.approveAll()
        try await harness.apply()
        let before = try #require(try harness.published())
        let armsBefore = before.rules.filter { Self.arms.contains($0.id) }
        #expect(armsBefore.count == 3)

        // New percents (every arm changes) and a new winback text, whose upload waits for review.
        let changed = Self.harness(percents: (50, 45, 5))
        harness.manifests.flows = changed.manifests.flows
        harness.manifests.messages = harness.manifests.messages.map { message in
            guard message.name == "winback" else { return message }
            var message = message
            message.localizations = message.localizations.map { localization in
                var localization = localization
                localization.body += " — new"
                return localization
            }
            return message
        }
        try await harness.apply()
        let planned = try await harness.plan()
        let outcomes = Self.outcomes(planned)
        for arm in ["retention/arm-standard", "retention/holdout"] {
            #expect(outcomes[arm]?.outcome == .held, "\(arm)")
            #expect(outcomes[arm]?.heldBy == ["retention/arm-winback"], "\(arm)")
        }
        #expect(outcomes["retention/arm-winback"]?.outcome == .held)
        let during = try #require(try harness.published())
        #expect(during.rules.filter { Self.arms.contains($0.id) } == armsBefore)

        harness.approveAll()
        try await harness.apply()
        let after = try #require(try harness.published())
        let armsAfter = after.rules.filter { Self.arms.contains($0.id) }
        #expect(armsAfter.count == 3)
        #expect(Set(armsAfter.map(\.version)).isDisjoint(with: Set(armsBefore.map(\.version))))
    }
}
