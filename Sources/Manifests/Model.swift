public import Basics
public import Foundation
import YAML

// The loaded, resolved form of a manifest directory. The loader fills it from YAML; the
// validator checks it; the reconciler derives identities and plans from it. Every element keeps
// where it was written so any later stage can point a person at the right line.

/// Everything one manifest directory declares.
public struct ManifestSet: Sendable {
    /// The directory the manifests were read from.
    public var directory: URL
    public var app: AppManifest
    /// Sorted by name.
    public var images: [ImageManifest]
    /// Sorted by name.
    public var messages: [MessageManifest]
    /// Every (product, locale) → message assignment, expanded from `Defaults` documents
    /// (`*` and locale lists resolved), sorted by product then locale.
    public var defaults: [DefaultAssignment]
    /// Sorted by name.
    public var flows: [FlowManifest]
    /// Messages the tool did not upload, known by identifier (`kind: ExternalMessage`), sorted by name.
    public var externalMessages: [ExternalMessageManifest]

    public init(directory: URL, app: AppManifest, images: [ImageManifest], messages: [MessageManifest],
                defaults: [DefaultAssignment], flows: [FlowManifest], externalMessages: [ExternalMessageManifest] = []) {
        self.directory = directory
        var app = app
        // The loader hands in resolved paths; a set built in memory may name them relative to `directory`.
        for index in app.environments.indices {
            if let path = app.environments[index].snapshotPath, !path.hasPrefix("/") {
                app.environments[index].snapshotPath = directory.appendingPathComponent(path).standardizedFileURL.path
            }
        }
        self.app = app
        self.images = images
        self.messages = messages
        self.defaults = defaults
        self.flows = flows
        self.externalMessages = externalMessages
    }

    public func image(named name: String) -> ImageManifest? { images.first { $0.name == name } }
    public func message(named name: String) -> MessageManifest? { messages.first { $0.name == name } }
    public func externalMessage(named name: String) -> ExternalMessageManifest? { externalMessages.first { $0.name == name } }
}

/// Types that remember where their fields were written.
public protocol FieldLocated {
    associatedtype Field: Hashable
    var location: SourceLocation { get }
    var fieldLocations: [Field: SourceLocation] { get }
}

extension FieldLocated {
    /// Where `field` was written, or where the whole element was when that is unknown.
    public func location(of field: Field) -> SourceLocation { fieldLocations[field] ?? location }
}

extension AppManifest: FieldLocated {}
extension EnvironmentSettings: FieldLocated {}
extension ProductManifest: FieldLocated {}
extension ImageManifest: FieldLocated {}
extension MessageManifest: FieldLocated {}
extension MessageLocalization: FieldLocated {}
extension ImageReference: FieldLocated {}
extension BulletPoint: FieldLocated {}
extension DefaultAssignment: FieldLocated {}
extension FlowManifest: FieldLocated {}
extension FlowRule: FieldLocated {}
