public import Basics
public import Foundation
import YAML

// The loaded, resolved form of a manifest directory. The loader fills it from YAML; the
// validator checks it; the reconciler derives identities and plans from it. Every element keeps
// where it was written so any later stage can point a person at the right line.

/// Everything one manifest directory declares: the App, and what every other kind declared, each
/// kind's part read through the accessor its folder defines (`messages`, `images`, …).
public struct ManifestSet: Sendable {
    /// The directory the manifests were read from.
    public var directory: URL
    public var app: AppManifest
    /// What each kind declared, under the kind.
    var declarations: ManifestDeclarations

    init(directory: URL, app: AppManifest, declarations: ManifestDeclarations) {
        self.directory = directory
        var app = app
        // The loader hands in resolved paths; a set built in memory may name them relative to `directory`.
        for index in app.environments.indices {
            if let path = app.environments[index].snapshotPath, !path.hasPrefix("/") {
                app.environments[index].snapshotPath = directory.appendingPathComponent(path).standardizedFileURL.path
            }
        }
        self.app = app
        self.declarations = declarations
    }

    /// A set built in memory (tests, benchmarks), each kind's elements given in their final order.
    public init(directory: URL, app: AppManifest, images: [ImageManifest], messages: [MessageManifest],
                defaults: [DefaultAssignment], flows: [FlowManifest], externalMessages: [ExternalMessageManifest] = []) {
        var declarations = ManifestDeclarations()
        declarations[ImageKind.self] = images
        declarations[MessageKind.self] = messages
        declarations[DefaultsKind.self] = defaults
        declarations[FlowKind.self] = flows
        declarations[ExternalMessageKind.self] = externalMessages
        self.init(directory: directory, app: app, declarations: declarations)
    }
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

