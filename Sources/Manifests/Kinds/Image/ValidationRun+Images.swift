import RetentionMessagingModels
import YAML

extension ValidationRun {
    mutating func checkImages() {
        var firstByName: [String: ImageManifest] = [:]
        var firstByContent: [String: ImageManifest] = [:]
        for image in set.images {
            if let first = firstByName[image.name] {
                report(.error("duplicate-image", at: image.location, "image name '\(image.name)' is used twice",
                              hint: "the first is at \(first.location); give each image its own name"))
            } else {
                firstByName[image.name] = image
            }
            let sizeKnown = image.size == .fullSize || image.size == .bulletPoint
            if !sizeKnown {
                let sizes = [ImageSize.fullSize.rawValue, ImageSize.bulletPoint.rawValue]
                let written = image.size.rawValue.uppercased()
                let suggestion = (sizes.first { !written.isEmpty && ($0.hasPrefix(written) || written.hasPrefix($0)) }
                    ?? NearMiss.best(image.size.rawValue, in: sizes, maxDistance: 4)).map { "did you mean \($0)? " } ?? ""
                report(.error("unknown-image-size", at: image.location(of: .size), "unknown image size '\(image.size.rawValue)'",
                              hint: suggestion + "sizes are FULL_SIZE (3840 px wide, 160–2160 px high) and BULLET_POINT (1024 × 1024 px)"))
            }
            // An image whose file is missing still counts towards the limit, under its name.
            let contentKey = image.sha256.isEmpty ? "name:\(image.name)" : "\(image.size.rawValue):\(image.sha256)"
            if image.png.isEmpty {
                firstByContent[contentKey] = firstByContent[contentKey] ?? image
                continue
            }
            checkPNG(image, sizeKnown: sizeKnown)
            if let first = firstByContent[contentKey] {
                report(.error("duplicate-image-content", at: image.location,
                              "image '\(image.name)' has the same content as image '\(first.name)', so both would get the same identifier",
                              hint: "keep one of them (\(first.location)) and refer to it by name"))
            } else {
                firstByContent[contentKey] = image
            }
        }
        if firstByContent.count > RetentionLimits.images {
            report(.error("too-many-images", at: nil,
                          "the manifests declare \(firstByContent.count) distinct images; Apple allows at most \(RetentionLimits.images) per app in each environment",
                          hint: "remove images no message needs; the plan also counts images already uploaded"))
        }
    }

    private mutating func checkPNG(_ image: ImageManifest, sizeKnown: Bool) {
        let location = image.location(of: .file)
        let info: PNGInfo
        do {
            info = try PNGInfo.parse(image.png)
        } catch {
            report(.error("invalid-png", at: location, "'\(image.file)': \(error)",
                          hint: "Apple accepts PNG files only; export the image again as PNG"))
            return
        }
        if sizeKnown && !RetentionLimits.fits(width: info.width, height: info.height, size: image.size) {
            report(.error("image-dimensions", at: location,
                          "'\(image.file)' is \(info.width) × \(info.height) px; \(RetentionLimits.dimensionRule(for: image.size))",
                          hint: "resize the image, or change 'size' if it is meant to be the other kind"))
        }
        if info.hasAlpha {
            report(.error("image-has-alpha", at: location,
                          "'\(image.file)' has an alpha channel (PNG colour type \(info.colorType)); Apple accepts only opaque images",
                          hint: "export it as RGB without transparency; it should read well in light and dark mode"))
        }
        if info.hasTransparencyChunk {
            report(.error("image-has-transparency", at: location,
                          "'\(image.file)' has a tRNS chunk, which makes part of it transparent; Apple accepts only opaque images",
                          hint: "export it without transparency"))
        }
    }
}
