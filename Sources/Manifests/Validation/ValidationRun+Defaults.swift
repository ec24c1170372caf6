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
            usedMessages.insert(assignment.message)
            guard let message = messagesByName[assignment.message] else {
                reportUnresolved("unknown-message", noun: "message", assignment.message, at: assignment.location(of: "message"),
                                 candidates: set.messages.map(\.name))
                continue
            }
            if declaredLocales[product]?.contains(locale) == true {
                // An invalid code the product declares is reported there, once.
                guard AppStoreLocales.isKnown(locale) else { continue }
            } else {
                if checkLocale(locale, at: assignment.location) {
                    report(.error("undeclared-locale", at: assignment.location,
                                  "product '\(product)' does not declare locale '\(locale)'",
                                  hint: "add \(locale) to the product's locales in the App, or remove it here"))
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
                              "message '\(message.name)' has no localization for \(locale), but is the default for product '\(product)' in \(locale)",
                              hint: "add '\(locale):' under the localizations of '\(message.name)' (\(message.location))"))
            }
        }
    }
}
