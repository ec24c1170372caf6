public import Foundation
public import Manifests
public import RetentionMessagingModels

/// What `plan --preview` shows: the message localizations a plan changes, each before and after.
public struct PlanPreviewInput: Sendable {
    public var bundleId: String
    public var environment: Environment
    /// Sorted by message name, then locale.
    public var localizations: [ComparedLocalization]
    /// The images the manifests derive, by identifier: the pictures of both sides' sheets.
    public var images: [String: ImageManifest]
    /// The images the manifests declare by identifier only (`ExternalImage`): identifier → name.
    public var externalImages: [String: String]

    /// The defaults the plan switches from one message to another, by product and locale.
    public var defaults: [ComparedDefault]

    public init(bundleId: String, environment: Environment, localizations: [ComparedLocalization], images: [String: ImageManifest],
                externalImages: [String: String] = [:], defaults: [ComparedDefault] = []) {
        self.bundleId = bundleId
        self.environment = environment
        self.localizations = localizations
        self.images = images
        self.externalImages = externalImages
        self.defaults = defaults
    }
}

/// A default the plan switches: what a customer of the pair sees before (the message Apple holds
/// now, drawn from its recorded text, or from the text an external message is assumed to show) and
/// after (the message the manifests assign).
public struct ComparedDefault: Sendable, Hashable {
    public var product: String
    public var locale: String
    /// How each side is known: its name, and where its text comes from.
    public var beforeName: String
    public var afterName: String
    /// Nil when its text is unknown (an external message without assumed text).
    public var before: ComparedLocalization.Version?
    public var after: ComparedLocalization.Version?
    /// The state of the plan's `set default` (`ready`, `blocked`).
    public var state: String

    public init(product: String, locale: String, beforeName: String, afterName: String, before: ComparedLocalization.Version?,
                after: ComparedLocalization.Version?, state: String) {
        self.product = product
        self.locale = locale
        self.beforeName = beforeName
        self.afterName = afterName
        self.before = before
        self.after = after
        self.state = state
    }
}

/// One localization a plan changes: the version recorded before, the version the manifests derive after.
public struct ComparedLocalization: Sendable, Hashable {
    public enum Change: String, Sendable, Hashable {
        case new, changed, removed
        /// The recorded version, uploaded again: before and after are the same text.
        case uploadedAgain = "uploaded again"
    }

    /// One side: a version's identifier and, when known, the text it was uploaded with.
    public struct Version: Sendable, Hashable {
        public var identifier: String
        /// Nil when the state kept no text of it.
        public var body: UploadMessageRequestBody?

        public init(identifier: String, body: UploadMessageRequestBody?) {
            self.identifier = identifier
            self.body = body
        }
    }

    public var message: String
    public var locale: String
    public var change: Change
    /// Nil when new.
    public var before: Version?
    /// Nil when removed.
    public var after: Version?
    /// The fields that differ (`header`, `body`, `image`, `bullet 2`, …).
    public var changedFields: [String]
    /// The state of the plan's upload of `after` (`ready`, `blocked`, `error`); nil when the plan
    /// uploads nothing for it.
    public var upload: String?

    public init(message: String, locale: String, change: Change, before: Version?, after: Version?,
                changedFields: [String] = [], upload: String? = nil) {
        self.message = message
        self.locale = locale
        self.change = change
        self.before = before
        self.after = after
        self.changedFields = changedFields
        self.upload = upload
    }
}

/// The static site `plan --preview` writes: `index.html` lists the changed messages and their
/// localizations, and a page per message draws each changed localization before and after, side
/// by side, as the cancellation sheet would show them. The same kind of site as `PreviewSite` —
/// the same style, policy and escaping, no script, images embedded — and as deterministic.
public struct PlanPreviewSite: StaticSite {
    /// Every sheet of the comparison is drawn at the small phone's width, where text wraps soonest.
    public static let width = 320

    let input: PlanPreviewInput
    let images: [String: EmbeddedImage]
    /// Message names in the order of their first localization, each with its localizations.
    let messages: [(name: String, localizations: [ComparedLocalization])]

    public init(_ input: PlanPreviewInput) {
        self.input = input
        // Only the pictures the compared versions show are embedded, each once.
        let bodies = input.localizations.flatMap { [$0.before?.body, $0.after?.body] } + input.defaults.flatMap { [$0.before?.body, $0.after?.body] }
        let shown = Set(bodies.compactMap { $0?.referencedImageIdentifiers }.joined())
        var images: [String: EmbeddedImage] = [:]
        for (identifier, image) in input.images where shown.contains(identifier) && !image.png.isEmpty {
            images[identifier] = EmbeddedImage(image)
        }
        self.images = images
        var messages: [(name: String, localizations: [ComparedLocalization])] = []
        for localization in input.localizations {
            if messages.last?.name == localization.message {
                messages[messages.count - 1].localizations.append(localization)
            } else {
                messages.append((localization.message, [localization]))
            }
        }
        self.messages = messages
    }

    /// How many messages have a page: the count the pull-request comment gives.
    public var messageCount: Int { messages.count }

    /// The page of the default switches, when the plan makes any.
    public static let defaultsPage = "defaults.html"

    /// Every file of the site, relative to the output folder, in the order they are written.
    public var paths: [String] {
        ["index.html"] + messages.map { PageNames.messagePage($0.name) } + (input.defaults.isEmpty ? [] : [Self.defaultsPage])
    }

    public func forEachFile(_ body: (_ path: String, _ contents: Data) throws -> Void) throws {
        try body("index.html", Data(indexPage().utf8))
        for message in messages {
            try body(PageNames.messagePage(message.name), Data(messagePage(message.name, message.localizations).utf8))
        }
        if !input.defaults.isEmpty { try body(Self.defaultsPage, Data(defaultsPage().utf8)) }
    }

    /// Each switched default: what a customer of the pair sees before and after, side by side.
    func defaultsPage() -> String {
        var html = "<p><a href=\"index.html\">All changes in \(input.environment.rawValue)</a></p>\n"
        html += "<h1>Default messages this plan switches</h1>\n"
        html += "<p class=\"facts\">Before is the message Apple shows now, drawn from the text the state recorded, or from the text an "
            + "external message is assumed to show (unverified); after is the message these manifests assign.</p>\n" + Self.approximation + "\n"
        for item in input.defaults {
            html += "<section class=\"default\" id=\"\(HTML.escape(PageNames.anchor(locale: item.product + "-" + item.locale)))\">\n"
            html += "<h2>\(HTML.escape(item.product))/\(HTML.escape(item.locale)) · \(HTML.escape(item.beforeName)) → \(HTML.escape(item.afterName))</h2>\n"
            html += "<ul class=\"facts\"><li>The plan's set default is \(HTML.escape(item.state)).</li></ul>\n"
            let before = side(item.before, missing: "The text of \(item.beforeName) is unknown: declare its assumedText to draw it here.")
            let after = side(item.after, missing: "The text of \(item.afterName) is unknown.")
            html += frames(before: before, after: after, locale: item.locale) + "</section>\n"
        }
        return PreviewSite.page(title: "Default messages — what the plan changes in \(input.environment.rawValue)", body: html)
    }

    static let approximation = PreviewSite.approximation(
        drawn: "Each changed localization is drawn before and after at \(width) CSS pixels wide, light and dark")

    static let explanation = """
        <p class="facts">Before is the version the state recorded for the main branch's last apply; after is \
        what these manifests derive. A new localization has no before; a removed one, no after.</p>
        """

    func indexPage() -> String {
        let count = messages.count, localizations = input.localizations.count
        let title = "\(count) message\(count == 1 ? "" : "s") changed in \(input.environment.rawValue)"
        var html = "<h1>\(HTML.escape(title))</h1>\n"
        html += "<p class=\"facts\">What <code>retention-sync plan</code> changes in the messages of \(HTML.escape(input.bundleId)) "
        html += "in \(input.environment.rawValue): \(localizations) localization\(localizations == 1 ? "" : "s").</p>\n"
        html += Self.explanation + "\n" + Self.approximation + "\n"
        for (name, localizations) in messages {
            let page = HTML.escape(PageNames.messagePage(name))
            html += "<h2><a href=\"\(page)\">\(HTML.escape(name))</a></h2>\n<ul class=\"changes\">\n"
            for localization in localizations {
                html += "<li><a href=\"\(page)#\(PageNames.anchor(locale: localization.locale))\">\(HTML.escape(localization.locale))</a>: "
                html += HTML.escape(Self.summary(localization)) + "</li>\n"
            }
            html += "</ul>\n"
        }
        if !input.defaults.isEmpty {
            html += "<h2><a href=\"\(Self.defaultsPage)\">Default messages switched (\(input.defaults.count))</a></h2>\n<ul class=\"changes\">\n"
            for item in input.defaults {
                html += "<li>\(HTML.escape(item.product))/\(HTML.escape(item.locale)): \(HTML.escape(item.beforeName)) → \(HTML.escape(item.afterName))</li>\n"
            }
            html += "</ul>\n"
        }
        return PreviewSite.page(title: title, body: html)
    }

    func messagePage(_ name: String, _ localizations: [ComparedLocalization]) -> String {
        var html = "<p><a href=\"../index.html\">All changes in \(input.environment.rawValue)</a></p>\n"
        html += "<h1>\(HTML.escape(name))</h1>\n"
        html += Self.explanation + "\n" + Self.approximation + "\n"
        for localization in localizations {
            html += section(localization)
        }
        return PreviewSite.page(title: "\(name) — what the plan changes in \(input.environment.rawValue)", body: html)
    }

    func section(_ localization: ComparedLocalization) -> String {
        let locale = localization.locale
        var html = "<section class=\"localization\" id=\"\(PageNames.anchor(locale: locale))\">\n"
        html += "<h2>\(HTML.escape(locale)) · \(HTML.escape(Self.heading(localization)))</h2>\n"
        html += "<ul class=\"facts\">\n"
        if let before = localization.before {
            html += "<li>Before: version \(HTML.escape(before.identifier)), as the state recorded it.</li>\n"
        }
        if let after = localization.after {
            let upload = localization.upload.map { "this plan uploads it (\(HTML.escape($0)))" }
                ?? "Apple already holds it (uploaded earlier, not yet the main branch's)"
            html += "<li>After: version \(HTML.escape(after.identifier)); \(upload).</li>\n"
        }
        html += "</ul>\n"
        let before = side(localization.before, missing: localization.change == .new
                          ? "New: no earlier version of this localization is recorded."
                          : "The state kept no text of the earlier version.")
        let after = side(localization.after, missing: "Removed: these manifests no longer have this localization.")
        html += frames(before: before, after: after, locale: locale)
        if case .sheet(let sheet) = after {
            let notes = sheet.nearLimitNotes
            if !notes.isEmpty { html += "<ul class=\"notes\">\n" + notes.map { "<li>\(HTML.escape($0))</li>\n" }.joined() + "</ul>\n" }
        }
        return html + "</section>\n"
    }

    /// Before and after, light and dark, at the preview's width.
    func frames(before: Side, after: Side, locale: String) -> String {
        let direction = PreviewSite.isRightToLeft(locale) ? "rtl" : "ltr"
        var html = "<div class=\"frames\">\n"
        for theme in ["light", "dark"] {
            for (label, content) in [("Before", before), ("After", after)] {
                html += "<figure class=\"frame w\(Self.width) \(theme) \(label.lowercased())\"><figcaption>\(label) · \(Self.width) px · \(theme)</figcaption>"
                switch content {
                case .sheet(let sheet):
                    html += "<div class=\"sheet\" dir=\"\(direction)\" lang=\"\(HTML.escape(locale))\">\n\(sheet.html)</div></figure>\n"
                case .placeholder(let words):
                    html += "<div class=\"placeholder\">\(HTML.escape(words))</div></figure>\n"
                }
            }
        }
        return html + "</div>\n"
    }

    enum Side {
        case sheet(Sheet)
        case placeholder(String)
    }

    func side(_ version: ComparedLocalization.Version?, missing: String) -> Side {
        guard let body = version?.body else { return .placeholder(missing) }
        return .sheet(Sheet(body, images: images, externalImages: input.externalImages))
    }

    /// `changed: header, body`, `new`, `removed`, `uploaded again (the same text)`.
    static func heading(_ localization: ComparedLocalization) -> String {
        switch localization.change {
        case .changed where !localization.changedFields.isEmpty: "changed: " + localization.changedFields.joined(separator: ", ")
        case .uploadedAgain: "uploaded again (the same text)"
        default: localization.change.rawValue
        }
    }

    /// The index's line: the heading, and the header before and after where it changed.
    static func summary(_ localization: ComparedLocalization) -> String {
        let before = localization.before?.body?.header, after = localization.after?.body?.header
        switch (before, after) {
        case (let before?, let after?) where before != after: return heading(localization) + " — “\(before)” → “\(after)”"
        case (nil, let after?): return heading(localization) + " — “\(after)”"
        case (let before?, nil): return heading(localization) + " — was “\(before)”"
        default: return heading(localization)
        }
    }
}
