import Basics
import Foundation
import Manifests
import Reconciler
import RetentionMessaging
import RetentionMessagingModels
import YAML

/// Manifests built in code: an app with two products in two locales, images, messages, defaults
/// and one flow with every response kind, a split and a time window.
enum Fixtures {
    static func at(_ file: String, _ line: Int = 1) -> SourceLocation { SourceLocation(file: "manifests/\(file)", line: line, column: 1) }

    static let bundleId = "com.example.app"
    static let heroPNG: [UInt8] = TestPNG.fullSize
    static let bulletPNG: [UInt8] = TestPNG.bulletPoint

    static func app(directory: URL, snapshot: Bool = true) -> AppManifest {
        AppManifest(
            bundleId: bundleId, appAppleId: 1234567890, identityNamespace: nil,
            environments: Environment.allCases.map {
                EnvironmentSettings(environment: $0, realtimeURL: "https://retention.example.com/\($0.rawValue)",
                                    snapshotPath: snapshot ? "snapshots/\($0.rawValue).json" : nil, location: at("app.yaml", 5))
            },
            products: [
                ProductManifest(id: "monthly", locales: ["de-DE", "en-US"], location: at("app.yaml", 10)),
                ProductManifest(id: "yearly", locales: ["de-DE", "en-US"], location: at("app.yaml", 12)),
            ],
            location: at("app.yaml"))
    }

    static func image(_ name: String, size: ImageSize, png: [UInt8]) -> ImageManifest {
        ImageManifest(name: name, file: "images/\(name).png", size: size, png: png,
                      sha256: "", location: at("images.yaml"))
    }

    static func localization(_ locale: String, header: String, body: String, image: String? = nil,
                             bullets: [String] = []) -> MessageLocalization {
        MessageLocalization(locale: locale, header: header, body: body,
                            image: image.map { ImageReference(name: $0, altText: "A picture", location: at("messages.yaml")) },
                            bulletPoints: bullets.map { BulletPoint(text: "Point", image: $0, altText: "Icon", location: at("messages.yaml")) },
                            location: at("messages.yaml", locale == "en-US" ? 10 : 20))
    }

    /// The example app. `edit` changes the German winback text (a new version).
    static func manifests(directory: URL, winbackDE: String = "Wir vermissen dich", heroPNG: [UInt8] = heroPNG,
                          snapshot: Bool = true) -> ManifestSet {
        ManifestSet(
            directory: directory,
            app: app(directory: directory, snapshot: snapshot),
            images: [image("bullet", size: .bulletPoint, png: bulletPNG), image("hero", size: .fullSize, png: heroPNG)],
            messages: [
                MessageManifest(name: "offer", product: "monthly", headerPosition: nil, localizations: [
                    localization("de-DE", header: "Angebot", body: "Drei Monate zum halben Preis"),
                    localization("en-US", header: "An offer", body: "Three months at half price"),
                ], location: at("messages.yaml", 30)),
                MessageManifest(name: "standard", product: nil, headerPosition: .aboveImage, localizations: [
                    localization("de-DE", header: "Bleib dabei", body: "Alles, was du liebst", image: "hero", bullets: ["bullet"]),
                    localization("en-US", header: "Stay with us", body: "Everything you love", image: "hero", bullets: ["bullet"]),
                ], location: at("messages.yaml", 1)),
                MessageManifest(name: "winback", product: nil, headerPosition: nil, localizations: [
                    localization("de-DE", header: "Komm zurück", body: winbackDE),
                    localization("en-US", header: "Come back", body: "We miss you"),
                ], location: at("messages.yaml", 40)),
            ],
            defaults: [
                DefaultAssignment(productId: "monthly", locale: "de-DE", message: "standard", location: at("defaults.yaml")),
                DefaultAssignment(productId: "monthly", locale: "en-US", message: "standard", location: at("defaults.yaml")),
                DefaultAssignment(productId: "yearly", locale: "de-DE", message: "standard", location: at("defaults.yaml")),
                DefaultAssignment(productId: "yearly", locale: "en-US", message: "standard", location: at("defaults.yaml")),
            ],
            flows: [
                FlowManifest(name: "retention", localeFallbacks: ["de-AT": "de-DE"], rules: [
                    FlowRule(name: "offer-a", match: RuleMatch(products: ["monthly"], split: TrafficSplit(group: "offer-test", percent: 50)),
                             response: .promotionalOffer(message: "offer", offerIdentifier: "half-price"), location: at("flow.yaml", 3)),
                    FlowRule(name: "offer-b", match: RuleMatch(products: ["monthly"], split: TrafficSplit(group: "offer-test", percent: 50)),
                             response: .alternateProduct(message: "offer", productId: "yearly", billingPlanType: .billedUpfront),
                             location: at("flow.yaml", 8)),
                    FlowRule(name: "winback", match: RuleMatch(notBefore: 1_700_000_000_000, notAfter: 4_000_000_000_000),
                             response: .message(name: "winback"), location: at("flow.yaml", 13)),
                    FlowRule(name: "sandbox-only", match: RuleMatch(environments: [.sandbox]),
                             response: .none, location: at("flow.yaml", 18)),
                ], location: at("flow.yaml")),
            ])
    }

    static func temporaryDirectory() -> URL {
        let url = scratchRoot.appendingPathComponent(UUID().uuidString)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}

/// One scratch directory per test process, removed when the process exits, so runs leave nothing behind.
private let scratchRoot: URL = {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("reconciler-tests-\(getpid())")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    atexit {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("reconciler-tests-\(getpid())").path
        try? FileManager.default.removeItem(atPath: path)
    }
    return url
}()
