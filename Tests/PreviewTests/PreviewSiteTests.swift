import Basics
import Foundation
import Manifests
import Preview
import RetentionMessagingModels
import Testing
import TestSupport

/// The site as files: what a person opens, and what it must never do (run a manifest's text as
/// markup, write outside its folder, leave half a site behind, differ between two runs).
@Suite("Writing a preview of the messages")
struct PreviewSiteTests {
    /// A small app in a temporary folder: the example app's pictures, messages as given.
    static func app(messages: String) throws -> (URL, ManifestSet) {
        let folder = try temporaryFolder("preview-app")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("images"), withIntermediateDirectories: true)
        for name in ["hero.png", "bullet-moon.png"] {
            try FileManager.default.copyItem(at: Repository.url("manifests/images/\(name)"), to: folder.appendingPathComponent("images/\(name)"))
        }
        let header = "apiVersion: retention-sync/v1\n"
        try Data((header + """
            kind: App
            bundleId: com.example.preview
            environments:
              sandbox: {}
            products:
              - id: com.example.preview.monthly
                locales: [en-US, ar-SA]
            """).utf8).write(to: folder.appendingPathComponent("app.yaml"))
        try Data((header + """
            kind: Image
            name: hero
            file: images/hero.png
            size: FULL_SIZE
            ---
            \(header)kind: Image
            name: moon
            file: images/bullet-moon.png
            size: BULLET_POINT
            """).utf8).write(to: folder.appendingPathComponent("images.yaml"))
        try Data((header + messages).utf8).write(to: folder.appendingPathComponent("messages.yaml"))
        let (set, diagnostics) = ManifestLoader.load(directory: folder, displayPath: "app")
        let loaded = try #require(set, "\(diagnostics)")
        return (folder, loaded)
    }

    static let hostile = """
        kind: Message
        name: hostile
        headerPosition: ABOVE_IMAGE
        localizations:
          en-US:
            header: "<script>alert(1)</script></style>"
            body: "Body & <b>bold</b> \\"quoted\\" 'single' <!-- comment -->"
            image: { name: hero, altText: "\\" onerror=\\"alert(1)" }
            bulletPoints:
              - { text: "</li><img src=x>", image: moon, altText: "<moon>" }
          ar-SA:
            header: ابق معنا
            body: كل ما حفظته باقٍ في مكانه.
        """

    static func site(_ set: ManifestSet) -> PreviewSite {
        PreviewSite(PreviewInput(manifests: set, environments: [EnvironmentReview(environment: .sandbox, source: .notRead)]))
    }

    static func files(_ site: PreviewSite) throws -> [String: String] {
        var files: [String: String] = [:]
        try site.forEachFile { path, data in files[path] = String(decoding: data, as: UTF8.self) }
        return files
    }

    @Test("a header of <script> or </style>, and quotes in an alt text, show as text and never as markup")
    func manifestTextIsEscaped() throws {
        let (folder, set) = try Self.app(messages: Self.hostile)
        defer { try? FileManager.default.removeItem(at: folder) }
        let page = try #require(try Self.files(Self.site(set))["messages/hostile.html"])
        #expect(!page.contains("<script"))
        #expect(page.components(separatedBy: "</style>").count == 2, "only the page's own style element closes")
        #expect(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;&lt;/style&gt;"))
        #expect(page.contains("Body &amp; &lt;b&gt;bold&lt;/b&gt; &quot;quoted&quot; &#39;single&#39; &lt;!-- comment --&gt;"))
        #expect(page.contains("alt=\"&quot; onerror=&quot;alert(1)\""))
        #expect(page.contains("&lt;/li&gt;&lt;img src=x&gt;"))
        #expect(!page.contains("<img src=x"))
        #expect(page.contains("alt=\"&lt;moon&gt;\""))
    }

    @Test("a message's page says which customers a rule shows it to, when the rule asks about them")
    func customerConditionsShowOnTheSheetTheyLeadTo() throws {
        let (folder, set) = try Self.app(messages: """
            kind: Message
            name: plain
            localizations:
              en-US: { header: Stay with us, body: Your progress is kept. }
              ar-SA: { header: ابق معنا, body: كل ما حفظته باقٍ في مكانه. }
            """)
        defer { try? FileManager.default.removeItem(at: folder) }
        var targeted = set
        targeted.flows = [FlowManifest(name: "cancel", localeFallbacks: [:], rules: [
            FlowRule(name: "payment-failing", match: RuleMatch([.customer(CustomerConditions(billing: [.retry, .grace]))]),
                     response: .message(name: "plain"), location: SourceLocation(file: "flow.yaml", line: 3, column: 5)),
            FlowRule(name: "everyone", match: RuleMatch(), response: .message(name: "plain"),
                     location: SourceLocation(file: "flow.yaml", line: 8, column: 5)),
        ], location: SourceLocation(file: "flow.yaml", line: 1, column: 1))]
        let page = try #require(try Self.files(Self.site(targeted))["messages/plain.html"])
        #expect(page.contains("<li>Flow cancel, rule payment-failing — for customers with billing [retry, grace]: "), "\(page)")
        #expect(page.contains("<li>Flow cancel, rule everyone: "))
    }

    @Test("every page forbids every fetch with its Content-Security-Policy, carries the approximation note, and names no http(s) address")
    func pagesFetchNothing() throws {
        let (folder, set) = try Self.app(messages: Self.hostile)
        defer { try? FileManager.default.removeItem(at: folder) }
        for (path, page) in try Self.files(Self.site(set)) {
            #expect(page.contains("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">"), "\(path)")
            #expect(page.contains("An approximation of Apple's cancellation sheet"), "\(path)")
            #expect(!page.contains("http://") && !page.contains("https://"), "\(path)")
            #expect(!page.contains("<script") && !page.contains("<link") && !page.contains("@import"), "\(path)")
        }
    }

    @Test("a right-to-left locale is drawn right to left, in its language")
    func rightToLeft() throws {
        let (folder, set) = try Self.app(messages: Self.hostile)
        defer { try? FileManager.default.removeItem(at: folder) }
        let page = try #require(try Self.files(Self.site(set))["messages/hostile.html"])
        #expect(page.components(separatedBy: "dir=\"rtl\" lang=\"ar-SA\"").count == 5, "four frames right to left")
        #expect(page.components(separatedBy: "dir=\"ltr\" lang=\"en-US\"").count == 5)
    }

    @Test("the header sits above the image only with headerPosition ABOVE_IMAGE")
    func headerPosition() throws {
        let (folder, set) = try Self.app(messages: """
            kind: Message
            name: above
            headerPosition: ABOVE_IMAGE
            localizations:
              en-US: { header: Above, body: Text, image: { name: hero, altText: Hills } }
            ---
            apiVersion: retention-sync/v1
            kind: Message
            name: below
            localizations:
              en-US: { header: Below, body: Text, image: { name: hero, altText: Hills } }
            """)
        defer { try? FileManager.default.removeItem(at: folder) }
        let files = try Self.files(Self.site(set))
        let above = try #require(files["messages/above.html"]), below = try #require(files["messages/below.html"])
        func headerFirst(_ page: String, _ header: String) throws -> Bool {
            let sheet = try #require(page.range(of: "<div class=\"sheet\""))
            let rest = page[sheet.upperBound...]
            let h = try #require(rest.range(of: "<h3>\(header)<span class=\"beyond\"")), img = try #require(rest.range(of: "<img class=\"hero\""))
            return h.lowerBound < img.lowerBound
        }
        #expect(try headerFirst(above, "Above"))
        #expect(try !headerFirst(below, "Below"))
    }

    @Test("text within a few characters of Apple's limits is marked, with its count")
    func nearLimits() throws {
        let header = String(repeating: "h", count: 63), body = String(repeating: "b", count: 100)
        let (folder, set) = try Self.app(messages: """
            kind: Message
            name: long
            localizations:
              en-US: { header: \(header), body: \(body) }
            """)
        defer { try? FileManager.default.removeItem(at: folder) }
        let page = try #require(try Self.files(Self.site(set))["messages/long.html"])
        #expect(page.contains("<h3 class=\"near\" title=\"63 of 66 characters\">\(header)<span class=\"beyond\""))
        #expect(page.contains("header: 63 of Apple&#39;s 66 characters"))
        #expect(page.contains("<p class=\"body\">\(body)<span class=\"beyond\""), "a body 44 characters short of its limit is not marked")
    }

    @Test("a message name cannot make a file outside the output folder, nor share another's file")
    func fileNamesStayInside() throws {
        let (folder, set) = try Self.app(messages: """
            kind: Message
            name: plain
            localizations:
              en-US: { header: Hello, body: Text }
            """)
        defer { try? FileManager.default.removeItem(at: folder) }
        var hostile = set
        let template = try #require(set.messages.first)
        for name in ["../../escape", "/etc/passwd", "..", "a/b", "A", "a", ".hidden", "-x", String(repeating: "n", count: 300)] {
            var message = template
            message.name = name
            hostile.messages.append(message)
        }
        let paths = Self.site(hostile).paths
        #expect(Set(paths).count == paths.count, "every message has its own file")
        for path in paths.dropFirst() {
            let file = String(path.dropFirst("messages/".count))
            #expect(path.hasPrefix("messages/") && !file.contains("/") && !file.hasPrefix(".") && file.hasSuffix(".html"), "\(path)")
            #expect(file.count <= 120, "\(path)")
        }
        #expect(paths.contains("messages/plain.html"), "a valid name is its own file name")
    }

    @Test("the same manifests give byte-identical files, run after run")
    func deterministic() throws {
        let (folder, set) = try Self.app(messages: Self.hostile)
        defer { try? FileManager.default.removeItem(at: folder) }
        let out = try temporaryFolder("preview-out")
        defer { try? FileManager.default.removeItem(at: out) }
        try PreviewFolder.write(Self.site(set), to: out.appendingPathComponent("first"), displayPath: "first")
        try PreviewFolder.write(Self.site(set), to: out.appendingPathComponent("second"), displayPath: "second")
        let first = try Self.tree(out.appendingPathComponent("first")), second = try Self.tree(out.appendingPathComponent("second"))
        #expect(first.keys.sorted() == [".retention-sync-preview", "index.html", "messages/hostile.html"])
        #expect(first == second)
    }

    @Test("an existing folder that is not a previous preview is refused and left as it was")
    func refusesForeignFolder() throws {
        let (folder, set) = try Self.app(messages: Self.hostile)
        defer { try? FileManager.default.removeItem(at: folder) }
        let out = try temporaryFolder("preview-foreign")
        defer { try? FileManager.default.removeItem(at: out) }
        try Data("mine".utf8).write(to: out.appendingPathComponent("notes.txt"))
        #expect(throws: PreviewFolder.Failure.self) {
            try PreviewFolder.write(Self.site(set), to: out, displayPath: "out")
        }
        #expect(try Self.tree(out) == ["notes.txt": Data("mine".utf8)])
        let siblings = try FileManager.default.contentsOfDirectory(atPath: out.deletingLastPathComponent().path)
        #expect(!siblings.contains { $0.hasPrefix(".\(out.lastPathComponent).") }, "no staging folder is left behind")
    }

    @Test("a new preview replaces the previous one whole: nothing of the old one remains, no staging folder is left")
    func replacesWhole() throws {
        let (folder, set) = try Self.app(messages: Self.hostile)
        defer { try? FileManager.default.removeItem(at: folder) }
        let parent = try temporaryFolder("preview-replace")
        defer { try? FileManager.default.removeItem(at: parent) }
        let out = parent.appendingPathComponent("site")
        try PreviewFolder.write(Self.site(set), to: out, displayPath: "site")
        try Data("stale".utf8).write(to: out.appendingPathComponent("messages/removed-message.html"))
        try PreviewFolder.write(Self.site(set), to: out, displayPath: "site")
        #expect(try Self.tree(out).keys.sorted() == [".retention-sync-preview", "index.html", "messages/hostile.html"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: parent.path) == ["site"])
    }

    /// Every file below `folder` by relative path.
    static func tree(_ folder: URL) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for case let path as String in FileManager.default.enumerator(atPath: folder.path) ?? FileManager.default.enumerator(atPath: "/nonexistent")! {
            var isDirectory: ObjCBool = false
            let url = folder.appendingPathComponent(path)
            if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue {
                files[path] = try Data(contentsOf: url)
            }
        }
        return files
    }
}
