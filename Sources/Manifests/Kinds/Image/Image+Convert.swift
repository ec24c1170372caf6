import Basics
import Foundation
import RetentionMessagingModels
import YAML

extension Loader {
    mutating func convert(_ raw: RawImage) -> ImageManifest {
        let url = raw.file.value.hasPrefix("/") ? URL(fileURLWithPath: raw.file.value)
            : directory.appendingPathComponent(raw.file.value)
        var png: [UInt8] = []
        if !ManifestPaths.isInside(raw.file.value, directory: directory) {
            // Read nothing from outside: a CI runner could otherwise upload any PNG it can read.
            diagnostics.append(.error("path-outside-manifests", at: raw.file.location,
                                      "image file '\(raw.file.value)' resolves outside the manifest directory '\(displayPath)'",
                                      hint: "images live next to the manifests: copy the PNG into '\(displayPath)' (or a folder in it) and write its path relative to it"))
        } else if let data = FileManager.default.contents(atPath: url.path) {
            png = [UInt8](data)
            if png.isEmpty {
                diagnostics.append(.error("invalid-png", at: raw.file.location, "'\(raw.file.value)': \(PNGError.empty)",
                                          hint: "Apple accepts PNG files only; export the image again as PNG"))
            }
        } else {
            let exists = FileManager.default.fileExists(atPath: url.path)
            diagnostics.append(.error("missing-image-file", at: raw.file.location,
                                      exists ? "cannot read image file '\(raw.file.value)'" : "image file '\(raw.file.value)' does not exist",
                                      hint: "image paths are relative to the manifest directory '\(displayPath)'"))
        }
        var image = ImageManifest(name: raw.name.value, file: raw.file.value, size: ImageSize(rawValue: raw.size.value),
                                  png: png, location: raw.name.location)
        image.fieldLocations = [.name: raw.name.location, .file: raw.file.location, .size: raw.size.location]
        return image
    }
}
