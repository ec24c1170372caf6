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
        return flow
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
            if found.count == 1 {
                return found[0].response
            } else if found.isEmpty {
                diagnostics.append(.error("invalid-response", at: located.location,
                                          "rule '\(rule)' has an empty response",
                                          hint: "write one of message, alternateProduct or promotionalOffer, or 'response: none' to let Apple show the default message"))
                return .none
            } else {
                diagnostics.append(.error("invalid-response", at: located.location,
                                          "rule '\(rule)' answers with both \(found.map(\.name).joined(separator: " and "))",
                                          hint: "a rule answers with exactly one response; split it into separate rules"))
                return found[0].response
            }
        }
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
