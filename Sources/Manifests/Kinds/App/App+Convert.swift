import Basics
import Foundation
import RetentionMessagingModels
import StateLocations
import YAML

// An `App` document into the model: environments checked and sorted, store paths resolved inside the
// manifest directory, products sorted, and every value's place kept in `fieldLocations`.

extension Loader {
    mutating func convert(_ raw: RawApp, node: YAMLNode) -> AppManifest {
        var fields: [AppManifest.Field: SourceLocation] = [.bundleId: raw.bundleId.location]
        fields[.appAppleId] = raw.appAppleId?.location
        fields[.identityNamespace] = raw.identityNamespace?.location
        let environmentKeys = Self.keyLocations(node, "environments")
        fields[.environments] = node["environments"]?.location

        var environments: [EnvironmentSettings] = []
        for (key, settings) in raw.environments.sorted(by: { $0.key < $1.key }) {
            let keyLocation = environmentKeys[key] ?? settings.location
            guard let environment = Environment(rawValue: key) else {
                diagnostics.append(Self.unknownEnvironment(key, at: keyLocation))
                continue
            }
            let snapshotPath = settings.value.snapshotPath.flatMap { storePath($0, what: "snapshotPath", environment: key) }
            var stateStore: StateLocation?
            if let store = settings.value.stateStore {
                stateStore = stateStoreLocation(store, environment: key)
            }
            var settingsFields: [EnvironmentSettings.Field: SourceLocation] = [:]
            settingsFields[.realtimeURL] = settings.value.realtimeURL?.location
            settingsFields[.snapshotPath] = settings.value.snapshotPath?.location
            settingsFields[.stateStore] = settings.value.stateStore?.location
            var converted = EnvironmentSettings(environment: environment, realtimeURL: settings.value.realtimeURL?.value,
                                                snapshotPath: snapshotPath, location: keyLocation)
            converted.stateStore = stateStore
            converted.fieldLocations = settingsFields
            environments.append(converted)
        }
        environments.sort { $0.environment < $1.environment }

        var products: [ProductManifest] = []
        for item in raw.products {
            var localeFields: [ProductManifest.Field: SourceLocation] = [.id: item.value.id.location]
            var locales: [String] = []
            for locale in item.value.locales {
                if let first = localeFields[.locale(locale.value)] {
                    diagnostics.append(.warning("duplicate-locale", at: locale.location,
                                                "locale '\(locale.value)' is listed twice for product '\(item.value.id.value)'",
                                                hint: "remove one; the first is at \(first)"))
                    continue
                }
                localeFields[.locale(locale.value)] = locale.location
                locales.append(locale.value)
            }
            var product = ProductManifest(id: item.value.id.value, locales: locales.sorted(), location: item.location)
            product.fieldLocations = localeFields
            if let advancedCommerce = item.value.advancedCommerce {
                product.advancedCommerce = advancedCommerce.value
                product.fieldLocations[.advancedCommerce] = advancedCommerce.location
            }
            products.append(product)
        }
        products = products.enumerated().sorted { ($0.element.id, $0.offset) < ($1.element.id, $1.offset) }.map(\.element)

        var app = AppManifest(bundleId: raw.bundleId.value, appAppleId: raw.appAppleId?.value,
                              identityNamespace: raw.identityNamespace?.value.lowercased(),
                              environments: environments, products: products, location: node.location)
        app.fieldLocations = fields
        return app
    }

    /// A store path, resolved once (symlinks included); nil, with a diagnostic, unless it is a
    /// relative path that stays inside the manifest directory, where nothing else is overwritten.
    private mutating func storePath(_ path: Located<String>, what: String, environment: String) -> String? {
        if path.value.hasPrefix("/") || path.value.isEmpty {
            diagnostics.append(.error("invalid-snapshot-path", at: path.location,
                                      "\(what) '\(path.value)' must be a relative path",
                                      hint: "write it relative to the manifest directory, e.g. .retention-sync/\(environment)-\(what == "stateStore" ? "state" : "snapshot").json"))
            return nil
        }
        guard ManifestPaths.isInside(path.value, directory: directory), let resolved = ManifestPaths.resolve(path.value, in: directory) else {
            diagnostics.append(.error("path-outside-manifests", at: path.location,
                                      "\(what) '\(path.value)' resolves outside the manifest directory '\(displayPath)'",
                                      hint: "keep stores inside the manifest directory (e.g. .retention-sync/\(environment)-\(what == "stateStore" ? "state" : "snapshot").json), so an apply never writes elsewhere"))
            return nil
        }
        return resolved
    }
}
