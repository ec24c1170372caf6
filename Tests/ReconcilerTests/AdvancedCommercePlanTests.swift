import Basics
import Foundation
import Manifests
@testable import Reconciler
import RetentionMessagingModels
import Runtime
import Testing
@testable import Views

/// A rule answering with an Advanced Commerce change: published into the snapshot with every attribute
/// of the change, shown attribute by attribute when it changes, and compiled to the same bytes each time.
@Suite("Advanced Commerce answers in plans and snapshots")
struct AdvancedCommercePlanTests {
    static let change = AdvancedCommerceChange(
        sku: "focus.annual", currentSku: "focus.monthly", displayName: "Focus Annual", description: "Focus for a whole year",
        price: 59990, reason: "UPGRADE", effective: "NEXT_BILL_CYCLE", retainBillingCycle: false,
        offer: AdvancedCommerceOffer(period: "P1M", periodCount: 3, price: 29990, reason: "RETENTION"))

    /// The example app with `monthly` marked as an Advanced Commerce product and one rule recommending `change`.
    static func harness(change: AdvancedCommerceChange = change) -> Harness {
        var harness = Harness(environment: .production)
        harness.manifests.app.products = harness.manifests.app.products.map { product in
            var product = product
            product.advancedCommerce = product.id == "monthly"
            return product
        }
        harness.manifests.flows = [FlowManifest(name: "retention", localeFallbacks: [:], rules: [
            FlowRule(name: "annual", match: RuleMatch(products: ["monthly"]),
                     response: .advancedCommerce(message: "offer", change: change), location: Fixtures.at("flow.yaml", 3)),
        ], location: Fixtures.at("flow.yaml"))]
        return harness
    }

    @Test("publishing an advancedCommerce rule puts the whole change in the snapshot, with the message's approved identifiers")
    func publishingPutsTheChangeInTheSnapshot() async throws {
        let harness = Self.harness()
        #expect(ManifestValidator.validate(harness.manifests).filter { $0.severity == .error } == [])
        try await harness.apply()
        harness.approveAll()
        try await harness.apply()
        let snapshot = try #require(try harness.published())
        let rule = try #require(snapshot.rules.first { $0.id == "retention/annual" })
        #expect(rule.response.kind == .advancedCommerce)
        #expect(rule.response.advancedCommerce == Self.change)
        #expect(rule.response.message == "offer")
        #expect(Set(rule.response.messageIdentifiers?.keys.map { $0 } ?? []) == ["de-DE", "en-US"])
        // Written with sorted keys, the change's attributes in the manifest's names.
        let json = String(decoding: try snapshot.encoded(), as: UTF8.self)
        #expect(json.contains("""
                "advancedCommerce" : {
                  "currentSku" : "focus.monthly",
                  "description" : "Focus for a whole year",
                  "displayName" : "Focus Annual",
                  "effective" : "NEXT_BILL_CYCLE",
                  "offer" : {
                    "period" : "P1M",
                    "periodCount" : 3,
                    "price" : 29990,
                    "reason" : "RETENTION"
                  },
                  "price" : 59990,
                  "reason" : "UPGRADE",
                  "retainBillingCycle" : false,
                  "sku" : "focus.annual"
                },
                "kind" : "advancedCommerce",
        """), "\(json)")
    }

    @Test("the same manifests compile to the same snapshot bytes, plan after plan")
    func snapshotIsDeterministic() async throws {
        let first = Self.harness()
        try await first.apply()
        first.approveAll()
        try await first.apply()
        let second = Self.harness()
        try await second.apply()
        second.approveAll()
        try await second.apply()
        let one = try #require(first.publishedBytes())
        let other = try #require(second.publishedBytes())
        #expect(one == other)
        let replanned = try #require(try await first.plan().snapshot)
        #expect(try replanned.snapshot.encoded() == one)
    }

    @Test("changing the offered price and the offer's length shows each attribute before and after in the plan")
    func planShowsTheChangedAttributes() async throws {
        var harness = Self.harness()
        try await harness.apply()
        harness.approveAll()
        try await harness.apply()
        var cheaper = Self.change
        cheaper.price = 49990
        cheaper.offer?.periodCount = 6
        harness.manifests.flows = Self.harness(change: cheaper).manifests.flows
        let planned = try await harness.plan()
        let outcome = try #require(planned.snapshot?.outcomes.first { $0.id == "retention/annual" })
        #expect(outcome.changes == [
            FieldChange(field: "response.advanced_commerce.price", before: "59990", after: "49990"),
            FieldChange(field: "response.advanced_commerce.offer.periodCount", before: "3", after: "6"),
        ])
        let text = PlanView.text(planned.plan, painter: Painter(enabled: false))
        #expect(text.contains(#"response.advanced_commerce.price: "59990" → "49990""#), "\(text)")
        #expect(text.contains(#"response.advanced_commerce.offer.periodCount: "3" → "6""#), "\(text)")
    }
}
