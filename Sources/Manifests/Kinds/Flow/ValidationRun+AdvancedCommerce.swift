import Basics
import RetentionMessagingModels

extension ValidationRun {
    /// An `advancedCommerce` answer: only for products the App marks `advancedCommerce: true` (Apple
    /// ignores it for any other subscription), and a change item the Advanced Commerce API accepts.
    mutating func checkAdvancedCommerce(_ rule: FlowRule, change: AdvancedCommerceChange) {
        let products = rule.match.products?.compactMap { productsById[$0] } ?? set.app.products
        let unmarked = products.filter { !$0.advancedCommerce }.map(\.id)
        if !unmarked.isEmpty {
            let which = rule.match.products == nil ? "every product, including '\(Diagnostic.visible(unmarked[0]))'"
                : "product '\(Diagnostic.visible(unmarked[0]))'"
            report(.error("advanced-commerce-product", at: rule.location(of: .responseAdvancedCommerce),
                          "rule '\(rule.name)' answers advancedCommerce for \(which), which the App does not mark as an Advanced Commerce product; Apple ignores that answer for any other subscription",
                          hint: "if '\(Diagnostic.visible(unmarked[0]))' is an Advanced Commerce API product, add 'advancedCommerce: true' to it in the App; otherwise limit the rule with 'match.products' to marked products, or answer with promotionalOffer or alternateProduct"))
        }
        func at(_ attribute: String) -> SourceLocation { rule.location(of: .advancedCommerceAttribute(attribute)) }
        checkLength(change.displayName, limit: AdvancedCommerceChange.maximumDisplayName, what: "displayName",
                    code: "display-name-too-long", at: at("displayName"))
        checkLength(change.description, limit: AdvancedCommerceChange.maximumDescription, what: "description",
                    code: "description-too-long", at: at("description"))
        checkLength(change.sku, limit: AdvancedCommerceChange.maximumSku, what: "sku", code: "sku-too-long", at: at("sku"))
        checkLength(change.currentSku, limit: AdvancedCommerceChange.maximumSku, what: "currentSku", code: "sku-too-long",
                    at: at("currentSku"))
        checkValue(change.reason, in: AdvancedCommerceChange.reasons, what: "reason", at: at("reason"))
        checkValue(change.effective, in: AdvancedCommerceChange.effectiveValues, what: "effective", at: at("effective"))
        checkPrice(change.price, what: "price", at: at("price"))
        guard let offer = change.offer else { return }
        checkValue(offer.period, in: AdvancedCommerceOffer.periods, what: "offer.period", at: at("offer.period"))
        checkValue(offer.reason, in: AdvancedCommerceOffer.reasons, what: "offer.reason", at: at("offer.reason"))
        checkPrice(offer.price, what: "offer.price", at: at("offer.price"))
        if !AdvancedCommerceOffer.periodCounts.contains(offer.periodCount) {
            report(.error("invalid-advanced-commerce-value", at: at("offer.periodCount"),
                          "offer.periodCount \(offer.periodCount) is outside 1…12",
                          hint: "the Advanced Commerce API accepts 1 to 12 periods"))
        }
    }

    private mutating func checkValue(_ value: String, in allowed: [String], what: String, at location: SourceLocation) {
        guard !allowed.contains(value) else { return }
        report(.error("invalid-advanced-commerce-value", at: location,
                      "\(what) '\(Diagnostic.visible(value))' is not one the Advanced Commerce API knows",
                      hint: "write one of \(allowed.joined(separator: ", "))"))
    }

    private mutating func checkPrice(_ price: Int64, what: String, at location: SourceLocation) {
        guard price < 0 else { return }
        report(.error("invalid-advanced-commerce-value", at: location, "\(what) \(price) is negative",
                      hint: "prices are in milliunits of the currency: 9990 is 9.99"))
    }
}
