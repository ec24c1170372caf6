import YAML

extension ValidationRun {
    mutating func checkDefaults() {
        for assignment in set.defaults {
            let product = assignment.productId, locale = assignment.locale
            if let first = defaultPairs[product]?[locale] {
                report(.error("duplicate-default", at: assignment.location,
                              "product '\(product)' in \(locale) already has a default message ('\(first.message)' at \(first.location))",
                              hint: "each product and locale has one default; remove one of the entries"))
                continue
            }
            defaultPairs[product, default: [:]][locale] = assignment
            if checkLocale(locale, at: assignment.location), productLocales[product]?.contains(locale) == false {
                report(.error("undeclared-locale", at: assignment.location,
                              "product '\(product)' does not declare locale '\(locale)'",
                              hint: "add \(locale) to the product's locales in the App, or remove it here"))
            }
            usedMessages.insert(assignment.message)
            guard let message = messagesByName[assignment.message] else {
                if isWorthReporting(assignment.message) {
                    report(.error("unknown-message", at: assignment.location(of: "message"), "no message named '\(assignment.message)'",
                                  hint: NearMiss.hint(for: assignment.message, in: set.messages.map(\.name), noun: "message")))
                }
                continue
            }
            if let scope = message.product, scope != product {
                report(.error("message-product-scope", at: assignment.location(of: "product"),
                              "message '\(message.name)' is limited to product '\(scope)', but is the default for product '\(product)'",
                              hint: "use another message here, or remove 'product:' from '\(message.name)' (\(message.location))"))
            }
            if messageLocales[message.name]?.contains(locale) == false {
                report(.error("missing-localization", at: assignment.location,
                              "message '\(message.name)' has no \(locale) localization, but is the default for product '\(product)' in \(locale)",
                              hint: "add a \(locale) localization to '\(message.name)' (\(message.location))"))
            }
        }
    }
}
