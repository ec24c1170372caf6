public import Foundation
import Manifests
import RetentionMessagingModels

/// The static site `retention-sync preview` writes: `index.html` (every message × locale, with the
/// review state per environment) and one page per message under `messages/`, showing each
/// localization as the cancellation sheet would. Pure and deterministic: the same input gives the
/// same bytes; pages are rendered one at a time so a large app never sits in memory whole.
public struct PreviewSite: StaticSite {
    /// The file that marks a folder as a preview's, so `--out` never replaces anything else.
    public static let markerFile = ".retention-sync-preview"
    public static let markerText = "Written by retention-sync (preview, or plan --preview), which replaces this whole folder on every run.\n"
    /// Text this close to an Apple limit (in characters, counted as the validator counts) is marked.
    public static let nearLimitMargin = 5
    /// The phone widths every localization is drawn at, in CSS pixels (iPhone SE-class and Pro Max-class).
    public static let widths = [320, 430]

    let input: PreviewInput
    let images: [String: EmbeddedImage]
    /// The names of the `ExternalImage`s: drawn as "external (content unknown)".
    let externalImages: Set<String>
    let usages: [String: [Usage]]

    public init(_ input: PreviewInput) {
        self.input = input
        var images: [String: EmbeddedImage] = [:]
        for image in input.manifests.images where !image.png.isEmpty {
            images[image.name] = EmbeddedImage(image)
        }
        self.images = images
        externalImages = Set(input.manifests.externalImages.map(\.name))
        self.usages = Usage.all(in: input.manifests)
    }

    /// Every file of the site, relative to the output folder, in the order they are written.
    public var paths: [String] {
        ["index.html"] + input.manifests.messages.map { PageNames.messagePage($0.name) }
    }

    /// Renders each file in turn (`paths` order) and hands it over with its relative path.
    public func forEachFile(_ body: (_ path: String, _ contents: Data) throws -> Void) throws {
        try body("index.html", Data(indexPage().utf8))
        for message in input.manifests.messages {
            try body(PageNames.messagePage(message.name), Data(messagePage(message).utf8))
        }
    }

    // MARK: Pages

    static func page(title: String, body: String) -> String {
        """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta http-equiv="Content-Security-Policy" content="\(PreviewStyle.contentSecurityPolicy)">
        <meta name="referrer" content="no-referrer">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(HTML.escape(title))</title>
        <style>
        \(PreviewStyle.css)
        </style>
        </head>
        <body>
        \(body)
        </body>
        </html>

        """
    }

    /// What every page says of itself: an approximation, and what it is based on. `drawn` says how
    /// each localization is drawn on the page.
    static func approximation(drawn: String) -> String {
        """
        <p class="approximation"><strong>An approximation of Apple's cancellation sheet, not a picture of it.</strong> \
        It follows Apple's published layout rules — the header above the body, which sits below the image; \
        the header above the image when <code>headerPosition</code> is <code>ABOVE_IMAGE</code> \
        (Apple's documentation: UploadMessageRequestBody, header, body, headerPosition); bullet points with their \
        icons and alt texts (BulletPoint); no image and no bullet points in promotional-offer and switch-plan \
        messages (Setting up retention messages) — and the limits of Apple's API (header 66, body 144, bullet \
        text 66, alt text 150 characters; at most 5 bullet points). Fonts, sizes, colours, what an offer adds \
        and Apple's own buttons are guesses: iOS draws the real sheet. \(drawn); text outlined \
        with dashes is within \(nearLimitMargin) characters of its limit. Apple's limit of ordinary text fills \
        \(Sheet.headerLines) lines of header, \(Sheet.bodyLines) of body and \(Sheet.bulletLines) of bullet text at 320 px: \
        text hatched past that line is likely to wrap beyond what the sheet shows.</p>
        """
    }

    static let approximation = approximation(
        drawn: "Each localization is drawn at \(widths.map { "\($0)" }.joined(separator: " and ")) CSS pixels wide, light and dark")

    func indexPage() -> String {
        let set = input.manifests
        var html = "<h1>Retention messages of \(HTML.escape(set.app.bundleId))</h1>\n"
        html += Self.approximation + "\n"
        html += "<h2>Review states</h2>\n<ul class=\"facts\">\n"
        for review in input.environments {
            html += "<li><strong>\(review.environment.rawValue)</strong>: \(HTML.escape(describe(review.source)))</li>\n"
        }
        if input.environments.isEmpty { html += "<li>No environment was asked for.</li>\n" }
        html += "</ul>\n"
        let count = set.messages.reduce(0) { $0 + $1.localizations.count }
        html += "<h2>\(set.messages.count) message\(set.messages.count == 1 ? "" : "s"), \(count) localization\(count == 1 ? "" : "s")</h2>\n"
        html += "<table>\n<thead><tr><th>Message</th><th>Locale</th><th>Header</th><th>Product</th><th>Used by</th>"
        for review in input.environments { html += "<th>\(review.environment.rawValue)</th>" }
        html += "</tr></thead>\n<tbody>\n"
        for message in set.messages {
            let page = HTML.escape(PageNames.messagePage(message.name))
            let used = usageSummary(message.name)
            for localization in message.localizations {
                html += "<tr><td><a href=\"\(page)#\(PageNames.anchor(locale: localization.locale))\">\(HTML.escape(message.name))</a></td>"
                html += "<td>\(HTML.escape(localization.locale))</td><td>\(HTML.escape(localization.header))</td>"
                html += "<td>\(HTML.escape(message.productScope))</td><td>\(HTML.escape(used))</td>"
                for review in input.environments {
                    html += "<td>\(reviewCell(review, message: message.name, locale: localization.locale))</td>"
                }
                html += "</tr>\n"
            }
        }
        html += "</tbody>\n</table>\n"
        return Self.page(title: "Retention messages of \(set.app.bundleId)", body: html)
    }

    func messagePage(_ message: MessageManifest) -> String {
        var html = "<p><a href=\"../index.html\">All messages</a></p>\n"
        html += "<h1>\(HTML.escape(message.name))</h1>\n"
        html += Self.approximation + "\n<ul class=\"facts\">\n"
        html += "<li>Product: \(HTML.escape(message.product ?? "every product (*)"))</li>\n"
        html += "<li>headerPosition: \(message.headerPosition.map { HTML.escape($0.rawValue) } ?? "not set (Apple's default, ABOVE_BODY)")</li>\n"
        let usages = self.usages[message.name] ?? []
        if usages.isEmpty {
            html += "<li>Used by no default and no flow rule.</li>\n"
        }
        let defaults = usages.compactMap { usage -> String? in
            if case .defaultMessage(let product, let locale) = usage { return "\(product) \(locale)" }
            return nil
        }
        if !defaults.isEmpty {
            html += "<li>Default for \(defaults.count) product and locale pair\(defaults.count == 1 ? "" : "s"): \(HTML.escape(defaults.joined(separator: ", ")))</li>\n"
        }
        for usage in usages {
            if case .rule(let flow, let rule, let response, let customer) = usage {
                // Which customers reach this sheet through the rule, when it asks about them (docs/targeting.md).
                let whom = customer.map { " — for customers with \(HTML.escape($0.summary))" } ?? ""
                html += "<li>Flow \(HTML.escape(flow)), rule \(HTML.escape(rule))\(whom): \(HTML.escape(Self.describe(response)))</li>\n"
            }
        }
        html += "</ul>\n"
        for localization in message.localizations {
            html += localizationSection(message, localization, usages: usages)
        }
        return Self.page(title: "\(message.name) — retention message preview", body: html)
    }

    func localizationSection(_ message: MessageManifest, _ localization: MessageLocalization, usages: [Usage]) -> String {
        let locale = localization.locale
        var html = "<section class=\"localization\" id=\"\(PageNames.anchor(locale: locale))\">\n"
        html += "<h2>\(HTML.escape(locale))"
        for review in input.environments {
            html += " <span class=\"muted\">· \(review.environment.rawValue):</span> \(reviewCell(review, message: message.name, locale: locale))"
        }
        html += "</h2>\n"
        let sheet = sheetContent(message, localization, usages: usages)
        let direction = Self.isRightToLeft(locale) ? "rtl" : "ltr"
        html += "<div class=\"frames\">\n"
        for theme in ["light", "dark"] {
            for width in Self.widths {
                html += "<figure class=\"frame w\(width) \(theme)\"><figcaption>\(width) px · \(theme)</figcaption>"
                html += "<div class=\"sheet\" dir=\"\(direction)\" lang=\"\(HTML.escape(locale))\">\n\(sheet)</div></figure>\n"
            }
        }
        html += "</div>\n"
        let notes = Sheet(message, localization, images: images, externalImages: externalImages).nearLimitNotes
        if !notes.isEmpty {
            html += "<ul class=\"notes\">\n" + notes.map { "<li>\(HTML.escape($0))</li>\n" }.joined() + "</ul>\n"
        }
        return html + "</section>\n"
    }

    /// The inside of one sheet, the same in every frame.
    func sheetContent(_ message: MessageManifest, _ localization: MessageLocalization, usages: [Usage]) -> String {
        var answers: [String] = []
        for usage in usages {
            guard case .rule(_, _, let response, _) = usage, let answer = Self.answerBlock(response), !answers.contains(answer) else { continue }
            answers.append(answer)
        }
        return Sheet(message, localization, images: images, externalImages: externalImages, answers: answers).html
    }

    static func answerBlock(_ response: RuleResponse) -> String? {
        switch response {
        case .promotionalOffer(_, let offer):
            return "<div class=\"answer\"><strong>Promotional offer</strong>\(HTML.escape(offer)): Apple adds the offer's price and terms and a button to accept it.</div>\n"
        case .alternateProduct(_, let product, let plan):
            let billing = plan.map { " (\(HTML.escape($0.rawValue)))" } ?? ""
            return "<div class=\"answer\"><strong>Switch plan</strong>\(HTML.escape(product))\(billing): Apple adds the plan's name and price and a button to switch.</div>\n"
        case .advancedCommerce(_, let change):
            let kind = change.offer == nil ? "Advanced Commerce switch plan" : "Advanced Commerce offer"
            return "<div class=\"answer\"><strong>\(kind)</strong>\(HTML.escape(change.displayName)) (\(HTML.escape(change.sku))): Apple adds the signed change's terms and a button to accept them.</div>\n"
        case .message, .none:
            return nil
        }
    }

    // MARK: Words

    func reviewCell(_ review: EnvironmentReview, message: String, locale: String) -> String {
        guard review.wasRead else { return "<span class=\"muted\">unknown</span>" }
        guard let mark = review.states[message]?[locale] else { return "<span class=\"muted\">not uploaded</span>" }
        let state = HTML.escape(mark.state)
        var cell = "<span class=\"state-\(PageNames.slug(mark.state, upperCase: true))\">\(state)</span>"
        if !mark.imagesNotApproved.isEmpty {
            cell += " <span class=\"muted\">(image \(HTML.escape(mark.imagesNotApproved.joined(separator: ", "))))</span>"
        }
        return cell
    }

    func describe(_ source: EnvironmentReview.Source) -> String {
        switch source {
        case .stateDocument(let store): "as the state document in \(store) recorded them (Apple was not asked)"
        case .emptyStore(let store): "\(store) holds no state document yet, so nothing is recorded as uploaded"
        case .notConfigured: "unknown: the App names no state store for this environment"
        case .unreadable(let why): "unknown: the state store could not be read (\(why))"
        case .notRead: "unknown: --offline, the state store was not read"
        }
    }

    func usageSummary(_ name: String) -> String {
        let usages = self.usages[name] ?? []
        let defaults = usages.filter { if case .defaultMessage = $0 { true } else { false } }.count
        let rules = usages.compactMap { usage -> String? in
            if case .rule(_, let rule, _, _) = usage { return rule }
            return nil
        }
        var parts: [String] = []
        if defaults > 0 { parts.append("\(defaults) default\(defaults == 1 ? "" : "s")") }
        if !rules.isEmpty { parts.append("rule\(rules.count == 1 ? "" : "s") " + rules.joined(separator: ", ")) }
        return parts.isEmpty ? "nothing" : parts.joined(separator: "; ")
    }

    static func describe(_ response: RuleResponse) -> String {
        switch response {
        case .message: "shows it as a message"
        case .promotionalOffer(_, let offer): "promotional offer \(offer)"
        case .alternateProduct(_, let product, let plan): "switch plan to \(product)\(plan.map { " (\($0.rawValue))" } ?? "")"
        case .advancedCommerce(_, let change): "Advanced Commerce \(change.offer == nil ? "change" : "offer") to \(change.sku)"
        case .none: "answers nothing"
        }
    }

    /// Scripts written right to left: Arabic, Hebrew, Persian, Urdu and their neighbours.
    static let rightToLeftLanguages: Set<String> = ["ar", "he", "iw", "fa", "ur", "ps", "sd", "ug", "yi", "dv", "ckb"]

    static func isRightToLeft(_ locale: String) -> Bool {
        let language = locale.split(separator: "-").first.map { $0.lowercased() } ?? ""
        return rightToLeftLanguages.contains(language)
    }
}

/// Where a message is used: the defaults that name it and the flow rules that answer with it.
enum Usage: Sendable, Hashable {
    case defaultMessage(product: String, locale: String)
    /// `customer`: the rule's `match.customer` conditions, when it has them.
    case rule(flow: String, rule: String, response: RuleResponse, customer: CustomerConditions?)

    /// By message name, defaults first (sorted), then rules in flow and evaluation order.
    static func all(in set: ManifestSet) -> [String: [Usage]] {
        var usages: [String: [Usage]] = [:]
        for assignment in set.defaults {
            usages[assignment.message, default: []].append(.defaultMessage(product: assignment.productId, locale: assignment.locale))
        }
        for flow in set.flows {
            for rule in flow.rules {
                if let name = rule.response.messageName {
                    usages[name, default: []].append(.rule(flow: flow.name, rule: rule.name, response: rule.response,
                                                           customer: rule.match.customer))
                }
            }
        }
        return usages
    }
}

/// An image as a `data:` URI, made once however many pages show it.
struct EmbeddedImage: Sendable {
    var dataURI: String
    var width: Int
    var height: Int

    init(_ image: ImageManifest) {
        dataURI = "data:image/png;base64," + Data(image.png).base64EncodedString()
        let info = try? PNGInfo.parse(image.png)
        width = info?.width ?? 0
        height = info?.height ?? 0
    }
}
