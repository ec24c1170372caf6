import Manifests
import RetentionMessagingModels

// The image kind's slice of the desired state: what `Identities.derive` asks of it.
extension ImageResource {
    /// The managed images: each identifier once, with every name that shares its bytes.
    struct Derived {
        var byId: [String: DesiredImage] = [:]
        var pngs: [String: [UInt8]] = [:]
        /// By image name (names are unique in a valid set; the first wins).
        var idByName: [String: String] = [:]

        /// Sorted by identifier.
        var sorted: [DesiredImage] { byId.values.sorted { $0.identifier < $1.identifier } }
    }

    static func derive(_ derivation: Derivation) throws(ReconcilerError) -> Derived {
        var images = Derived()
        for image in derivation.validated.set.images {
            let id = try Identities.uuid(namespace: derivation.namespace, name: Identities.imageName(bundleId: derivation.bundleId, environment: derivation.environment,
                                                                                          size: image.size, sha256: image.sha256))
            if images.idByName[image.name] == nil { images.idByName[image.name] = id }
            images.pngs[id] = image.png
            if var existing = images.byId[id] {
                existing.names = (existing.names + [image.name]).sorted()
                images.byId[id] = existing
            } else {
                images.byId[id] = DesiredImage(identifier: id, names: [image.name], size: image.size, sha256: image.sha256)
            }
        }
        return images
    }


    /// The images used by identifier (`kind: ExternalImage`) that have one in this environment.
    static func deriveExternal(_ derivation: Derivation) -> [DesiredExternalImage] {
        derivation.validated.set.externalImages.compactMap { image in
            image.identifier(in: derivation.environment).map { DesiredExternalImage(identifier: $0, name: image.name) }
        }
    }
}
