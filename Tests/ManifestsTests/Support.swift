import Basics
import Foundation
import TestSupport
@testable import Manifests
import RetentionMessagingModels
import YAML

/// The repository's root, found from this file's place (Tests/ManifestsTests/Support.swift).
let repositoryRoot = Repository.root

func here(_ line: Int = 1) -> SourceLocation { SourceLocation(file: "test.yaml", line: line, column: 1) }

/// A small valid set built in code, for checks that are easier to state on the model than in YAML.
func makeSet(messages: [MessageManifest], images: [ImageManifest] = [], locales: [String] = ["en-US", "de-DE"],
             defaultsFor messageName: String? = nil) -> ManifestSet {
    let product = ProductManifest(id: "com.example.app.monthly", locales: locales, location: here(2))
    let app = AppManifest(bundleId: "com.example.app", appAppleId: 42, identityNamespace: nil,
                          environments: [EnvironmentSettings(environment: .sandbox, realtimeURL: nil, snapshotPath: nil, location: here(3))],
                          products: [product], location: here())
    let name = messageName ?? messages.first?.name ?? "none"
    let defaults = locales.map { DefaultAssignment(productId: product.id, locale: $0, message: name, location: here(4)) }
    return ManifestSet(directory: repositoryRoot, app: app, images: images, messages: messages, defaults: defaults, flows: [])
}

func textMessage(_ name: String = "stay", locales: [String] = ["en-US", "de-DE"], header: String = "Stay with us",
                 body: String = "Your progress is saved.") -> MessageManifest {
    MessageManifest(name: name, product: nil, headerPosition: nil,
                    localizations: locales.map {
                        MessageLocalization(locale: $0, header: header, body: body, image: nil, bulletPoints: [], location: here(5))
                    }, location: here(5))
}
