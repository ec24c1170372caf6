import Basics
import Foundation
import RetentionMessagingModels
import YAML

extension ValidationRun {
    mutating func checkFlows() {
        var firstByName: [String: FlowManifest] = [:]
        for (position, flow) in set.flows.enumerated() {
            if let first = firstByName[flow.name] {
                report(.error("duplicate-flow", at: flow.location, "flow name '\(flow.name)' is used twice",
                              hint: "the first is at \(first.location); merge them or rename one"))
            } else {
                firstByName[flow.name] = flow
            }
            checkName(flow.name, what: "flow", at: flow.location(of: .name))
            check(flow, at: position)
        }
    }

    /// Flow and rule names follow the rules message names do: they reach terminals and pull-request comments.
    private mutating func checkName(_ name: String, what: String, at location: SourceLocation) {
        guard !ManifestValidator.isValidName(name) else { return }
        report(.error("invalid-name", at: location,
                      "\(what) name '\(Diagnostic.visible(name))' must be lowercase letters, digits and hyphens, not starting with a hyphen",
                      hint: "try '\(ManifestValidator.suggestedName(name))'"))
    }

    private mutating func check(_ flow: FlowManifest, at position: Int) {
        let knownLocales = Set(productLocales.values.flatMap { $0 })
        for (from, to) in flow.localeFallbacks.sorted(by: { $0.key < $1.key }) {
            let keyLocation = flow.location(of: .fallbackKey(from))
            if !AppStoreLocales.isWellFormedTag(from) {
                let hint = from.contains("_") ? "use \(from.replacingOccurrences(of: "_", with: "-"))" : "write a locale like de-AT"
                report(.error("invalid-locale", at: keyLocation, "'\(from)' is not a locale code", hint: hint))
            }
            let valueLocation = flow.location(of: .fallbackTarget(from))
            if checkLocale(to, at: valueLocation), !knownLocales.contains(to) {
                report(.error("undeclared-locale", at: valueLocation, "locale fallback '\(from)' → '\(to)' leads to a locale no product declares",
                              hint: knownLocales.isEmpty ? "declare locales for the App's products"
                                : "fall back to one of \(knownLocales.sorted().joined(separator: ", "))"))
            }
        }

        var firstRule: [String: FlowRule] = [:]
        var unconditional: FlowRule?
        var splitTotals: [String: Double] = [:]
        var splitControls: [String: String] = [:]
        var splitCustomers: [String: FlowRule] = [:]
        for (index, rule) in flow.rules.enumerated() {
            if let first = firstRule[rule.name] {
                report(.error("duplicate-rule", at: rule.location(of: .name), "rule name '\(rule.name)' is used twice in flow '\(flow.name)'",
                              hint: "the first is at \(first.location(of: .name)); rule names are unique within a flow"))
            } else {
                firstRule[rule.name] = rule
            }
            checkName(rule.name, what: "rule", at: rule.location(of: .name))
            if let unconditional {
                report(.warning("unreachable-rule", at: rule.location(of: .name),
                                "rule '\(rule.name)' can never match: rule '\(unconditional.name)' before it matches every request",
                                hint: "move it above '\(unconditional.name)', or give '\(unconditional.name)' a match"))
            }
            checkMatch(rule, in: flow)
            if let split = rule.match.split {
                let total = (splitTotals[split.group] ?? 0) + split.percent
                if (splitTotals[split.group] ?? 0) <= 100.000_001 && total > 100.000_001 {
                    report(.error("split-over-100", at: rule.location(of: .splitPercent),
                                  "traffic split group '\(split.group)' adds up to \(Self.percentText(total))% in flow '\(flow.name)'",
                                  hint: "the rules of one group share at most 100% of customers"))
                }
                splitTotals[split.group] = total
                if let first = splitCustomers[split.group] {
                    if first.match.customer != rule.match.customer {
                        let mine = rule.match.customer?.summary ?? "none"
                        let theirs = first.match.customer?.summary ?? "none"
                        report(.error("split-customer-conditions-differ", at: rule.location(of: rule.match.customer == nil ? .split : .customer),
                                      "arm '\(rule.name)' of split group '\(Diagnostic.visible(split.group))' has customer conditions (\(mine)) that differ from arm '\(first.name)' (\(theirs))",
                                      hint: "every arm of a group must ask the same of the customer, or the arms' shares split different populations; give them the same match.customer, or put the condition on a rule before the group"))
                    }
                } else {
                    splitCustomers[split.group] = rule
                }
                if split.control {
                    if let first = splitControls[split.group] {
                        report(.error("split-two-controls", at: rule.location(of: .splitControl),
                                      "traffic split group '\(split.group)' has a second control: rules '\(first)' and '\(rule.name)' both say control: true",
                                      hint: "mark one rule of the group as its control; results compares every other arm with it"))
                    } else {
                        splitControls[split.group] = rule.name
                    }
                }
            }
            let message = checkResponse(rule, in: flow)
            references.rules[position][index] = message.map { .message(set.messages[$0]) }
            if message == nil, let name = rule.response.messageName, self.position(of: name, in: MessageKind.self) == nil,
               let external = self.position(of: name, in: ExternalMessageKind.self) {
                references.rules[position][index] = .external(set.externalMessages[external])
                checkExternalIdentifiers(external, environments: rule.match.environments ?? Array(declaredEnvironments),
                                         use: "used by rule '\(rule.name)' of flow '\(flow.name)'", at: rule.location(of: .responseMessage))
            }
            checkCoverage(rule, in: flow, message: message.map { set.messages[$0] })
            if unconditional == nil && rule.match.conditions.isEmpty { unconditional = rule }
        }
        checkArmsDiffer(in: flow)
        checkGuardrails(flow, groups: Set(splitTotals.keys), controls: splitControls)
        checkSegments(flow, groups: Set(splitTotals.keys))
    }

    /// Each declared segment names a split group of this flow and a breakdown `results --by` knows
    /// for customers, once per group.
    private mutating func checkSegments(_ flow: FlowManifest, groups: Set<String>) {
        var seen: [String: FlowSegment] = [:]
        for segment in flow.segments {
            let group = Diagnostic.visible(segment.group)
            if !groups.contains(segment.group) {
                let near = groups.sorted().map { "'\(Diagnostic.visible($0))'" }.joined(separator: ", ")
                report(.error("segment-unknown-group", at: segment.groupLocation, "segment for split group '\(group)': flow '\(flow.name)' has no such group",
                              hint: groups.isEmpty ? "a segment declares how a split group (match.split) of the same flow is judged" : "name one of \(near)"))
            }
            guard FlowSegment.breakdowns.contains(segment.by) else {
                let suggestion = NearMiss.best(segment.by, in: FlowSegment.breakdowns, maxDistance: 3)
                report(.error("invalid-segment", at: segment.byLocation, "segment by '\(Diagnostic.visible(segment.by))' is not a breakdown results knows",
                              hint: (suggestion.map { "did you mean '\($0)'? " } ?? "") + "write one of " + FlowSegment.breakdowns.joined(separator: ", ")))
                continue
            }
            let key = segment.group + "\u{0}" + segment.by
            if let first = seen[key] {
                report(.error("duplicate-segment", at: segment.location, "split group '\(group)' declares segment by \(segment.by) twice",
                              hint: "keep one; the first is at \(first.location)"))
            } else {
                seen[key] = segment
            }
        }
    }

    /// Each guardrail names a group of this flow that has a control, once per metric, with a drop that is a number of points (0–100) or
    /// of currency units (0 or more).
    private mutating func checkGuardrails(_ flow: FlowManifest, groups: Set<String>, controls: [String: String]) {
        var seen: [String: FlowGuardrail] = [:]
        for guardrail in flow.guardrails {
            let group = Diagnostic.visible(guardrail.group)
            guard groups.contains(guardrail.group) else {
                let near = groups.sorted().map { "'\(Diagnostic.visible($0))'" }.joined(separator: ", ")
                report(.error("guardrail-unknown-group", at: guardrail.groupLocation, "guardrail for split group '\(group)': flow '\(flow.name)' has no such group",
                              hint: groups.isEmpty ? "a guardrail limits the arms of a split group (match.split) in the same flow" : "name one of \(near)"))
                continue
            }
            if controls[guardrail.group] == nil {
                report(.error("guardrail-needs-control", at: guardrail.groupLocation,
                              "guardrail for split group '\(group)': the group has no control to compare its arms with",
                              hint: "mark the group's baseline rule with control: true in its split"))
            }
            let limit = guardrail.metric == .paid ? 0.0...1_000_000 : 0.0...100
            if !guardrail.maxDrop.isFinite || !limit.contains(guardrail.maxDrop) {
                report(.error("invalid-guardrail", at: guardrail.maxDropLocation,
                              "guardrail maxDrop \(guardrail.maxDrop) is outside \(guardrail.metric == .paid ? "0 or more currency units" : "0 to 100 points")",
                              hint: "0 stops an arm as soon as it is distinguishably worse than the control at all"))
            }
            let key = guardrail.group + "\u{0}" + guardrail.metric.rawValue
            if let first = seen[key] {
                report(.error("duplicate-guardrail", at: guardrail.location,
                              "split group '\(group)' has two \(guardrail.metric.rawValue) guardrails", hint: "keep one; the first is at \(first.location)"))
            } else {
                seen[key] = guardrail
            }
        }
    }

    /// What one arm shows a customer of one product in one locale: the response's kind and what it
    /// offers, and the text and pictures of the localization shown — Apple's default message for a
    /// `none` arm. Two arms with equal content there compare nothing.
    private struct ShownContent: Hashable {
        var offer: String
        var text: [String]
    }

    private func shown(_ rule: FlowRule, product: String, locale: String) -> (content: ShownContent, words: String)? {
        let offer: String, messageName: String, words: String
        switch rule.response {
        case .none:
            guard let assignment = defaultPairs[product]?[locale] else { return nil }
            (offer, messageName) = ("message", assignment.message)
            words = "no answer: Apple shows the default '\(Diagnostic.visible(assignment.message))'"
        case .message(let name):
            (offer, messageName, words) = ("message", name, "message '\(Diagnostic.visible(name))'")
        case .alternateProduct(let message, let productId, let plan):
            (offer, messageName) = ("alternate \(productId) \(plan?.rawValue ?? "")", message)
            words = "alternate product \(Diagnostic.visible(productId)) with message '\(Diagnostic.visible(message))'"
        case .promotionalOffer(let message, let offerIdentifier):
            (offer, messageName) = ("offer \(offerIdentifier)", message)
            words = "promotional offer \(Diagnostic.visible(offerIdentifier)) with message '\(Diagnostic.visible(message))'"
        case .advancedCommerce(let message, let change):
            (offer, messageName) = ("advancedCommerce \(change)", message)
            words = "Advanced Commerce change to \(Diagnostic.visible(change.sku)) with message '\(Diagnostic.visible(message))'"
        }
        guard let message = messagesByName[messageName],
              let localization = message.localizations.first(where: { $0.locale == locale }) else { return nil }
        var text = [message.headerPosition.map { "\($0)" } ?? "", localization.header, localization.body,
                    localization.image?.name ?? "", localization.image?.altText ?? ""]
        for bullet in localization.bulletPoints { text += [bullet.text, bullet.image, bullet.altText] }
        return (ShownContent(offer: offer, text: text), words)
    }

    /// Warns when two arms of one split group show the same content to the same product and locale
    /// (a `none` holdout whose default is the control's message, or two arms answering alike):
    /// their comparison there measures nothing. Named per pair of arms, with the products and locales.
    private mutating func checkArmsDiffer(in flow: FlowManifest) {
        var groups: [String: [FlowRule]] = [:]
        var order: [String] = []
        for rule in flow.rules {
            guard let group = rule.match.split?.group, !group.isEmpty else { continue }
            if groups[group] == nil { order.append(group) }
            groups[group, default: []].append(rule)
        }
        for group in order {
            let arms = groups[group] ?? []
            for (later, arm) in arms.enumerated() {
                for earlier in arms[..<later] {
                    var same: [(product: String, locales: [String])] = []
                    var wording: (String, String)?
                    let products = set.app.products.map(\.id).filter { product in
                        (arm.match.products ?? [product]).contains(product) && (earlier.match.products ?? [product]).contains(product)
                    }
                    for product in products {
                        let known = productLocales[product] ?? []
                        let locales = (productsById[product]?.locales ?? []).filter { locale in
                            known.contains(locale) && (arm.match.locales ?? [locale]).contains(locale)
                                && (earlier.match.locales ?? [locale]).contains(locale)
                        }
                        var equal: [String] = []
                        for locale in locales {
                            guard let mine = shown(arm, product: product, locale: locale),
                                  let theirs = shown(earlier, product: product, locale: locale),
                                  mine.content == theirs.content else { continue }
                            equal.append(locale)
                            wording = wording ?? (theirs.words, mine.words)
                        }
                        if !equal.isEmpty { same.append((product, equal.sorted())) }
                    }
                    guard let (first, second) = wording else { continue }
                    let places = same.map { "\(Diagnostic.visible($0.product)) in \($0.locales.joined(separator: ", "))" }.joined(separator: "; ")
                    report(.warning("split-arms-identical", at: arm.location(of: .responseMessage),
                                    "split group '\(Diagnostic.visible(group))': arms '\(earlier.name)' (\(first)) and '\(arm.name)' (\(second)) show the same content for \(places), so comparing them there measures nothing",
                                    hint: arm.response == .none || earlier.response == .none
                                        ? "a holdout (response: none) shows the retention message App Store Connect has for the product, when one is configured there, and otherwise this default message — the other arm's: give the other arm another message, or set a different default for these products and locales"
                                        : "give one of the arms another message"))
                }
            }
        }
    }

    /// A percentage as written in messages; any Double the YAML held, `.inf` and `1e300` included.
    static func percentText(_ value: Double) -> String {
        if let whole = Int(exactly: value) { return String(whole) }
        return String(format: value.magnitude < 1e9 ? "%.2f" : "%g", value)
    }

    private mutating func checkMatch(_ rule: FlowRule, in flow: FlowManifest) {
        let match = rule.match
        var matched: [ProductManifest] = []
        for product in match.products ?? [] {
            let location = rule.location(of: .matchProduct(product))
            if let declared = productsById[product] {
                matched.append(declared)
            } else {
                report(ManifestValidator.unknownProduct(product, at: location, declared: productIds))
            }
        }
        if match.products == nil { matched = set.app.products }
        let matchedLocales = Set(matched.flatMap { declaredLocales[$0.id] ?? [] })
        for locale in match.locales ?? [] {
            let location = rule.location(of: .matchLocale(locale))
            if checkLocale(locale, at: location), !matched.isEmpty, !matchedLocales.contains(locale) {
                report(.error("undeclared-locale", at: location,
                              "locale '\(locale)' is not declared by any product rule '\(rule.name)' matches",
                              hint: "add \(locale) to the products' locales in the App, or remove it here"))
            }
        }
        for environment in match.environments ?? [] where !declaredEnvironments.contains(environment) {
            report(.warning("undeclared-environment", at: rule.location(of: .matchEnvironment(environment)),
                            "rule '\(rule.name)' matches \(environment.rawValue), which the App does not declare, so it never runs there",
                            hint: "add \(environment.rawValue) to the App's environments, or remove it here"))
        }
        if let from = match.notBefore, let until = match.notAfter, from >= until {
            // Timestamps count whole milliseconds, so a window shorter than one is empty, not reversed.
            report(.error("invalid-window", at: rule.location(of: .window),
                          from == until ? "the window of rule '\(rule.name)' is empty: 'from' and 'until' are less than a millisecond apart"
                            : "the window of rule '\(rule.name)' ends before it starts",
                          hint: "'from' (inclusive) must be earlier than 'until' (exclusive)"))
        }
        if let split = match.split {
            let hundredths = split.percent * 100
            if !(split.percent > 0 && split.percent <= 100) {
                report(.error("invalid-split-percent", at: rule.location(of: .splitPercent),
                              "split percent \(Self.percentText(split.percent)) is outside 0 < percent ≤ 100",
                              hint: "write the share of customers this rule takes, e.g. 50"))
            } else if abs(hundredths - hundredths.rounded()) > 1e-6 {
                report(.error("invalid-split-percent", at: rule.location(of: .splitPercent),
                              "split percent \(split.percent) has more than two decimals",
                              hint: "customers are split into 10,000 buckets, so 0.01% is the finest share"))
            }
            if split.group.isEmpty {
                report(.error("empty-text", at: rule.location(of: .splitGroup), "split group is empty",
                              hint: "name the experiment, e.g. group: offer-test"))
            }
        }
    }

    /// Checks a rule's response; returns the position of the message it names, when that resolves.
    private mutating func checkResponse(_ rule: FlowRule, in flow: FlowManifest) -> Int? {
        let location = rule.location(of: .responseMessage)
        var offerKind: String?
        // "an alternateProduct response", "a promotionalOffer response", "an advancedCommerce response"
        switch rule.response {
        case .none, .message:
            break
        case .alternateProduct(_, let productId, let billingPlanType):
            offerKind = "an alternateProduct"
            if productsById[productId] == nil {
                report(ManifestValidator.unknownProduct(productId, at: rule.location(of: .responseProductId), declared: productIds))
            }
            if let billingPlanType, billingPlanType != .billedUpfront, billingPlanType != .monthly {
                report(.error("unknown-billing-plan-type", at: rule.location(of: .responseBillingPlanType),
                              "unknown billingPlanType '\(billingPlanType.rawValue)'", hint: "write BILLED_UPFRONT or MONTHLY"))
            }
        case .promotionalOffer(_, let offerIdentifier):
            offerKind = "a promotionalOffer"
            if offerIdentifier.isEmpty {
                report(.error("empty-text", at: rule.location(of: .responseOfferIdentifier), "offerIdentifier is empty",
                              hint: "write the promotional offer's identifier from App Store Connect"))
            }
        case .advancedCommerce(_, let change):
            offerKind = "an advancedCommerce"
            checkAdvancedCommerce(rule, change: change)
        }
        guard let name = rule.response.messageName else { return nil }
        usedMessages.insert(name)
        guard let position = self.position(of: name, in: MessageKind.self) else {
            // An external message's content is unknown: only its identifiers are checked (by the caller).
            if self.position(of: name, in: ExternalMessageKind.self) != nil { return nil }
            reportUnresolved("unknown-message", noun: "message", name, at: location,
                             candidates: set.messages.map(\.name) + set.externalMessages.map(\.name))
            return nil
        }
        let message = set.messages[position]
        if let scope = message.product {
            // Undeclared products are reported on their own.
            let products = (rule.match.products ?? []).filter { productsById[$0] != nil }
            if rule.match.products == nil || products.contains(where: { $0 != scope }) {
                let other = rule.match.products == nil ? "every product" : "product '\(products.first { $0 != scope }!)'"
                report(.error("message-product-scope", at: location,
                              "message '\(name)' is limited to product '\(scope)', but rule '\(rule.name)' matches \(other)",
                              hint: "add 'products: [\(scope)]' to the rule's match, or remove 'product:' from '\(name)' (\(message.location))"))
            }
        }
        if let offerKind, offerChecked.insert(name).inserted {
            for localization in message.localizations {
                if let image = localization.image {
                    report(.error("offer-message-has-image", at: image.location,
                                  "message '\(name)' is used in \(offerKind) response (flow '\(flow.name)', rule '\(rule.name)'), so its \(localization.locale) localization cannot have an image",
                                  hint: "Apple shows offer messages without images; remove the image or use a separate text message"))
                }
                if !localization.bulletPoints.isEmpty {
                    report(.error("offer-message-has-bullet-points", at: localization.location(of: .bulletPoints),
                                  "message '\(name)' is used in \(offerKind) response (flow '\(flow.name)', rule '\(rule.name)'), so its \(localization.locale) localization cannot have bullet points",
                                  hint: "Apple shows offer messages without bullet points; remove them or use a separate text message"))
                }
            }
        }
        return position
    }

    /// Every (product, locale) a rule serves needs a localization of its message and a default
    /// message: Apple requires one wherever realtime messages are served.
    private mutating func checkCoverage(_ rule: FlowRule, in flow: FlowManifest, message: MessageManifest?) {
        let environments = Set(rule.match.environments ?? Array(declaredEnvironments))
        guard !environments.isDisjoint(with: declaredEnvironments) else { return }
        let products = rule.match.products.map { $0.compactMap { productsById[$0] } } ?? set.app.products
        var missingLocalizations: [String] = []
        for product in products {
            let known = productLocales[product.id] ?? []
            let locales = rule.match.locales.map { $0.filter(known.contains) } ?? product.locales.filter(known.contains)
            var missingDefaults: [String] = []
            for locale in locales {
                if let message, messageLocales[message.name]?.contains(locale) == false, !missingLocalizations.contains(locale) {
                    missingLocalizations.append(locale)
                }
                if defaultPairs[product.id]?[locale] == nil, reportedMissingDefaults.insert("\(product.id)\u{0}\(locale)").inserted {
                    missingDefaults.append(locale)
                }
            }
            if !missingDefaults.isEmpty && !broken.kinds.contains(DefaultsKind.name) && !broken.unknownKind {
                report(.error("missing-default", at: rule.location(of: .name),
                              "product '\(product.id)' has no default message for \(missingDefaults.joined(separator: ", ")), which rule '\(rule.name)' of flow '\(flow.name)' serves",
                              hint: "Apple requires a default message for every product and locale served by realtime messages; add it to a Defaults document"))
            }
        }
        if let message, !missingLocalizations.isEmpty {
            report(.error("missing-localization", at: rule.location(of: .responseMessage),
                          "message '\(message.name)' has no localization for \(missingLocalizations.sorted().joined(separator: ", ")), which rule '\(rule.name)' serves",
                          hint: "add the localization to '\(message.name)' (\(message.location)), or limit the rule with match.locales"))
        }
    }
}
