import Foundation
import Manifests
import RetentionMessagingModels

/// What one cancellation sheet shows, whichever way the message came: a manifest's localization
/// (`preview`) or the body the state recorded for an earlier upload (`plan --preview`). Drawn the
/// same way for both, so before and after look alike where they are alike.
struct Sheet: Sendable {
    /// An image as the sheet shows it, or what stands in for one that cannot be embedded.
    struct Picture: Sendable {
        var image: EmbeddedImage?
        var alt: String
        /// The words in place of an image that cannot be embedded.
        var missing: String
    }

    struct Bullet: Sendable {
        var text: String
        var icon: Picture
    }

    var header: String
    var body: String
    var headerAboveImage: Bool
    var image: Picture?
    var bullets: [Bullet]
    /// HTML blocks for what the rules answering with this message add (offers, switch plans).
    var answers: [String] = []

    /// The lines of each text the sheet is taken to show: what Apple's limit of ordinary text fills
    /// at the small phone width in this drawing (66 characters of header, 144 of body, 66 of bullet
    /// text: 3, 4 and 3 lines at 320 px). More lines — capitals, long words, wider scripts — are
    /// likely to wrap beyond what the sheet shows, and are hatched past that line.
    static let headerLines = 3
    static let bodyLines = 4
    static let bulletLines = 3

    /// What stands in for an image the manifests declare by identifier only (`ExternalImage`).
    static func external(_ name: String) -> String { "[external image \(name) (content unknown)]" }

    /// A manifest's localization, its images found by name; `externalImages` names the
    /// `ExternalImage`s, whose pixels the tool never has.
    init(_ message: MessageManifest, _ localization: MessageLocalization, images: [String: EmbeddedImage],
         externalImages: Set<String> = [], answers: [String] = []) {
        header = localization.header
        body = localization.body
        headerAboveImage = message.headerPosition == .aboveImage && localization.image != nil
        func picture(_ name: String, alt: String) -> Picture {
            Picture(image: images[name], alt: alt, missing: externalImages.contains(name) ? Self.external(name) : "[image \(name) not found]")
        }
        image = localization.image.map { picture($0.name, alt: $0.altText) }
        bullets = localization.bulletPoints.map { Bullet(text: $0.text, icon: picture($0.image, alt: $0.altText)) }
        self.answers = answers
    }

    /// An upload body, its images found by identifier among those the manifests derive; an
    /// external image (`externalImages`: identifier → name) is named as such, and an image they no
    /// longer derive (an earlier version's) by its identifier.
    init(_ upload: UploadMessageRequestBody, images: [String: EmbeddedImage], externalImages: [String: String] = [:]) {
        header = upload.header
        body = upload.body
        headerAboveImage = upload.headerPosition == .aboveImage && upload.image != nil
        func picture(_ identifier: String, alt: String) -> Picture {
            Picture(image: images[identifier], alt: alt,
                    missing: externalImages[identifier].map(Self.external) ?? "[image \(identifier), not in these manifests]")
        }
        image = upload.image.map { picture($0.imageIdentifier, alt: $0.altText) }
        bullets = (upload.bulletPoints ?? []).map { Bullet(text: $0.text, icon: picture($0.imageIdentifier, alt: $0.altText)) }
    }

    /// The inside of one sheet, the same in every frame.
    var html: String {
        var html = ""
        let header = "<h3\(Self.near(self.header, RetentionLimits.headerLength))>\(HTML.escape(self.header))\(Self.beyond(Self.headerLines))</h3>\n"
        if headerAboveImage { html += header }
        if let image { html += Self.imageTag(image, class: "hero") }
        if !headerAboveImage { html += header }
        html += "<p\(Self.near(body, RetentionLimits.bodyLength, class: "body"))>\(HTML.escape(body))\(Self.beyond(Self.bodyLines))</p>\n"
        if !bullets.isEmpty {
            html += "<ul class=\"bullets\">\n"
            for bullet in bullets {
                html += "<li>" + Self.imageTag(bullet.icon, class: "icon")
                html += "<span\(Self.near(bullet.text, RetentionLimits.bulletPointTextLength, class: "text"))>\(HTML.escape(bullet.text))\(Self.beyond(Self.bulletLines))</span></li>\n"
            }
            html += "</ul>\n"
        }
        html += answers.joined()
        html += "<div class=\"controls\">Apple's own buttons</div>\n"
        return html
    }

    /// The mark of text past the lines the sheet shows: empty, placed by the style sheet half a line
    /// below the last line shown, and clipped away by its text's box unless the text reaches there.
    static func beyond(_ lines: Int) -> String {
        "<span class=\"beyond\" title=\"past line \(lines): likely beyond what the sheet shows\" aria-hidden=\"true\"></span>"
    }

    static func imageTag(_ picture: Picture, class kind: String) -> String {
        let altAttribute = HTML.escape(picture.alt)
        guard let image = picture.image else {
            // A picture the page does not have: where a bullet's icon goes, a dashed box of an icon's
            // size (what it stands for in its title), so the bullet's text keeps the width it has.
            if kind == "icon" {
                return "<span class=\"icon missing\" role=\"img\" aria-label=\"\(altAttribute)\" title=\"\(HTML.escape(picture.missing))\">?</span>"
            }
            return "<span class=\"\(kind) muted\" role=\"img\" aria-label=\"\(altAttribute)\">\(HTML.escape(picture.missing))</span>"
        }
        let size = image.width > 0 ? " width=\"\(image.width)\" height=\"\(image.height)\"" : ""
        return "<img\(near(picture.alt, RetentionLimits.altTextLength, class: kind)) src=\"\(image.dataURI)\" alt=\"\(altAttribute)\"\(size)>"
    }

    /// The element's `class` (and a `title` with the count) adding `near` when `text` is within the
    /// margin of `limit`; empty when there is neither.
    static func near(_ text: String, _ limit: Int, class base: String? = nil) -> String {
        let length = RetentionLimits.length(of: text)
        guard length >= limit - PreviewSite.nearLimitMargin else { return base.map { " class=\"\($0)\"" } ?? "" }
        return " class=\"\(base.map { $0 + " " } ?? "")near\" title=\"\(length) of \(limit) characters\""
    }

    /// Texts within the margin of their limits, worded for the list under the sheets.
    var nearLimitNotes: [String] {
        var notes: [String] = []
        func check(_ what: String, _ text: String, _ limit: Int) {
            let length = RetentionLimits.length(of: text)
            if length >= limit - PreviewSite.nearLimitMargin { notes.append("\(what): \(length) of Apple's \(limit) characters") }
        }
        check("header", header, RetentionLimits.headerLength)
        check("body", body, RetentionLimits.bodyLength)
        if let image { check("image alt text", image.alt, RetentionLimits.altTextLength) }
        for (index, bullet) in bullets.enumerated() {
            check("bullet point \(index + 1)", bullet.text, RetentionLimits.bulletPointTextLength)
            check("bullet point \(index + 1) alt text", bullet.icon.alt, RetentionLimits.altTextLength)
        }
        return notes
    }
}
