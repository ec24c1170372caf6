import Basics
import Foundation
import RetentionMessagingModels
import YAML

extension Loader {
    mutating func convert(_ raw: RawFlow, node: YAMLNode) -> FlowManifest {
        var fields: [FlowManifest.Field: SourceLocation] = [.name: raw.name.location]
        let fallbackKeys = Self.keyLocations(node, "localeFallbacks")
        var fallbacks: [String: String] = [:]
        for (from, to) in raw.localeFallbacks ?? [:] {
            fallbacks[from] = to.value
            fields[.fallbackKey(from)] = fallbackKeys[from] ?? to.location
            fields[.fallbackTarget(from)] = to.location
        }
        let rules = raw.rules.map { convert($0) }
        var flow = FlowManifest(name: raw.name.value, localeFallbacks: fallbacks, rules: rules, location: raw.name.location)
        flow.fieldLocations = fields
        flow.guardrails = (raw.guardrails ?? []).compactMap { convert($0) }
        flow.segments = (raw.segments ?? []).map { item in
            FlowSegment(group: item.value.group.value, by: item.value.by.value, location: item.location,
                        groupLocation: item.value.group.location, byLocation: item.value.by.location)
        }
        return flow
    }

    private mutating func convert(_ item: Located<RawGuardrail>) -> FlowGuardrail? {
        let raw = item.value
        guard let metric = FlowGuardrail.Metric(rawValue: raw.metric.value) else {
            diagnostics.append(.error("invalid-guardrail", at: raw.metric.location,
                                      "guardrail metric '\(Diagnostic.visible(raw.metric.value))' is not one of renewed, kept24h, paid",
                                      hint: "renewed and kept24h limit a rate's drop in points; paid limits money per exposed customer"))
            return nil
        }
        return FlowGuardrail(group: raw.group.value, metric: metric, maxDrop: raw.maxDrop.value, location: item.location,
                             groupLocation: raw.group.location, maxDropLocation: raw.maxDrop.location)
    }

    private mutating func convert(_ item: Located<RawRule>) -> FlowRule {
        let raw = item.value
        var fields: [FlowRule.Field: SourceLocation] = [.name: raw.name.location, .response: raw.response.location]
        var match = RuleMatch()
        if let located = raw.match {
            fields[.match] = located.location
            match = convert(located.value, fields: &fields)
        }
        let response = convert(raw.response, rule: raw.name.value, fields: &fields)
        var rule = FlowRule(name: raw.name.value, match: match, response: response, location: item.location)
        rule.fieldLocations = fields
        return rule
    }

    private mutating func convert(_ written: RawMatch, fields: inout [FlowRule.Field: SourceLocation]) -> RuleMatch {
        var match = RuleMatch()
        if let products = written.products {
            match.products = products.map(\.value)
            for product in products where fields[.matchProduct(product.value)] == nil {
                fields[.matchProduct(product.value)] = product.location
            }
        }
        if let locales = written.locales {
            match.locales = locales.map(\.value)
            for locale in locales where fields[.matchLocale(locale.value)] == nil {
                fields[.matchLocale(locale.value)] = locale.location
            }
        }
        if let environments = written.environments {
            var parsed: [Environment] = []
            for environment in environments {
                if let known = Environment(rawValue: environment.value) {
                    if !parsed.contains(known) { parsed.append(known) }
                    fields[.matchEnvironment(known)] = environment.location
                } else {
                    diagnostics.append(Self.unknownEnvironment(environment.value, at: environment.location))
                }
            }
            match.environments = parsed.sorted()
        }
        if let window = written.window {
            fields[.window] = window.location
            if let from = window.value.from {
                fields[.windowFrom] = from.location
                match.notBefore = timestamp(from)
            }
            if let until = window.value.until {
                fields[.windowUntil] = until.location
                match.notAfter = timestamp(until)
            }
        }
        if let customer = written.customer {
            fields[.customer] = customer.location
            match.customer = convert(customer, fields: &fields)
        }
        if let split = written.split {
            fields[.split] = split.location
            fields[.splitGroup] = split.value.group.location
            fields[.splitPercent] = split.value.percent.location
            if let control = split.value.control { fields[.splitControl] = control.location }
            match.split = TrafficSplit(group: split.value.group.value, percent: split.value.percent.value,
                                       control: split.value.control?.value ?? false)
        }
        return match
    }

    /// The one response a rule gives; none, or the first, with an error, when it gives none or several.
    private mutating func convert(_ located: Located<RawResponse>, rule: String,
                                  fields: inout [FlowRule.Field: SourceLocation]) -> RuleResponse {
        switch located.value {
        case .none:
            return .none
        case .kinds(let kinds):
            var found: [(name: String, response: RuleResponse)] = []
            if let message = kinds.message {
                fields[.responseMessage] = message.location
                found.append(("message", .message(name: message.value)))
            }
            if let offer = kinds.promotionalOffer {
                fields[.responseMessage] = offer.value.message.location
                fields[.responseOfferIdentifier] = offer.value.offerIdentifier.location
                found.append(("promotionalOffer", .promotionalOffer(message: offer.value.message.value,
                                                                    offerIdentifier: offer.value.offerIdentifier.value)))
            }
            if let alternate = kinds.alternateProduct {
                fields[.responseMessage] = alternate.value.message.location
                fields[.responseProductId] = alternate.value.productId.location
                fields[.responseBillingPlanType] = alternate.value.billingPlanType?.location
                found.append(("alternateProduct", .alternateProduct(message: alternate.value.message.value,
                                                                    productId: alternate.value.productId.value,
                                                                    billingPlanType: alternate.value.billingPlanType.map {
                                                                        BillingPlanType(rawValue: $0.value)
                                                                    })))
            }
            if let commerce = kinds.advancedCommerce {
                found.append(("advancedCommerce", convert(commerce, fields: &fields)))
            }
            if found.count == 1 {
                return found[0].response
            } else if found.isEmpty {
                diagnostics.append(.error("invalid-response", at: located.location,
                                          "rule '\(rule)' has an empty response",
                                          hint: "write one of message, alternateProduct, promotionalOffer or advancedCommerce, or 'response: none' to let Apple show the default message"))
                return .none
            } else {
                diagnostics.append(.error("invalid-response", at: located.location,
                                          "rule '\(rule)' answers with both \(found.map(\.name).joined(separator: " and "))",
                                          hint: "a rule answers with exactly one response; split it into separate rules"))
                return found[0].response
            }
        }
    }

    /// `response.advancedCommerce` as written, every attribute's location kept; the values are checked
    /// by the flow validation, which also knows the App's products.
    private func convert(_ located: Located<RawAdvancedCommerce>, fields: inout [FlowRule.Field: SourceLocation]) -> RuleResponse {
        let raw = located.value
        fields[.responseAdvancedCommerce] = located.location
        fields[.responseMessage] = raw.message.location
        let attributes: [(String, SourceLocation)] = [
            ("sku", raw.sku.location), ("currentSku", raw.currentSku.location), ("displayName", raw.displayName.location),
            ("description", raw.description.location), ("price", raw.price.location), ("reason", raw.reason.location),
            ("effective", raw.effective.location), ("retainBillingCycle", raw.retainBillingCycle.location),
        ]
        for (name, location) in attributes { fields[.advancedCommerceAttribute(name)] = location }
        var offer: AdvancedCommerceOffer?
        if let written = raw.offer {
            fields[.advancedCommerceAttribute("offer")] = written.location
            fields[.advancedCommerceAttribute("offer.period")] = written.value.period.location
            fields[.advancedCommerceAttribute("offer.periodCount")] = written.value.periodCount.location
            fields[.advancedCommerceAttribute("offer.price")] = written.value.price.location
            fields[.advancedCommerceAttribute("offer.reason")] = written.value.reason.location
            offer = AdvancedCommerceOffer(period: written.value.period.value, periodCount: written.value.periodCount.value,
                                          price: written.value.price.value, reason: written.value.reason.value)
        }
        let change = AdvancedCommerceChange(
            sku: raw.sku.value, currentSku: raw.currentSku.value, displayName: raw.displayName.value,
            description: raw.description.value, price: raw.price.value, reason: raw.reason.value,
            effective: raw.effective.value, retainBillingCycle: raw.retainBillingCycle.value, offer: offer)
        return .advancedCommerce(message: raw.message.value, change: change)
    }

    /// `match.customer`, each value checked where it was written: storefronts Apple can name, periods
    /// like `30d` or `6m`, tenures that can exist, and the states Apple signs.
    private mutating func convert(_ located: Located<RawCustomer>, fields: inout [FlowRule.Field: SourceLocation]) -> CustomerConditions {
        let raw = located.value
        var conditions = CustomerConditions()
        if let storefronts = raw.storefronts {
            fields[.customerAttribute("storefronts")] = storefronts.first?.location ?? located.location
            var codes: [String] = []
            for storefront in storefronts {
                fields[.customerStorefront(storefront.value)] = storefront.location
                if Storefronts.isKnown(storefront.value) {
                    if !codes.contains(storefront.value) { codes.append(storefront.value) }
                } else {
                    diagnostics.append(Self.unknownStorefront(storefront.value, at: storefront.location))
                }
            }
            if storefronts.isEmpty {
                diagnostics.append(.error("empty-condition", at: located.location, "storefronts is empty, so no customer would match",
                                          hint: "name at least one storefront, like [USA, CAN], or remove storefronts"))
            }
            conditions.storefronts = codes.sorted()
        }
        if let tenure = raw.tenure {
            (conditions.tenureAtLeast, conditions.tenureBelow) = convert(tenure, fields: &fields)
        }
        if let offers = raw.offers {
            (conditions.offerRedeemedWithin, conditions.noOfferRedeemedWithin, conditions.offerKinds) = convert(offers, fields: &fields)
        }
        conditions.billing = raw.billing.map { states($0, what: "billing state", field: "billing", fields: &fields) }
        conditions.priceIncrease = raw.priceIncrease.map { states($0, what: "price increase state", field: "priceIncrease", fields: &fields) }
        conditions.ownership = raw.ownership.map { states($0, what: "ownership", field: "ownership", fields: &fields) }
        if let unknown = raw.unknown {
            fields[.customerAttribute("unknown")] = unknown.location
            switch unknown.value {
            case "skip": conditions.unknownMatches = nil
            case "match": conditions.unknownMatches = true
            default: diagnostics.append(Self.unknownValue(unknown, what: "unknown", allowed: ["skip", "match"]))
            }
        }
        if raw.storefronts == nil && raw.tenure == nil && raw.offers == nil && raw.billing == nil && raw.priceIncrease == nil && raw.ownership == nil {
            diagnostics.append(.error("empty-condition", at: located.location, "match.customer has no condition",
                                      hint: "write storefronts, tenure, offers, billing, priceIncrease or ownership, or remove customer"))
        }
        return conditions
    }

    /// `tenure: {atLeast, below}`: periods a subscription can have, leaving someone between them.
    private mutating func convert(_ tenure: Located<RawTenure>, fields: inout [FlowRule.Field: SourceLocation]) -> (CustomerPeriod?, CustomerPeriod?) {
        var conditions = CustomerConditions()
        fields[.customerAttribute("tenure")] = tenure.location
        if let atLeast = tenure.value.atLeast {
            fields[.customerAttribute("tenure.atLeast")] = atLeast.location
            conditions.tenureAtLeast = period(atLeast)
        }
        if let below = tenure.value.below {
            fields[.customerAttribute("tenure.below")] = below.location
            conditions.tenureBelow = period(below)
        }
        if tenure.value.atLeast == nil && tenure.value.below == nil {
            diagnostics.append(.error("empty-condition", at: tenure.location, "tenure names no bound",
                                      hint: "write atLeast, below or both, like {atLeast: 30d, below: 12m}"))
        }
        for (bound, value) in [("atLeast", conditions.tenureAtLeast), ("below", conditions.tenureBelow)] {
            guard let value, value.approximateDays > Self.longestTenureDays else { continue }
            diagnostics.append(.error("impossible-tenure", at: fields[.customerAttribute("tenure.\(bound)")] ?? tenure.location,
                                      "tenure \(bound) \(value) is longer than any subscription can be (the App Store opened in July 2008)",
                                      hint: "write a tenure of at most 18 years, like 24m"))
        }
        if let atLeast = conditions.tenureAtLeast, let below = conditions.tenureBelow, !(atLeast < below) {
            diagnostics.append(.error("impossible-tenure", at: tenure.location,
                                      "tenure atLeast \(atLeast) and below \(below) leave no customer",
                                      hint: "atLeast must be shorter than below"))
        }
        return (conditions.tenureAtLeast, conditions.tenureBelow)
    }

    /// `offers: {redeemedWithin, notRedeemedWithin, types}`.
    private mutating func convert(_ offers: Located<RawOffers>,
                                  fields: inout [FlowRule.Field: SourceLocation]) -> (CustomerPeriod?, CustomerPeriod?, [OfferKind]?) {
        var conditions = CustomerConditions()
        fields[.customerAttribute("offers")] = offers.location
        if let within = offers.value.redeemedWithin {
            fields[.customerAttribute("offers.redeemedWithin")] = within.location
            conditions.offerRedeemedWithin = period(within)
        }
        if let within = offers.value.notRedeemedWithin {
            fields[.customerAttribute("offers.notRedeemedWithin")] = within.location
            conditions.noOfferRedeemedWithin = period(within)
        }
        if offers.value.redeemedWithin == nil && offers.value.notRedeemedWithin == nil {
            diagnostics.append(.error("empty-condition", at: offers.location, "offers names no period",
                                      hint: "write redeemedWithin or notRedeemedWithin, like {notRedeemedWithin: 90d}"))
        }
        if let types = offers.value.types {
            var kinds: [OfferKind] = []
            for type in types {
                if let kind = OfferKind(name: type.value) {
                    if !kinds.contains(kind) { kinds.append(kind) }
                } else {
                    diagnostics.append(Self.unknownValue(type, what: "offer type", allowed: OfferKind.allCases.map(\.name)))
                }
            }
            conditions.offerKinds = kinds.sorted()
        }
        return (conditions.offerRedeemedWithin, conditions.noOfferRedeemedWithin, conditions.offerKinds)
    }

    /// About 18 years: nobody can have been subscribed longer than the App Store has sold subscriptions.
    static let longestTenureDays = 18.0 * 365.25

    private mutating func period(_ text: Located<String>) -> CustomerPeriod? {
        guard let period = CustomerPeriod(text: text.value) else {
            diagnostics.append(.error("invalid-period", at: text.location, "'\(Diagnostic.visible(text.value))' is not a period",
                                      hint: "write a whole number of days or months, like 30d or 6m"))
            return nil
        }
        return period
    }

    private mutating func states<State: RawRepresentable & CaseIterable & Equatable>(
        _ written: [Located<String>], what: String, field: String, fields: inout [FlowRule.Field: SourceLocation]
    ) -> [State] where State.RawValue == String {
        fields[.customerAttribute(field)] = written.first?.location
        var found: [State] = []
        for value in written {
            if let state = State(rawValue: value.value) {
                if !found.contains(state) { found.append(state) }
            } else {
                diagnostics.append(Self.unknownValue(value, what: what, allowed: State.allCases.map(\.rawValue)))
            }
        }
        // In the order the type declares its states, so reordering a list changes nothing.
        return State.allCases.filter(found.contains)
    }

    static func unknownValue(_ value: Located<String>, what: String, allowed: [String]) -> Diagnostic {
        let suggestion = NearMiss.best(value.value, in: allowed, maxDistance: 3)
        return .error("unknown-value", at: value.location, "unknown \(what) '\(Diagnostic.visible(value.value))'",
                      hint: (suggestion.map { "did you mean '\($0)'? " } ?? "") + "write one of " + allowed.joined(separator: ", "))
    }

    static func unknownStorefront(_ code: String, at location: SourceLocation) -> Diagnostic {
        let upper = code.uppercased()
        let hint: String
        if upper != code, Storefronts.isKnown(upper) {
            hint = "storefronts are written in capitals, as Apple signs them: \(upper)"
        } else if let suggestion = NearMiss.best(upper, in: Storefronts.codes.sorted(), maxDistance: 1) {
            hint = "did you mean '\(suggestion)'? storefronts are ISO 3166-1 alpha-3 codes, like USA, DEU, JPN"
        } else {
            hint = "storefronts are ISO 3166-1 alpha-3 codes, like USA, DEU, JPN (Apple's `storefront`)"
        }
        return .error("unknown-storefront", at: location, "'\(Diagnostic.visible(code))' is not a storefront", hint: hint)
    }

    private mutating func timestamp(_ text: Located<String>) -> Int64? {
        switch RFC3339.parse(text.value) {
        case .success(let milliseconds):
            return milliseconds
        case .failure(let error):
            diagnostics.append(.error("invalid-timestamp", at: text.location, error.message,
                                      hint: "write a date, a time and a zone, like 2026-03-01T00:00:00Z"))
            return nil
        }
    }
}
