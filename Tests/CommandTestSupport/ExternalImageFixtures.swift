import Emulator
import Foundation

/// Two external images (a hero and an icon, each with its own identifier per environment) and the
/// manifests that show them: the external-image tests and the browser's drawing of them share these.
protocol ExternalImageFixtures {}

enum ExternalImages: ExternalImageFixtures {}

extension ExternalImageFixtures {
    static var sandboxHero: String { "5e4d3c2b-1a09-4f8e-9d7c-6b5a4e3d2c1b" }
    static var productionHero: String { "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d" }
    static var sandboxIcon: String { "1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f" }
    static var productionIcon: String { "2d3e4f5a-6b7c-4d8e-9f0a-1b2c3d4e5f6a" }
    static var stranger: String { "33333333-4444-4555-8666-777777777777" }
    static var pair: DefaultKey { DefaultKey(productId: "com.example.stillpoint.monthly", locale: "en-US") }

    /// One product, one locale, both environments with a state file each; `stay-calm` shows the
    /// vendor's hero picture and, as its one bullet point's icon, the vendor's icon; it is the default.
    static func writeManifests(_ harness: CommandHarness, images: String? = nil) throws {
        let files = [
            "app.yaml": """
            apiVersion: retention-sync/v1
            kind: App
            bundleId: com.example.stillpoint
            appAppleId: 6450012345
            environments:
              sandbox: { stateStore: .retention-sync/sandbox-state.json }
              production: { stateStore: .retention-sync/production-state.json }
            products:
              - id: com.example.stillpoint.monthly
                locales: [en-US]
            """,
            "vendor-images.yaml": images ?? """
            apiVersion: retention-sync/v1
            kind: ExternalImage
            name: vendor-hero
            identifiers:
              sandbox: \(sandboxHero)
              production: \(productionHero)
            ---
            apiVersion: retention-sync/v1
            kind: ExternalImage
            name: vendor-icon
            identifiers:
              sandbox: \(sandboxIcon)
              production: \(productionIcon)
            """,
            "messages.yaml": """
            apiVersion: retention-sync/v1
            kind: Message
            name: stay-calm
            localizations:
              en-US:
                header: Stay a little longer
                body: Ten minutes a day still counts.
                image: { name: vendor-hero, altText: The sun over the hills }
                bulletPoints:
                  - { text: Guided sessions, image: vendor-icon, altText: A breathing ring }
            """,
            "defaults.yaml": """
            apiVersion: retention-sync/v1
            kind: Defaults
            defaults:
              - products: "*"
                locales: "*"
                message: stay-calm
            """,
        ]
        try harness.writeManifests(files)
    }
}
