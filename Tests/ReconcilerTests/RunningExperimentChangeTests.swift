import Basics
import Foundation
import Manifests
@testable import Reconciler
import RetentionMessagingModels
import Runtime
import Testing
@testable import Views

/// Re-weighting, adding or removing an arm of a live split group moves customers between arms in the
/// middle of an experiment: the plan says which attributes changed and about how many customers
/// change arm — a claim checked here against customers hashed the way `serve` hashes them.
@Suite("Changes to a running experiment")
struct RunningExperimentChangeTests {
    /// The arm a customer gets from a snapshot's split rules of one group (nil: none of them).
    static func arm(of customer: String, group: String, in snapshot: RuntimeSnapshot) -> String? {
        let bucket = TrafficBucket.bucket(salt: group, originalTransactionId: customer)
        return snapshot.rules.first { rule in
            guard let split = rule.match.split, split.salt == group else { return false }
            return split.lowerBucket <= bucket && bucket < split.upperBucket
        }?.id
    }

    /// A live 45/45/10 group, then the manifests' new percents planned against it.
    static func replanned(_ percents: (Double, Double, Double)) async throws -> (published: RuntimeSnapshot, planned: PlanResult) {
        var harness = SplitGroupPublishingTests.harness()
        try await harness.apply()
        harness.approveAll()
        try await harness.apply()
        let published = try #require(try harness.published())
        harness.manifests.flows = SplitGroupPublishingTests.harness(percents: percents).manifests.flows
        return (published, try await harness.plan())
    }

    @Test("moving a running group from 45/45/10 to 60/30/10 shows each rule's percent before and after, and that about 15% of customers change arm")
    func reweightIsShownAndMeasured() async throws {
        let (published, planned) = try await Self.replanned((60, 30, 10))
        let compiled = try #require(planned.snapshot)
        let change = try #require(compiled.groupChanges.first)
        #expect(compiled.groupChanges.count == 1)
        #expect(change.group == "save-test")
        #expect(SplitGroupChange.layout(change.before) == "45/45/10" && SplitGroupChange.layout(change.after) == "60/30/10")
        #expect(change.reassignedBuckets == 1500)

        let outcomes = SplitGroupPublishingTests.outcomes(planned)
        #expect(outcomes["retention/arm-standard"]?.changes == [
            FieldChange(field: "split.percent", before: "45% (buckets 0..<4500)", after: "60% (buckets 0..<6000)")])
        #expect(outcomes["retention/arm-winback"]?.changes == [
            FieldChange(field: "split.percent", before: "45% (buckets 4500..<9000)", after: "30% (buckets 6000..<9000)")])
        #expect(outcomes["retention/holdout"]?.outcome == .unchanged)

        let text = PlanView.text(planned.plan, painter: Painter(enabled: false))
        #expect(text.contains(#"split.percent: "45% (buckets 0..<4500)" → "60% (buckets 0..<6000)""#), "\(text)")
        #expect(text.contains("! split group save-test: 45/45/10 → 60/30/10 (retention/arm-standard, retention/arm-winback, retention/holdout); about 15% of its customers change arm in a running experiment"), "\(text)")
        let markdown = PlanView.markdown(planned.plan).joined()
        #expect(markdown.contains("> [!WARNING]\n> This plan changes a running experiment:"))
        #expect(markdown.contains("- split.percent: 45% (buckets 4500..<9000)\n+ split.percent: 30% (buckets 6000..<9000)"))
        let json = try PlanJSON.encode(planned.plan)
        #expect(json.contains(#""reassigned_percent" : 15"#), "\(json)")

        // The claim, against 20,000 customers hashed as serve hashes them.
        var moved = 0
        let customers = 20_000
        for index in 0..<customers {
            let id = "2000000\(100_000 + index)"
            if let before = Self.arm(of: id, group: "save-test", in: published),
               before != Self.arm(of: id, group: "save-test", in: compiled.snapshot) { moved += 1 }
        }
        let share = Double(moved) / Double(customers)
        // Binomial standard error at 15% over 20,000 is 0.25 points: five of them is the bound.
        #expect(abs(share - 0.15) < 5 * (0.15 * 0.85 / Double(customers)).squareRoot(), "\(share)")
    }

    @Test("shrinking the first arm by 5 points shifts every later arm: 15% of customers change arm; an unchanged layout says nothing")
    func shrinkingAnArmShiftsTheOthers() async throws {
        // 45/45/10 → 40/45/10: arms take consecutive ranges, so winback and the holdout slide down by
        // 500 buckets each: 4000..<4500 standard → winback, 8500..<9000 winback → holdout, and
        // 9500..<10000 leave the group.
        let (_, shrunk) = try await Self.replanned((40, 45, 10))
        let change = try #require(shrunk.snapshot?.groupChanges.first)
        #expect(change.reassignedBuckets == 1500)
        // The unchanged layout re-assigns nobody and says nothing.
        let (_, same) = try await Self.replanned((45, 45, 10))
        #expect(same.snapshot?.groupChanges.isEmpty == true)
        #expect(!PlanView.text(same.plan, painter: Painter(enabled: false)).contains("split group save-test"))
    }

    @Test("a re-weight held back while one arm's new text is in review warns in the plan that holds it: when published, about 10% of the group's customers change arm")
    func heldReweightWarnsInThePullRequest() async throws {
        var harness = SplitGroupPublishingTests.harness()
        try await harness.apply()
        harness.approveAll()
        try await harness.apply()
        let published = try #require(try harness.published())
        // 45/45/10 → 50/45/5 with a new winback text, whose upload waits for review: buckets 4500..<5000 move
        // from winback to standard, 9000..<9500 from the holdout to winback.
        harness.manifests.flows = SplitGroupPublishingTests.harness(percents: (50, 45, 5)).manifests.flows
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
        let compiled = try #require(planned.snapshot)
        // Nothing changes now: the group is served as published.
        #expect(compiled.snapshot.splitLayouts == published.splitLayouts)
        let change = try #require(compiled.groupChanges.first)
        #expect(compiled.groupChanges.count == 1 && change.whenPublished)
        #expect(SplitGroupChange.layout(change.before) == "45/45/10" && SplitGroupChange.layout(change.after) == "50/45/5")
        #expect(change.reassignedBuckets == 1000)

        let text = PlanView.text(planned.plan, painter: Painter(enabled: false))
        #expect(text.contains("! split group save-test (held for review): 45/45/10 → 50/45/5 (retention/arm-standard, retention/arm-winback, "
                              + "retention/holdout); when published: about 10% of group save-test's customers change arm"), "\(text)")
        let markdown = PlanView.markdown(planned.plan).joined()
        #expect(markdown.contains("> [!WARNING]\n> This plan holds back a change to a running experiment until the content it waits for is approved; when published:"),
                "\(markdown)")
        #expect(markdown.contains("when published: about 10% of group save-test"))
        let json = try PlanJSON.encode(planned.plan)
        #expect(json.contains(#""when_published" : true"#) && json.contains(#""reassigned_percent" : 10"#), "\(json)")

        // Once approved the publish says it as a change made now.
        harness.approveAll()
        let ready = try await harness.plan()
        let now = try #require(ready.snapshot?.groupChanges.first)
        #expect(!now.whenPublished && now.reassignedBuckets == 1000)
        #expect(PlanView.text(ready.plan, painter: Painter(enabled: false)).contains("about 10% of its customers change arm in a running experiment"))
    }

    @Test("changing what one arm of a running group matches starts a new period and warns that the arms no longer match the same customers")
    func oneArmsMatchChangeStartsAPeriod() async throws {
        var harness = SplitGroupPublishingTests.harness()
        try await harness.apply()
        harness.approveAll()
        try await harness.apply()
        let published = try #require(try harness.published())
        // A group whose arms match alike keeps the layout it always had: live experiments go on in their period.
        #expect(published.splitLayouts["save-test"] == "arm-standard*:0-4500,arm-winback:4500-9000,holdout:9000-10000")

        var flows = harness.manifests.flows
        flows[0].rules[1].match = RuleMatch(products: ["monthly"], locales: ["en-US", "de-DE"],
                                            split: TrafficSplit(group: "save-test", percent: 45))
        harness.manifests.flows = flows
        let planned = try await harness.plan()
        let compiled = try #require(planned.snapshot)
        let layout = try #require(compiled.snapshot.splitLayouts["save-test"])
        #expect(layout.hasPrefix("arm-standard*:0-4500,arm-winback:4500-9000,holdout:9000-10000;match="))
        #expect(layout.split(separator: "=").last?.count == 8)
        let change = try #require(compiled.groupChanges.first)
        #expect(change.matchChanged == ["retention/arm-winback"] && change.armsMatchDifferently && change.newPeriod)
        #expect(change.reassignedBuckets == 0 && !change.whenPublished)
        let text = PlanView.text(planned.plan, painter: Painter(enabled: false))
        #expect(text.contains("what arm retention/arm-winback matches changes, so the arms match different customers: results do not compare "
                              + "them as a fair split"), "\(text)")
        #expect(text.contains("results report each configuration of the group as a period of its own"))
        #expect(PlanView.markdown(planned.plan).joined().contains("> This plan changes a running experiment:"))
        let json = try PlanJSON.encode(planned.plan)
        #expect(json.contains(#""match_changed" : ["#) && json.contains(#""arms_match_differently" : true"#), "\(json)")

        // The same match on every arm: they match alike again, and the layout has no attribute.
        flows[0].rules[0].match = RuleMatch(products: ["monthly"], locales: ["en-US", "de-DE"],
                                            split: TrafficSplit(group: "save-test", percent: 45, control: true))
        flows[0].rules[2].match = RuleMatch(products: ["monthly"], locales: ["en-US", "de-DE"],
                                            split: TrafficSplit(group: "save-test", percent: 10))
        harness.manifests.flows = flows
        let alike = try #require(try await harness.plan().snapshot)
        #expect(alike.snapshot.splitLayouts["save-test"] == "arm-standard*:0-4500,arm-winback:4500-9000,holdout:9000-10000")
        #expect(alike.groupChanges.first?.armsMatchDifferently == false)
    }

    @Test("a rule waiting for 24 localizations names five and how many more in text; plan JSON keeps all 24")
    func longWaitingListsAreShortened() throws {
        let locales = (0..<24).map { "l\($0 < 10 ? "0" : "")\($0)" }
        let items = locales.map { ReviewItem(kind: .message, identifier: "id-\($0)", name: "before-you-go", locale: $0, state: .pending) }
        let rule = RuleOutcome(id: "cancel-flow/holdout", outcome: .leftOut, version: "0123456789abcdef", publishedVersion: nil, waitingFor: items)
        var waits = PlanView.WaitingLists()
        let text = PlanView.ruleText(rule, waits: &waits)
        #expect(text.contains(items[4].description) && !text.contains(items[5].description), "\(text)")
        #expect(text.contains("and 19 more (plan --format json lists them all)"), "\(text)")
        let json = String(decoding: try CanonicalJSON.encode(rule), as: UTF8.self)
        #expect(locales.allSatisfy { json.contains("\"locale\":\"\($0)\"") })
        // Six are shown whole: "and 1 more" would save nothing.
        var few = PlanView.WaitingLists()
        #expect(few.text(Array(items.prefix(6)), for: "x") == items.prefix(6).map(\.description).joined(separator: "; "))
    }

    @Test("one rule waiting reads 'waits', several 'wait'")
    func waitingRulesAgree() {
        #expect(PlanWording.reason(ActionReason(.rulesChanged(2, waitingRules: 1))) == "2 rules changed since the published snapshot; 1 rule waits for review")
        #expect(PlanWording.reason(ActionReason(.rulesChanged(1, waitingRules: 3))) == "1 rule changed since the published snapshot; 3 rules wait for review")
    }
}

/// Segments declared for a split group (`segments:` of its Flow) are compiled into the snapshot and
/// recorded in the group's layout: declaring them on a live group starts a period, and the plan says so.
@Suite("Segments declared for a running experiment")
struct DeclaredSegmentPlanTests {
    @Test("a group without declared segments keeps the layout it had; declaring storefront and tenure on the live group is a new period the plan names, no customer moving")
    func declaringSegmentsStartsAPeriod() async throws {
        var harness = SplitGroupPublishingTests.harness()
        try await harness.apply()
        harness.approveAll()
        try await harness.apply()
        let published = try #require(try harness.published())
        #expect(published.splitLayouts["save-test"] == "arm-standard*:0-4500,arm-winback:4500-9000,holdout:9000-10000")

        harness.manifests.flows[0].segments = [
            FlowSegment(group: "save-test", by: "tenure", location: Fixtures.at("flow.yaml", 30), groupLocation: Fixtures.at("flow.yaml", 30),
                        byLocation: Fixtures.at("flow.yaml", 30)),
            FlowSegment(group: "save-test", by: "storefront", location: Fixtures.at("flow.yaml", 32), groupLocation: Fixtures.at("flow.yaml", 32),
                        byLocation: Fixtures.at("flow.yaml", 32)),
        ]
        let planned = try await harness.plan()
        let compiled = try #require(planned.snapshot)
        #expect(compiled.snapshot.splitLayouts["save-test"]
            == "arm-standard*:0-4500,arm-winback:4500-9000,holdout:9000-10000;confirm=storefront+tenure")
        let change = try #require(compiled.groupChanges.first)
        #expect(compiled.groupChanges.count == 1 && change.reassignedBuckets == 0)
        #expect(change.segmentsBefore == [] && change.segmentsAfter == ["storefront", "tenure"])
        #expect(SplitGroupPublishingTests.outcomes(planned)["retention/arm-winback"]?.changes == [
            FieldChange(field: "split.segments", before: "none", after: "storefront, tenure")])
        let text = PlanView.text(planned.plan, painter: Painter(enabled: false))
        #expect(text.contains("no customer of the running experiment changes arm; declared segments none → storefront, tenure: a new period starts"),
                "\(text)")
        #expect(PlanView.markdown(planned.plan).joined().contains("declared segments none → storefront, tenure: a new period starts"))
        let json = try PlanJSON.encode(planned.plan)
        #expect(json.contains(#""segments_after" : ["#), "\(json)")

        // Applied, the plan after it changes nothing more.
        harness.approveAll()
        try await harness.apply()
        #expect(try harness.published()?.splitLayouts["save-test"]?.hasSuffix(";confirm=storefront+tenure") == true)
        #expect(try await harness.plan().snapshot?.groupChanges.isEmpty == true)
    }
}
