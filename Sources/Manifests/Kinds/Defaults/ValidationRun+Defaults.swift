import YAML

extension ValidationRun {
    /// The problems of the `Defaults` entries that are reported per entry, over every product it covers.
    struct DefaultProblems {
        var duplicates: [Grouped] = []
        var missing: [Grouped] = []
        var scope: [Grouped] = []
    }

    mutating func checkDefaults() {
        // `products: "*"` makes one entry cover several products: their problems are reported together.
        var problems = DefaultProblems()
        for (index, assignment) in set.defaults.enumerated() {
            checkDefault(assignment, at: index, problems: &problems)
        }
        reportGrouped(problems)
    }

    /// Resolves one entry's message and checks its pair; what is reported per entry waits in `problems`.
    private mutating func checkDefault(_ assignment: DefaultAssignment, at index: Int, problems: inout DefaultProblems) {
        let product = assignment.productId, locale = assignment.locale
        let position = self.position(of: assignment.message, in: MessageKind.self)
        let external = position == nil ? self.position(of: assignment.message, in: ExternalMessageKind.self) : nil
        if let external {
            references.defaults[index] = .external(external)
        }
        if let position {
            if let localization = set.messages[position].localizations.firstIndex(where: { $0.locale == locale }) {
                references.defaults[index] = .localization(ResolvedReferences.LocalizationPosition(message: position, localization: localization))
            } else {
                references.unresolved("message '\(assignment.message)' has no localization for \(locale), but is the default for product '\(product)' in \(locale)",
                                      at: assignment.location)
            }
        }
        if let first = defaultPairs[product]?[locale] {
            Grouped.add(product, to: &problems.duplicates, key: "\(assignment.location)|\(locale)|\(first.location)", first: (assignment, first))
            return
        }
        defaultPairs[product, default: [:]][locale] = assignment
        usedMessages.insert(assignment.message)
        if let external {
            let message = set.externalMessages[external]
            if message.isLocalized && message.localizations[locale] == nil {
                report(.error("missing-localization", at: assignment.location(of: .message),
                              "external message '\(message.name)' has no \(locale) localization, but is the default for product '\(product)' in \(locale)",
                              hint: "add \(locale) with its identifiers under its 'localizations:' (\(message.location)), or assign another message here"))
            } else if externalChecked.insert("default:\(assignment.message)" + (message.isLocalized ? ":\(locale)" : "")).inserted {
                // One identifier serves every locale, or this locale's: only its environments can be missing.
                warnExternalDefaultOutside(external, locale: locale, at: assignment.location(of: .message))
            }
            if declaredLocales[product]?.contains(locale) != true, checkLocale(locale, at: assignment.location) {
                report(.error("undeclared-locale", at: assignment.location,
                              "product '\(product)' does not declare locale '\(locale)'",
                              hint: "add \(locale) to the product's locales in the App, or remove it here"))
            }
            return
        }
        guard let position else {
            reportUnresolved("unknown-message", noun: "message", assignment.message, at: assignment.location(of: .message),
                             candidates: set.messages.map(\.name) + set.externalMessages.map(\.name))
            return
        }
        let message = set.messages[position]
        if declaredLocales[product]?.contains(locale) == true {
            // An invalid code the product declares is reported there, once.
            guard AppStoreLocales.isKnown(locale) else { return }
        } else {
            if checkLocale(locale, at: assignment.location) {
                report(.error("undeclared-locale", at: assignment.location,
                              "product '\(product)' does not declare locale '\(locale)'",
                              hint: "add \(locale) to the product's locales in the App, or remove it here"))
            }
            return
        }
        if let messageScope = message.product, messageScope != product {
            Grouped.add(product, to: &problems.scope, key: "\(assignment.location(of: .product))|\(message.name)", first: (assignment, assignment))
        }
        if messageLocales[message.name]?.contains(locale) == false {
            Grouped.add(product, to: &problems.missing, key: "\(assignment.location)|\(message.name)|\(locale)", first: (assignment, assignment))
        }
    }

    private mutating func reportGrouped(_ problems: DefaultProblems) {
        for group in problems.duplicates {
            let (assignment, first) = group.assignments
            report(.error("duplicate-default", at: assignment.location,
                          "\(Self.productList(group.products)) already \(group.products.count == 1 ? "has" : "have") a default message for \(assignment.locale) ('\(first.message)' at \(first.location))",
                          hint: "each product and locale has one default; remove one of the entries"))
        }
        for group in problems.scope {
            let assignment = group.assignments.0
            guard let message = messagesByName[assignment.message], let messageScope = message.product else { continue }
            report(.error("message-product-scope", at: assignment.location(of: .product),
                          "message '\(message.name)' is limited to product '\(messageScope)', but is the default for \(Self.productList(group.products))",
                          hint: "use another message here, or remove 'product:' from '\(message.name)' (\(message.location))"))
        }
        for group in problems.missing {
            let assignment = group.assignments.0
            guard let message = messagesByName[assignment.message] else { continue }
            report(.error("missing-localization", at: assignment.location,
                          "message '\(message.name)' has no localization for \(assignment.locale), but is the default for \(Self.productList(group.products)) in \(assignment.locale)",
                          hint: "add '\(assignment.locale):' under the localizations of '\(message.name)' (\(message.location))"))
        }
    }

    static func productList(_ products: [String]) -> String {
        products.count == 1 ? "product '\(products[0])'" : "products " + products.map { "'\($0)'" }.joined(separator: ", ")
    }
}

/// Problems of one `Defaults` entry, gathered over the products it covers.
struct Grouped {
    var key: String
    var products: [String]
    var assignments: (DefaultAssignment, DefaultAssignment)

    static func add(_ product: String, to groups: inout [Grouped], key: String, first: (DefaultAssignment, DefaultAssignment)) {
        if let index = groups.firstIndex(where: { $0.key == key }) {
            groups[index].products.append(product)
        } else {
            groups.append(Grouped(key: key, products: [product], assignments: first))
        }
    }
}
