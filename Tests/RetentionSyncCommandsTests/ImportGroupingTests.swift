@testable import Operations
import Reconciler
import Testing

/// Import writes the defaults it adopts grouped per message: products that show a message in the
/// same locales share one entry, and the entries say exactly the pairs Apple holds — none more.
@Suite("Imported defaults, grouped")
struct ImportGroupingTests {
    static func pair(_ product: String, _ locale: String, _ message: String) -> ImportPlan.Default {
        ImportPlan.Default(pair: ProductLocale(productId: product, locale: locale), message: message)
    }

    @Test("products that show a message in the same locales share one entry; the entries cover exactly the pairs")
    func groupedByMessageAndLocales() {
        let defaults = [
            Self.pair("plus.monthly", "en-US", "vendor-streak"), Self.pair("plus.monthly", "de-DE", "vendor-streak"),
            Self.pair("pro.monthly", "en-US", "vendor-streak"), Self.pair("pro.monthly", "de-DE", "vendor-streak"),
            Self.pair("basic.monthly", "en-US", "vendor-streak"), Self.pair("basic.monthly", "de-DE", "vendor-winback"),
        ]
        let entries = ImportPlan.grouped(defaults)
        #expect(entries == [
            ImportPlan.DefaultsEntry(products: ["basic.monthly"], locales: ["de-DE"], message: "vendor-winback"),
            ImportPlan.DefaultsEntry(products: ["basic.monthly"], locales: ["en-US"], message: "vendor-streak"),
            ImportPlan.DefaultsEntry(products: ["plus.monthly", "pro.monthly"], locales: ["de-DE", "en-US"], message: "vendor-streak"),
        ])
        let covered = entries.flatMap { entry in entry.products.flatMap { product in entry.locales.map { "\(product)/\($0) \(entry.message)" } } }
        #expect(covered.sorted() == defaults.map { "\($0.pair) \($0.message)" }.sorted())
    }

    @Test("a vendor's campaign over 40 products and 12 locales is one entry, not 480")
    func oneCampaignOneLine() {
        let locales = (0..<12).map { "l\($0)" }
        let defaults = (0..<40).flatMap { product in locales.map { Self.pair("p\(product)", $0, "campaign") } }
        #expect(ImportPlan.grouped(defaults).count == 1)
    }
}
