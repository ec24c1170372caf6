import Foundation
import RetentionMessagingModels
import StateLocations
import YAML

extension ValidationRun {
    mutating func checkApp() {
        let app = set.app
        let bundleIdOK = !app.bundleId.isEmpty && app.bundleId.unicodeScalars.allSatisfy {
            $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "." || $0 == "-")
        }
        if !bundleIdOK {
            report(.error("invalid-bundle-id", at: app.location(of: .bundleId), "bundleId '\(app.bundleId)' is not a bundle identifier",
                          hint: "write the app's bundle ID as in Xcode, e.g. com.example.app"))
        }
        if let appAppleId = app.appAppleId, appAppleId <= 0 {
            report(.error("invalid-app-apple-id", at: app.location(of: .appAppleId),
                          "appAppleId must be a positive number, found \(appAppleId)",
                          hint: "App Store Connect shows it as the app's Apple ID under App Information"))
        }
        if let namespace = app.identityNamespace, UUID(uuidString: namespace) == nil {
            report(.error("invalid-identity-namespace", at: app.location(of: .identityNamespace),
                          "identityNamespace '\(namespace)' is not a UUID",
                          hint: "write a UUID such as 6f1d2a4e-8c1b-4b7e-9a3f-2d5c7e9b1a04, or remove it to use retention-sync's fixed namespace"))
        }
        if app.environments.isEmpty {
            report(.error("no-environments", at: app.location(of: .environments), "the App declares no environments",
                          hint: "add 'environments:' with sandbox and/or production"))
        }
        for settings in app.environments {
            guard let url = settings.realtimeURL else { continue }
            let location = settings.location(of: .realtimeURL)
            if !url.hasPrefix("https://") || URL(string: url)?.host == nil {
                report(.error("invalid-realtime-url", at: location, "realtimeURL '\(url)' is not an https:// URL",
                              hint: "Apple calls the realtime endpoint over HTTPS only"))
            } else if RetentionLimits.length(of: url) > RetentionLimits.realtimeURLLength {
                report(.error("invalid-realtime-url", at: location,
                              "realtimeURL is \(RetentionLimits.length(of: url)) characters long; Apple allows at most \(RetentionLimits.realtimeURLLength)",
                              hint: "use a shorter path"))
            }
        }
        checkSharedStores(app)
        if app.products.isEmpty {
            report(.error("no-products", at: app.location(of: .bundleId), "the App declares no products",
                          hint: "add 'products:' with each subscription's product id and its locales"))
        }
        var firstProduct: [String: ProductManifest] = [:]
        for product in app.products {
            if let first = firstProduct[product.id] {
                report(.error("duplicate-product", at: product.location(of: .id), "product '\(product.id)' is declared twice",
                              hint: "the first declaration is at \(first.location(of: .id)); merge their locales"))
                continue
            }
            firstProduct[product.id] = product
            if let problem = ManifestValidator.productIdProblem(product.id) {
                report(.error("invalid-product-id", at: product.location(of: .id), problem,
                              hint: "write the product id exactly as App Store Connect shows it: letters, digits, '.', '_' and '-', at most \(ManifestValidator.productIdMaxLength) characters"))
            }
            if product.locales.isEmpty {
                report(.error("no-locales", at: product.location(of: .id), "product '\(product.id)' declares no locales",
                              hint: "list the App Store Connect locales its messages are written in, e.g. [en-US]"))
            }
            for locale in product.locales {
                checkLocale(locale, at: product.location(of: .locale(locale)), warnUnconfirmed: true)
            }
        }
    }

    /// Two environments sharing a document would take each other's published snapshot as their own;
    /// `StateLocation.sharedDocument` decides what counts as shared (a folder or prefix does not).
    private mutating func checkSharedStores(_ app: AppManifest) {
        var seen: [(settings: EnvironmentSettings, field: EnvironmentSettings.Field, location: StateLocation)] = []
        for settings in app.environments {
            var places: [(EnvironmentSettings.Field, StateLocation)] = []
            if let path = settings.snapshotPath { places.append((.snapshotPath, .file(path: path))) }
            if let store = settings.stateStore { places.append((.stateStore, store)) }
            for (field, location) in places {
                let earlier = seen.first {
                    StateLocation.sharedDocument(($0.settings.environment, $0.location), (settings.environment, location)) != nil
                }
                if let earlier {
                    report(.error("shared-store", at: settings.location(of: field),
                                  "\(settings.environment.rawValue) uses the same store as \(earlier.settings.environment.rawValue) (\(earlier.settings.location(of: earlier.field)))",
                                  hint: "give each environment its own document, e.g. .retention-sync/\(settings.environment.rawValue)-state.json, or one folder or s3:// prefix for both (each keeps <environment>.json in it); sharing one document would let a sandbox apply replace production's snapshot"))
                } else {
                    seen.append((settings, field, location))
                }
            }
        }
    }
}
