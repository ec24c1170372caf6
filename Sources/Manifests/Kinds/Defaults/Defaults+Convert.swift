import Basics
import Foundation
import RetentionMessagingModels
import YAML

extension Loader {
    /// Expands `Defaults` documents into one assignment per (product, locale), sorted by product
    /// then locale. Products the App does not declare are reported here, where `*` is resolved.
    mutating func expandDefaults(_ documents: [RawDefaults], app: AppManifest) -> [DefaultAssignment] {
        let productIds = app.products.map(\.id)
        var assignments: [DefaultAssignment] = []
        for document in documents {
            for entry in document.defaults {
                var products: [(product: ProductManifest, location: SourceLocation)] = []
                switch entry.value.products {
                case .all(let location):
                    products = app.products.map { ($0, location) }
                case .list(let ids):
                    for id in ids {
                        guard let product = app.product(id.value) else {
                            diagnostics.append(ManifestValidator.unknownProduct(id.value, at: id.location, declared: productIds))
                            continue
                        }
                        products.append((product, id.location))
                    }
                }
                for (product, productLocation) in products {
                    let locales: [(String, SourceLocation)] = switch entry.value.locales {
                    // A misspelt code (en_US) is reported where the product declares it; `*` means
                    // the locale the product meant, so the same mistake is not reported at the `*` too.
                    case .all(let location): product.locales.map { (AppStoreLocales.canonical($0) ?? $0, location) }
                    case .list(let locales): locales.map { ($0.value, $0.location) }
                    }
                    for (locale, location) in locales {
                        var assignment = DefaultAssignment(productId: product.id, locale: locale,
                                                           message: entry.value.message.value, location: location)
                        assignment.fieldLocations = [.product: productLocation, .message: entry.value.message.location]
                        assignments.append(assignment)
                    }
                }
            }
        }
        return assignments.enumerated().sorted { lhs, rhs in
            let (l, r) = (lhs.element, rhs.element)
            if l.productId != r.productId { return l.productId < r.productId }
            if l.locale != r.locale { return l.locale < r.locale }
            return lhs.offset < rhs.offset
        }.map(\.element)
    }
}
