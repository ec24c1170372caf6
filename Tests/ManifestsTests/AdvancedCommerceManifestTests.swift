import Basics
import Foundation
@testable import Manifests
import RetentionMessagingModels
import Testing
import TestSupport
import Views

/// Writing an `advancedCommerce` answer: allowed only for products the App marks, alone, with a
/// message that exists and values the Advanced Commerce API knows; every fault at its file:line:column.
@Suite("Advanced Commerce answers in manifests")
struct AdvancedCommerceManifestTests {
    static let corpus = repositoryRoot.appendingPathComponent("fixtures/manifests/invalid")

    static func rendered(_ name: String, directory: URL? = nil) -> (set: ManifestSet?, text: String) {
        let (set, diagnostics) = ManifestLoader.loadAndValidate(directory: directory ?? corpus.appendingPathComponent(name),
                                                                displayPath: "fixtures/manifests/invalid/\(name)")
        return (set, DiagnosticRenderer.render(diagnostics, format: .text, color: false))
    }

    @Test("answering advancedCommerce for a product the App does not mark is an error at the answer, naming the rule, the product and what to do")
    func unmarkedProductIsAnError() {
        let text = Self.rendered("advanced-commerce-product-not-marked").text
        #expect(text.contains("fixtures/manifests/invalid/advanced-commerce-product-not-marked/flow.yaml:28:9: error: rule 'annual-switch' answers advancedCommerce for product 'com.example.focus.monthly', which the App does not mark as an Advanced Commerce product; Apple ignores that answer for any other subscription [advanced-commerce-product]"), "\(text)")
        #expect(text.contains("hint: if 'com.example.focus.monthly' is an Advanced Commerce API product, add 'advancedCommerce: true' to it in the App"), "\(text)")
        #expect(text.hasSuffix("1 error, 0 warnings\n"), "\(text)")
    }

    @Test("marking the product advancedCommerce: true in the App makes the same flow valid, and the rule reads back the whole change")
    func markingTheProductMakesItValid() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("advanced-commerce-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.copyItem(at: Self.corpus.appendingPathComponent("advanced-commerce-product-not-marked"), to: directory)
        let app = directory.appendingPathComponent("app.yaml")
        let marked = try String(contentsOf: app, encoding: .utf8).replacingOccurrences(
            of: "  - id: com.example.focus.monthly\n    locales: [en-US, de-DE]\n",
            with: "  - id: com.example.focus.monthly\n    locales: [en-US, de-DE]\n    advancedCommerce: true\n")
        try Data(marked.utf8).write(to: app)
        let (set, text) = Self.rendered("marked", directory: directory)
        #expect(!text.contains("error"), "\(text)")
        let loaded = try #require(set)
        #expect(loaded.app.products.first { $0.id == "com.example.focus.monthly" }?.advancedCommerce == true)
        #expect(loaded.app.products.first { $0.id == "com.example.focus.yearly" }?.advancedCommerce == false)
        let rule = try #require(loaded.flows.first?.rules.first { $0.name == "annual-switch" })
        #expect(rule.response == .advancedCommerce(message: "try-yearly", change: AdvancedCommerceChange(
            sku: "focus.annual", currentSku: "focus.monthly", displayName: "Focus Annual", description: "Focus for a whole year",
            price: 59990, reason: "UPGRADE", effective: "NEXT_BILL_CYCLE", retainBillingCycle: false)))
    }

    @Test("advancedCommerce beside another answer kind is an error naming both")
    func notTogetherWithAnotherKind() {
        let text = Self.rendered("advanced-commerce-with-another-kind").text
        #expect(text.contains("flow.yaml:18:7: error: rule 'switch' answers with both alternateProduct and advancedCommerce [invalid-response]"), "\(text)")
    }

    @Test("an unknown message and a value the Advanced Commerce API does not accept are errors at their own line and column")
    func unknownMessageAndValues() {
        let text = Self.rendered("advanced-commerce-unknown-message").text
        #expect(text.contains("flow.yaml:28:18: error: no message named 'try-yearli' [unknown-message]"), "\(text)")
        #expect(text.contains("hint: did you mean 'try-yearly'?"), "\(text)")
        #expect(text.contains("flow.yaml:37:44: error: offer.periodCount 13 is outside 1…12 [invalid-advanced-commerce-value]"), "\(text)")
    }

    @Test("each attribute of the change is checked where it is written: texts over Apple's limits, reasons and periods Apple does not list, negative prices")
    func attributesAreChecked() {
        var set = makeSet(messages: [textMessage()])
        set.app.products[0].advancedCommerce = true
        var rule = FlowRule(name: "switch", match: RuleMatch(), response: .advancedCommerce(message: "stay", change: AdvancedCommerceChange(
            sku: "focus.annual", currentSku: "", displayName: String(repeating: "x", count: 31), description: String(repeating: "y", count: 46),
            price: -1, reason: "SIDEGRADE", effective: "SOMETIME", retainBillingCycle: true,
            offer: AdvancedCommerceOffer(period: "P2Y", periodCount: 0, price: 10, reason: "LOYALTY"))), location: here(6))
        for (index, name) in ["currentSku", "displayName", "description", "price", "reason", "effective", "offer.period",
                              "offer.periodCount", "offer.reason"].enumerated() {
            rule.fieldLocations[.advancedCommerceAttribute(name)] = SourceLocation(file: "flow.yaml", line: 10 + index, column: 9)
        }
        set.flows = [FlowManifest(name: "cancel", localeFallbacks: [:], rules: [rule], location: here(6))]
        let found = ManifestValidator.validate(set).filter { $0.severity == .error }.map { "\($0.location?.line ?? 0): \($0.message)" }
        #expect(found.contains("10: currentSku is empty"), "\(found)")
        #expect(found.contains("11: displayName is 31 characters long; Apple allows at most 30"), "\(found)")
        #expect(found.contains("12: description is 46 characters long; Apple allows at most 45"), "\(found)")
        #expect(found.contains("13: price -1 is negative"), "\(found)")
        #expect(found.contains("14: reason 'SIDEGRADE' is not one the Advanced Commerce API knows"), "\(found)")
        #expect(found.contains("15: effective 'SOMETIME' is not one the Advanced Commerce API knows"), "\(found)")
        #expect(found.contains("16: offer.period 'P2Y' is not one the Advanced Commerce API knows"), "\(found)")
        #expect(found.contains("17: offer.periodCount 0 is outside 1…12"), "\(found)")
        #expect(found.contains("18: offer.reason 'LOYALTY' is not one the Advanced Commerce API knows"), "\(found)")
        #expect(found.count == 9, "\(found)")
    }
}
