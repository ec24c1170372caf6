import Basics
import Foundation
@testable import Manifests
import RetentionMessagingModels
import Testing
import YAML

/// `match.customer` as a team writes it: read into conditions, and every mistake reported where it
/// was written, saying what to write instead.
@Suite("Customer conditions in a Flow")
struct CustomerConditionManifestTests {
    /// The base fixture with the `offer` rule's match given `customer` (lines of YAML, indented by 6).
    private func validate(customer lines: [String], on rule: String = "      environments: [production]") throws -> (BaseCopy, [Diagnostic]) {
        let base = try BaseCopy()
        let block = (["      customer:"] + lines.map { "        " + $0 }).joined(separator: "\n")
        try base.edit("flow.yaml", rule, rule + "\n" + block)
        return (base, base.validate())
    }

    @Test("a team writes storefronts, tenure, offer history, billing, price increase and ownership, and the rule carries them")
    func everyAttributeIsRead() throws {
        let (base, problems) = try validate(customer: [
            "storefronts: [DEU, AUT, DEU]",
            "tenure: { atLeast: 30d, below: 12m }",
            "offers: { notRedeemedWithin: 90d, types: [promotional, retention] }",
            "billing: [grace, none]",
            "priceIncrease: [pending]",
            "ownership: [purchased]",
            "unknown: match",
        ])
        defer { base.remove() }
        #expect(problems.filter { $0.severity == .error } == [])
        let (_, _, validated) = ManifestLoader.loadAndCheck(directory: base.url, displayPath: "m")
        let rule = try #require(validated?.rules.first { $0.name == "offer" })
        #expect(rule.match.customer == CustomerConditions(
            storefronts: ["AUT", "DEU"], tenureAtLeast: CustomerPeriod(count: 30, unit: .days), tenureBelow: CustomerPeriod(count: 12, unit: .months),
            noOfferRedeemedWithin: CustomerPeriod(count: 90, unit: .days), offerKinds: [.promotional, .retention],
            billing: [.none, .grace], priceIncrease: [.pending], ownership: [.purchased], unknownMatches: true))
    }

    @Test("a storefront Apple never signs is an error at its line and column, with the code meant")
    func unknownStorefrontIsAnErrorWhereWritten() throws {
        let (base, problems) = try validate(customer: ["storefronts: [USA, GER, deu]"])
        defer { base.remove() }
        let found = problems.with(code: "unknown-storefront")
        #expect(found.count == 2)
        #expect(found.map { $0.location?.line } == [11, 11])
        #expect(found.map { $0.location?.column } == [28, 33])
        #expect(found.first?.message == "'GER' is not a storefront")
        #expect(found.last?.hint?.contains("capitals, as Apple signs them: DEU") == true)
    }

    @Test("a tenure longer than the App Store has existed, or a range that leaves nobody, is an error")
    func impossibleTenureIsAnError() throws {
        for (lines, expected) in [
            (["tenure: { atLeast: 30y }"], "invalid-period"),
            (["tenure: { atLeast: 240m }"], "impossible-tenure"),
            (["tenure: { atLeast: 12m, below: 30d }"], "impossible-tenure"),
            (["tenure: {}"], "empty-condition"),
            (["billing: [overdue]"], "unknown-value"),
            (["offers: { types: [promotional] }"], "empty-condition"),
            (["offers: { redeemedWithin: 30d, types: [coupon] }"], "unknown-value"),
            (["unknown: maybe"], "unknown-value"),
        ] {
            let (base, problems) = try validate(customer: lines)
            defer { base.remove() }
            #expect(problems.with(code: expected).count == 1, "\(lines) → \(problems.map(\.code))")
            #expect(problems.with(code: expected).first?.location?.line == 11, "\(lines)")
        }
    }

    @Test("an attribute the tool does not know is reported, not silently matched by everyone")
    func unknownAttributeIsReported() throws {
        let (base, problems) = try validate(customer: ["country: [DEU]"])
        defer { base.remove() }
        #expect(!problems.with(code: "unknown-key").isEmpty)
    }

    @Test("the arms of one split group must ask the same of the customer")
    func splitArmsCarryTheSameConditions() throws {
        let base = try BaseCopy()
        defer { base.remove() }
        try base.edit("flow.yaml", "      split: { group: upsell, percent: 50 }\n    response:\n      alternateProduct",
                      "      customer: { storefronts: [USA] }\n      split: { group: upsell, percent: 50 }\n    response:\n      alternateProduct")
        let found = base.validate().with(code: "split-customer-conditions-differ")
        #expect(found.count == 1)
        #expect(found.first?.message.contains("arm 'stay' of split group 'upsell'") == true)

        // The same block on both arms is fine.
        let same = try BaseCopy()
        defer { same.remove() }
        try same.edit("flow.yaml", "      split: { group: upsell, percent: 50 }\n    response:\n      alternateProduct",
                      "      customer: { storefronts: [USA] }\n      split: { group: upsell, percent: 50 }\n    response:\n      alternateProduct")
        try same.edit("flow.yaml", "      split: { group: upsell, percent: 50 }\n    response: { message: everyday }",
                      "      customer: { storefronts: [USA] }\n      split: { group: upsell, percent: 50 }\n    response: { message: everyday }")
        #expect(same.validate().with(code: "split-customer-conditions-differ").isEmpty)
    }
}
