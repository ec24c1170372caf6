import Manifests

// The default kind's slice of the desired state: what `Identities.derive` asks of it.
extension DefaultResource {
    struct Derived {
        /// Sorted by product, then locale.
        var defaults: [DesiredDefault]
        /// Every pair the App declares plus every pair a default names, sorted: the pairs a plan reads.
        var declaredPairs: [ProductLocale]
    }

    /// The defaults, sorted, and the pairs a plan reads: those the App declares or a default names,
    /// less those whose default is an external message without an identifier here (left as they are).
    static func derive(_ derivation: Derivation, messages: MessageResource.Derived) -> Derived {
        var defaults: [DesiredDefault] = []
        var leftAlone = Set<ProductLocale>()
        for resolved in derivation.validated.defaults {
            let assignment = resolved.assignment
            let identifier: String
            switch resolved.assigns {
            case .localization(let message, let locale):
                guard let id = messages.localizedIds[message.name]?[locale] else { continue }
                identifier = id
            case .external(let message):
                guard let id = message.identifier(in: derivation.environment, locale: assignment.locale) else {
                    leftAlone.insert(ProductLocale(productId: assignment.productId, locale: assignment.locale))
                    continue
                }
                identifier = id
            }
            defaults.append(DesiredDefault(productId: assignment.productId, locale: assignment.locale,
                                           messageName: assignment.message, messageIdentifier: identifier))
        }
        defaults.sort { ($0.productId, $0.locale) < ($1.productId, $1.locale) }
        return Derived(defaults: defaults, declaredPairs: declaredPairs(derivation, defaults: defaults, leftAlone: leftAlone))
    }

    /// Every pair the app's products declare or a default names, but those left alone.
    private static func declaredPairs(_ derivation: Derivation, defaults: [DesiredDefault], leftAlone: Set<ProductLocale>) -> [ProductLocale] {
        var pairs = Set(derivation.validated.set.app.products.flatMap { product in
            product.locales.map { ProductLocale(productId: product.id, locale: $0) }
        })
        pairs.formUnion(defaults.map { ProductLocale(productId: $0.productId, locale: $0.locale) })
        pairs.subtract(leftAlone)
        return pairs.sorted()
    }
}
