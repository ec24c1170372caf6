import CLIKit
import Crypto
import Foundation
import Manifests
@testable import CommandTestSupport
import Testing
import TestSupport

/// The preview as a person sees it: Chromium opens the pages the command wrote, and the tests read
/// what it laid out. Chromium is required — without it these tests fail and say how to install it.
@Suite("Looking at the preview in a browser", .serialized)
struct PreviewBrowserTests {
    /// Screenshots every run leaves for a person to look at (gitignored with the rest of .build).
    static let artifacts = Repository.url(".build/test-artifacts/preview")

    /// `preview` of the harness's manifests into `site/`; the written pages, index first.
    static func preview(_ harness: CommandHarness, _ extra: [String] = []) async throws -> [URL] {
        let run = await harness.run(["preview", "--manifests", "manifests", "--out", "site"] + extra)
        #expect(run.code == .success, "\(run.stderr)")
        let site = harness.file("site")
        let messages = try FileManager.default.contentsOfDirectory(atPath: site.appendingPathComponent("messages").path).sorted()
        return [site.appendingPathComponent("index.html")] + messages.map { site.appendingPathComponent("messages/\($0)") }
    }

    static func manifests(_ harness: CommandHarness) throws -> ManifestSet {
        let (set, diagnostics) = ManifestLoader.load(directory: harness.file("manifests"), displayPath: "manifests")
        return try #require(set, "\(diagnostics)")
    }

    /// What every sheet must show: each localization's texts in the sheets of its locale (four of
    /// them), every image loaded with its alt text, nothing outside the sheet, nothing fetched.
    static func expectSheets(_ measure: PageMeasure, of message: MessageManifest, page: String) {
        for localization in message.localizations {
            let sheets = measure.sheets.filter { $0.lang == localization.locale }
            #expect(sheets.count == 4, "\(page) \(localization.locale): two widths, light and dark")
            #expect(Set(sheets.map(\.width)) == [320, 430], "\(page) \(localization.locale)")
            let texts = [localization.header, localization.body] + localization.bulletPoints.map(\.text)
            for sheet in sheets {
                for text in texts { #expect(sheet.text.contains(text), "\(page) \(localization.locale) \(Int(sheet.width)) px lacks \(text)") }
            }
            let alts = (localization.image.map { [$0.altText] } ?? []) + localization.bulletPoints.map(\.altText)
            for alt in alts {
                #expect(measure.images.filter { $0.alt == alt }.count == 4, "\(page) \(localization.locale): the alt text \(alt)")
            }
        }
        #expect(measure.images.allSatisfy { $0.naturalWidth > 0 }, "\(page): an image did not load")
        #expect(measure.overflow.isEmpty, "\(page): \(measure.overflow)")
        #expect(measure.resources.isEmpty, "\(page) fetched \(measure.resources)")
        #expect(measure.violations.isEmpty, "\(page) tried \(measure.violations)")
        #expect(measure.scripts == 1, "\(page): only the measuring script")
    }

    @Test("the example app's pages show every text and alt text, load every image, fit the sheet at 320 and 430 px, and request nothing")
    func exampleAppInBrowser() async throws {
        let chromium = try Chromium.require()
        let harness = try CommandHarness()
        let pages = try await Self.preview(harness, ["--offline"])
        let set = try Self.manifests(harness)
        #expect(pages.count == set.messages.count + 1)
        try FileManager.default.createDirectory(at: Self.artifacts, withIntermediateDirectories: true)
        for page in pages {
            let html = try String(contentsOf: page, encoding: .utf8)
            #expect(!html.contains("http://") && !html.contains("https://"), "\(page.lastPathComponent) names an address")
            let measure = try await PageMeasure.measure(page, with: chromium)
            if let message = set.messages.first(where: { page.lastPathComponent == "\($0.name).html" }) {
                Self.expectSheets(measure, of: message, page: page.lastPathComponent)
            } else {
                #expect(measure.sheets.isEmpty && measure.resources.isEmpty && measure.violations.isEmpty)
            }
            // The page as shipped, unmodified: a screenshot to look at, and Chromium's log of every request.
            let name = page.deletingPathExtension().lastPathComponent
            let netLog = harness.file("\(name).netlog.json")
            try await chromium.screenshot(page, to: Self.artifacts.appendingPathComponent("\(name).png"), width: 1700, height: 1400, netLog: netLog)
            #expect(try Chromium.pageRequests(inNetLog: netLog) == [], "\(page.lastPathComponent) made requests")
        }
    }

    @Test("a header of <script>, a right-to-left locale and a word too long for the line are drawn as text, right to left, inside the sheet")
    func hostileAndRightToLeftInBrowser() async throws {
        let chromium = try Chromium.require()
        let harness = try CommandHarness()
        let hostile = "<script>document.title='owned'</script></style><b>bold</b>"
        let word = String(repeating: "Unkündbarkeitsversicherung", count: 2)
        try harness.edit("manifests/messages.yaml", replacing: "    header: Before you go\n", with: """
                header: "\(hostile)"
            """ + "\n")
        try harness.edit("manifests/messages.yaml", replacing: "    header: Bevor du gehst\n", with: "    header: \(word)\n")
        try harness.edit("manifests/messages.yaml", replacing: "  ja:\n    header: その前に\n", with: """
              ar-SA:
                header: قبل أن تغادر
                body: استراحة تنفس لمدة دقيقتين في انتظارك. جلساتك محفوظة.
              ja:
                header: その前に

            """)
        let pages = try await Self.preview(harness, ["--offline"])
        let page = try #require(pages.first { $0.lastPathComponent == "before-you-go.html" })
        let measure = try await PageMeasure.measure(page, with: chromium)
        let message = try #require(try Self.manifests(harness).message(named: "before-you-go"))
        Self.expectSheets(measure, of: message, page: "before-you-go.html (edited)")
        #expect(measure.sheets.filter { $0.lang == "en-US" }.allSatisfy { $0.text.contains(hostile) }, "the header shows as its own text")
        #expect(measure.sheets.filter { $0.lang == "ar-SA" }.map(\.direction) == ["rtl", "rtl", "rtl", "rtl"])
        #expect(measure.sheets.filter { $0.lang == "en-US" }.map(\.direction) == ["ltr", "ltr", "ltr", "ltr"])
        try FileManager.default.createDirectory(at: Self.artifacts, withIntermediateDirectories: true)
        try await chromium.screenshot(page, to: Self.artifacts.appendingPathComponent("edited-before-you-go.png"), width: 1700, height: 1400)
    }
}

extension PreviewBrowserTests {
    @Test("a message showing a vendor's external images previews with their names in place of the pictures, inside the sheet, fetching nothing")
    func externalImagesInBrowser() async throws {
        let chromium = try Chromium.require()
        let harness = try CommandHarness()
        try ExternalImages.writeManifests(harness)
        let pages = try await Self.preview(harness, ["--offline"])
        let page = try #require(pages.first { $0.lastPathComponent == "stay-calm.html" })
        let measure = try await PageMeasure.measure(page, with: chromium)
        let sheets = measure.sheets.filter { $0.lang == "en-US" }
        #expect(sheets.count == 4, "two widths, light and dark")
        for sheet in sheets {
            for text in ["Stay a little longer", "Ten minutes a day still counts.", "Guided sessions", "[external image vendor-hero (content unknown)]"] {
                #expect(sheet.text.contains(text), "\(Int(sheet.width)) px \(sheet.frame) lacks \(text)")
            }
        }
        // The hero's stand-in says what it is across the sheet; the icon's is an icon's size, and says it in its title.
        #expect(measure.stands.filter { $0.alt == "The sun over the hills" }.count == 4)
        let icons = measure.stands.filter { $0.alt == "A breathing ring" }
        #expect(icons.count == 4)
        #expect(icons.allSatisfy { $0.width == 32 && $0.height == 32 && $0.title == "[external image vendor-icon (content unknown)]" }, "\(icons)")
        // The pixels are Apple's: no picture is drawn, nothing broken is shown, nothing is fetched.
        #expect(measure.images.isEmpty, "\(measure.images)")
        #expect(measure.overflow.isEmpty, "\(measure.overflow)")
        #expect(measure.resources.isEmpty && measure.violations.isEmpty, "\(measure.resources) \(measure.violations)")
        try FileManager.default.createDirectory(at: Self.artifacts, withIntermediateDirectories: true)
        try await chromium.screenshot(page, to: Self.artifacts.appendingPathComponent("external-images.png"), width: 1700, height: 1400)
    }
}

extension PreviewBrowserTests {
    /// The lines of header, body and bullet text the sheet is taken to show (docs/preview.md).
    static let shownLines = ["header": 3, "body": 4, "bullet": 3]

    @Test("text is hatched exactly when Chromium lays it out on more lines than the sheet shows: header 3, body 4, bullet text 3")
    func wrapMarkMatchesLayout() async throws {
        let chromium = try Chromium.require()
        let harness = try CommandHarness()
        // Within Apple's limits, but wide: capitals, long compounds.
        try harness.edit("manifests/messages.yaml", replacing: "    header: Before you go\n",
                         with: "    header: \"WAIT! YOUR STREAK, YOUR SESSIONS AND YOUR STORIES STAY WITH YOU\"\n")
        try harness.edit("manifests/messages.yaml", replacing: "    header: Bevor du gehst\n",
                         with: "    header: Unkündbarkeitsversicherungsbedingungen fürs Jahresabonnement\n")
        try harness.edit("manifests/messages.yaml", replacing: "    body: 2分間の呼吸エクササイズが待っています。セッションと連続記録は保存されているので、いつでも戻ってこられます。\n",
                         with: "    body: 1日10分の積み重ねが、確かな落ち着きになっています。連続記録、保存したセッション、お気に入りの睡眠ストーリーをそのままに。いつでも戻ってきてください。あなたの時間を大切に。\n")
        try harness.edit("manifests/messages.yaml", replacing: "      - { text: Jede Woche neue Einschlafgeschichten, ",
                         with: "      - { text: \"JEDE WOCHE NEUE EINSCHLAFGESCHICHTEN, ATEMÜBUNGEN UND MEDITATIONEN\", ")
        let pages = try await Self.preview(harness, ["--offline"])
        var counted: [String: (marked: Int, unmarked: Int)] = [:]
        var widthMatters = false
        for page in pages.dropFirst() {
            let measure = try await PageMeasure.measure(page, with: chromium)
            for sheet in measure.sheets {
                for text in sheet.texts {
                    let limit = try #require(Self.shownLines[text.role])
                    #expect(text.marked == (text.lines > limit),
                            "\(page.lastPathComponent) \(sheet.lang) \(Int(sheet.width)) px \(text.role) on \(text.lines) lines, marked: \(text.marked): \(text.text)")
                    counted[text.role, default: (0, 0)].marked += text.marked ? 1 : 0
                    counted[text.role, default: (0, 0)].unmarked += text.marked ? 0 : 1
                }
            }
            // The same text, marked in the small phone's sheet and not in the large one's.
            for small in measure.sheets where small.width == 320 {
                for large in measure.sheets where large.width == 430 && large.lang == small.lang && large.frame.hasSuffix(small.frame.components(separatedBy: " ").last ?? "") {
                    for (a, b) in zip(small.texts, large.texts) where a.text == b.text && a.marked && !b.marked { widthMatters = true }
                }
            }
        }
        for role in ["header", "body", "bullet"] {
            #expect((counted[role]?.marked ?? 0) > 0 && (counted[role]?.unmarked ?? 0) > 0, "\(role): \(String(describing: counted[role]))")
        }
        #expect(widthMatters, "some text wraps beyond at 320 px and not at 430 px")
        try FileManager.default.createDirectory(at: Self.artifacts, withIntermediateDirectories: true)
        let page = try #require(pages.first { $0.lastPathComponent == "before-you-go.html" })
        try await chromium.screenshot(page, to: Self.artifacts.appendingPathComponent("wrap-marks-before-you-go.png"), width: 1700, height: 1400)
    }

    @Test("plan --preview's pages at 390 px: before and after texts in their sheets, nothing overflowing, every image loaded, nothing requested")
    func planPreviewInBrowser() async throws {
        let chromium = try Chromium.require()
        let harness = try await PlanPreviewTests.appliedSandbox()
        try PlanPreviewTests.editMessages(harness)
        // A message with a picture and bullet points: both sides draw them.
        try harness.edit("manifests/messages.yaml", replacing: "    header: Your calm is worth keeping\n", with: "    header: Keep your calm\n")
        let run = await harness.run(["plan", "--env", "sandbox", "--preview", "plan-preview"])
        #expect(run.code == .success, "\(run.stderr)")
        let site = harness.file("plan-preview")
        let pages = ["index.html", "messages/before-you-go.html", "messages/everyday-calm.html", "messages/welcome-back.html"]
            .map { site.appendingPathComponent($0) }
        let artifacts = Repository.url(".build/test-artifacts/plan-preview")
        try FileManager.default.createDirectory(at: artifacts, withIntermediateDirectories: true)
        for page in pages {
            let measure = try await PageMeasure.measure(page, with: chromium, width: 390)
            let name = page.deletingPathExtension().lastPathComponent
            #expect(measure.viewportWidth == 390, "\(name): laid out \(measure.viewportWidth) px wide")
            #expect(measure.pageWidth <= measure.viewportWidth, "\(name) scrolls sideways: \(measure.pageWidth) px")
            #expect(measure.overflow.isEmpty, "\(name): \(measure.overflow)")
            #expect(measure.resources.isEmpty && measure.violations.isEmpty, "\(name) fetched \(measure.resources) \(measure.violations)")
            #expect(measure.images.allSatisfy { $0.naturalWidth > 0 }, "\(name): an image did not load")
            if name == "before-you-go" {
                func texts(_ side: String, _ locale: String) -> [String] {
                    measure.sheets.filter { $0.lang == locale && $0.frame.hasSuffix(" \(side)") }.map(\.text)
                }
                #expect(texts("before", "en-US").count == 2 && texts("before", "en-US").allSatisfy { $0.contains("Before you go") && !$0.contains("Wait") })
                #expect(texts("after", "en-US").count == 2 && texts("after", "en-US").allSatisfy { $0.contains("Wait — before you go") })
                #expect(texts("before", "ar-SA").isEmpty, "a new localization has no sheet before")
                #expect(texts("after", "ar-SA").count == 2 && texts("after", "ar-SA").allSatisfy { $0.contains("قبل أن تغادر") })
                #expect(measure.sheets.filter { $0.lang == "ar-SA" }.allSatisfy { $0.direction == "rtl" })
                #expect(measure.sheets.allSatisfy { $0.width == 320 })
            }
            if name == "everyday-calm" {
                // The picture and three bullet icons, with their alt texts, in both sheets of both themes.
                #expect(measure.images.count == 4 * 4, "\(measure.images.map(\.alt))")
                #expect(measure.images.filter { $0.alt == "The sun rising over quiet blue hills" }.count == 4)
                #expect(measure.sheets.filter { $0.frame.hasSuffix(" before") }.allSatisfy { $0.text.contains("Your calm is worth keeping") })
                #expect(measure.sheets.filter { $0.frame.hasSuffix(" after") }.allSatisfy { $0.text.contains("Keep your calm") })
            }
            let netLog = harness.file("\(name).netlog.json")
            try await chromium.screenshot(page, to: artifacts.appendingPathComponent("\(name)-1400.png"), width: 1400, height: 1400, netLog: netLog)
            #expect(try Chromium.pageRequests(inNetLog: netLog) == [], "\(name) made requests")
            // A phone's 390 px, in a frame of that width (headless Chromium's window is wider).
            let frame = page.deletingLastPathComponent().appendingPathComponent("phone-\(page.lastPathComponent)")
            try Data(Chromium.frame(page.lastPathComponent, width: 390, height: 2400, listen: false).utf8).write(to: frame)
            try await chromium.screenshot(frame, to: artifacts.appendingPathComponent("\(name)-390.png"), width: Chromium.minimumWindowWidth, height: 2400)
        }
    }
}

/// The manual's pictures of the preview are made by `preview` (and `plan --preview`) from the example app, never by hand.
/// Pixels differ between machines (fonts, Chromium versions), so they are not compared: the digest
/// of the page each picture was taken from is recorded beside it, and a change to the pages fails
/// here until `UPDATE_GOLDEN=1` takes the pictures again.
@Suite("The manual's screenshots of the preview")
struct PreviewScreenshotTests {
    static let folder = "docs/images/preview"
    static let record = "\(folder)/screenshots.sha256"
    /// Picture, page of the site, window size.
    static let shots: [(png: String, page: String, width: Int, height: Int)] = [
        ("index.png", "index.html", 1280, 720),
        ("everyday-calm.png", "messages/everyday-calm.html", 1700, 1340),
        ("switch-to-yearly.png", "messages/switch-to-yearly.html", 1700, 800),
    ]
    /// The same for the site of a pull request's plan (`plan --preview`).
    static let planShots: [(png: String, page: String, width: Int, height: Int)] = [
        ("plan-before-you-go.png", "messages/before-you-go.html", 1400, 960),
    ]

    @Test("the manual's screenshots were taken of the preview the example app gives today, and of a pull request's plan --preview")
    func screenshotsAreCurrent() async throws {
        let harness = try CommandHarness()
        let apply = await harness.run(["apply", "--env", "sandbox"])
        #expect(apply.code == .success, "\(apply.stderr)")
        let run = await harness.run(["preview", "--manifests", "manifests", "--out", "site"])
        #expect(run.code == .success, "\(run.stderr)")
        // A pull request: the English header changes, an Arabic localization is added.
        try harness.edit("manifests/messages.yaml", replacing: "    header: Before you go\n", with: "    header: \"Wait — before you go\"\n")
        try harness.edit("manifests/messages.yaml", replacing: "  ja:\n    header: その前に\n", with: PlanPreviewTests.arabic + "  ja:\n    header: その前に\n")
        let plan = await harness.run(["plan", "--env", "sandbox", "--preview", "plan-site"])
        #expect(plan.code == .success, "\(plan.stderr)")
        let all = Self.shots.map { (site: "site", shot: $0) } + Self.planShots.map { (site: "plan-site", shot: $0) }
        var lines: [String] = []
        for (site, shot) in all {
            let html = try Data(contentsOf: harness.file("\(site)/\(shot.page)"))
            lines.append("\(Digest.sha256Hex([UInt8](html)))  \(shot.png)  \(site == "site" ? "" : "plan --preview: ")\(shot.page)")
        }
        let expected = lines.joined(separator: "\n") + "\n"
        if Golden.isRecording {
            let chromium = try Chromium.require()
            try FileManager.default.createDirectory(at: Repository.url(Self.folder), withIntermediateDirectories: true)
            for (site, shot) in all {
                try await chromium.screenshot(harness.file("\(site)/\(shot.page)"), to: Repository.url("\(Self.folder)/\(shot.png)"),
                                              width: shot.width, height: shot.height)
            }
        }
        Golden.expect(expected, matches: Self.record)
        for (_, shot) in all {
            let png = try? Data(contentsOf: Repository.url("\(Self.folder)/\(shot.png)"))
            #expect(png?.starts(with: [0x89, 0x50, 0x4E, 0x47]) == true, "\(Self.folder)/\(shot.png) is missing: UPDATE_GOLDEN=1 takes it")
        }
    }
}
