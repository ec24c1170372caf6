import CLIKit
import Foundation
@testable import CommandTestSupport
import Testing
import TestSupport

/// `plan --preview DIR`: what a pull request changes in the messages, drawn before and after, read
/// back from the pages the command wrote.
@Suite("retention-sync plan --preview")
struct PlanPreviewTests {
    /// A message the main branch has and a pull request removes.
    static let welcomeBack = """
        ---
        apiVersion: retention-sync/v1
        kind: Message
        name: welcome-back
        localizations:
          en-US:
            header: Welcome back
            body: Pick up where you left off.

        """

    /// Sandbox as the main branch leaves it: everything applied and approved, recorded in the state;
    /// with `welcome-back` among the messages.
    static func appliedSandbox() async throws -> CommandHarness {
        let harness = try CommandHarness()
        let messages = harness.file("manifests/messages.yaml")
        try (String(contentsOf: messages, encoding: .utf8) + welcomeBack).write(to: messages, atomically: true, encoding: .utf8)
        let apply = await harness.run(["apply", "--env", "sandbox"])
        #expect(apply.code == .success, "\(apply.stderr)")
        return harness
    }

    static let arabic = """
          ar-SA:
            header: قبل أن تغادر
            body: استراحة تنفس لمدة دقيقتين في انتظارك. جلساتك محفوظة.

        """

    /// A pull request's edits: before-you-go's English header changes and an Arabic localization is
    /// added; welcome-back is removed.
    static func editMessages(_ harness: CommandHarness) throws {
        try harness.edit("manifests/messages.yaml", replacing: "    header: Before you go\n", with: "    header: \"Wait — before you go\"\n")
        try harness.edit("manifests/messages.yaml", replacing: "  ja:\n    header: その前に\n", with: arabic + "  ja:\n    header: その前に\n")
        try harness.edit("manifests/messages.yaml", replacing: welcomeBack, with: "")
    }

    /// Undoes `editMessages`.
    static func revertMessages(_ harness: CommandHarness) throws {
        try harness.edit("manifests/messages.yaml", replacing: "    header: \"Wait — before you go\"\n", with: "    header: Before you go\n")
        try harness.edit("manifests/messages.yaml", replacing: arabic, with: "")
        let messages = harness.file("manifests/messages.yaml")
        try (String(contentsOf: messages, encoding: .utf8) + welcomeBack).write(to: messages, atomically: true, encoding: .utf8)
    }

    /// `plan --env sandbox --preview DIR`; the run.
    static func plan(_ harness: CommandHarness, into folder: String) async -> CommandHarness.Run {
        await harness.run(["plan", "--env", "sandbox", "--format", "markdown", "--preview", folder])
    }

    /// One localization's section of a message page.
    static func section(_ page: String, locale: String) throws -> Substring {
        let start = try #require(page.range(of: "<section class=\"localization\" id=\"loc-\(locale)\">"), "no section for \(locale)")
        let end = try #require(page.range(of: "</section>", range: start.upperBound..<page.endIndex))
        return page[start.upperBound..<end.lowerBound]
    }

    /// What one side of a section shows in its light frame: the sheet's header and body, unescaped,
    /// or the words standing in for a sheet.
    enum Side: Equatable {
        case sheet(header: String, body: String)
        case placeholder(String)
    }

    static func side(_ section: Substring, _ name: String) throws -> Side {
        let start = try #require(section.range(of: "<figure class=\"frame w320 light \(name)\">"), "no \(name) frame")
        let end = try #require(section.range(of: "</figure>", range: start.upperBound..<section.endIndex))
        let figure = section[start.upperBound..<end.lowerBound]
        func text(after opening: String, until closing: String) -> String? {
            guard let open = figure.range(of: opening),
                  let tagEnd = figure.range(of: ">", range: open.upperBound..<figure.endIndex),
                  let close = figure.range(of: closing, range: tagEnd.upperBound..<figure.endIndex) else { return nil }
            return unescape(String(figure[tagEnd.upperBound..<close.lowerBound]))
        }
        if let words = text(after: "<div class=\"placeholder\"", until: "</div>") { return .placeholder(words) }
        return .sheet(header: try #require(text(after: "<h3", until: "<span class=\"beyond\"")),
                      body: try #require(text(after: "<p class=\"body", until: "<span class=\"beyond\"")))
    }

    static func unescape(_ html: String) -> String {
        html.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
            .replacingOccurrences(of: "&amp;", with: "&")
    }

    static func read(_ harness: CommandHarness, _ path: String) throws -> String {
        try String(contentsOf: harness.file(path), encoding: .utf8)
    }

    @Test("a pull request that changes a header, adds a locale and removes a message previews each localization before and after")
    func changedMessageBeforeAndAfter() async throws {
        let harness = try await Self.appliedSandbox()
        try Self.editMessages(harness)
        let run = await Self.plan(harness, into: "plan-preview")
        #expect(run.code == .success, "\(run.stderr)")
        #expect(run.stderr.contains("Wrote the preview of 2 changed messages (3 localizations) in sandbox to plan-preview/index.html"), "\(run.stderr)")
        #expect(run.stdout.contains("Plan (sandbox)"), "the plan itself still goes to standard output")

        let files = try FileManager.default.contentsOfDirectory(atPath: harness.file("plan-preview/messages").path)
        #expect(files.sorted() == ["before-you-go.html", "welcome-back.html"], "only the changed messages have a page")
        let page = try Self.read(harness, "plan-preview/messages/before-you-go.html")
        let body = "A two-minute breathing break is waiting for you. Come back any time; your sessions and streak are saved."

        let english = try Self.section(page, locale: "en-US")
        #expect(english.contains("changed: header"))
        #expect(try Self.side(english, "before") == .sheet(header: "Before you go", body: body))
        #expect(try Self.side(english, "after") == .sheet(header: "Wait — before you go", body: body))

        let arabic = try Self.section(page, locale: "ar-SA")
        guard case .placeholder(let none) = try Self.side(arabic, "before") else { Issue.record("ar-SA has a before"); return }
        #expect(none.hasPrefix("New"))
        #expect(try Self.side(arabic, "after") == .sheet(header: "قبل أن تغادر", body: "استراحة تنفس لمدة دقيقتين في انتظارك. جلساتك محفوظة."))
        #expect(arabic.contains("dir=\"rtl\" lang=\"ar-SA\""))

        #expect(!page.contains("id=\"loc-ja\"") && !page.contains("id=\"loc-de-DE\""), "unchanged localizations are left out")

        let removed = try Self.section(try Self.read(harness, "plan-preview/messages/welcome-back.html"), locale: "en-US")
        #expect(try Self.side(removed, "before") == .sheet(header: "Welcome back", body: "Pick up where you left off."))
        guard case .placeholder(let gone) = try Self.side(removed, "after") else { Issue.record("welcome-back has an after"); return }
        #expect(gone.hasPrefix("Removed"))

        let index = try Self.read(harness, "plan-preview/index.html")
        #expect(index.contains("<h1>2 messages changed in sandbox</h1>"))
        #expect(index.contains("<a href=\"messages/before-you-go.html#loc-en-US\">en-US</a>: changed: header — “Before you go” → “Wait — before you go”"))
        #expect(index.contains("<a href=\"messages/before-you-go.html#loc-ar-SA\">ar-SA</a>: new"))
        #expect(index.contains("<a href=\"messages/welcome-back.html#loc-en-US\">en-US</a>: removed — was “Welcome back”"))
        for html in [index, page] {
            #expect(html.contains("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">"))
            #expect(!html.contains("<script") && !html.contains("http://") && !html.contains("https://"))
        }
    }

    @Test("a pull request's second push, after its first submitted the new text for review, still previews the change")
    func submittedEarlierStillPreviewed() async throws {
        let harness = try CommandHarness()
        let first = await harness.run(["apply", "--env", "production"])
        #expect(first.code == .success, "\(first.stderr)")
        try harness.edit("manifests/messages.yaml", replacing: "    header: Before you go\n", with: "    header: Wait a moment\n")
        let submitted = await harness.run(["apply", "--env", "production", "--only-uploads", "--auto-approve"])
        #expect(submitted.code == .success, "\(submitted.stderr)")

        let run = await harness.run(["plan", "--env", "production", "--preview", "plan-preview"])
        #expect(run.code == .success, "\(run.stderr)")
        let english = try Self.section(try Self.read(harness, "plan-preview/messages/before-you-go.html"), locale: "en-US")
        #expect(try Self.side(english, "before") == .sheet(header: "Before you go", body: "A two-minute breathing break is waiting for you. Come back any time; your sessions and streak are saved."))
        guard case .sheet(let header, _) = try Self.side(english, "after") else { Issue.record("no after sheet"); return }
        #expect(header == "Wait a moment")
        #expect(english.contains("Apple already holds it"), "the plan uploads nothing for it: the submission did")
    }

    @Test("a header of <script> in a changed message shows as text on the page and in the index")
    func hostileHeaderEscaped() async throws {
        let harness = try await Self.appliedSandbox()
        let hostile = "<script>alert(1)</script></style>"
        try harness.edit("manifests/messages.yaml", replacing: "    header: Before you go\n", with: "    header: \"\(hostile)\"\n")
        let run = await Self.plan(harness, into: "plan-preview")
        #expect(run.code == .success, "\(run.stderr)")
        let page = try Self.read(harness, "plan-preview/messages/before-you-go.html")
        let index = try Self.read(harness, "plan-preview/index.html")
        for html in [page, index] {
            #expect(!html.contains("<script"))
            #expect(html.components(separatedBy: "</style>").count == 2, "only the page's own style element closes")
            #expect(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;&lt;/style&gt;"))
        }
        guard case .sheet(let header, _) = try Self.side(try Self.section(page, locale: "en-US"), "after") else { Issue.record("no after sheet"); return }
        #expect(header == hostile)
    }

    @Test("a plan that changes no message writes no preview, and removes a previous one, but never a folder that is not a preview")
    func nothingToPreview() async throws {
        let harness = try await Self.appliedSandbox()
        let run = await Self.plan(harness, into: "plan-preview")
        #expect(run.code == .success, "\(run.stderr)")
        #expect(run.stderr.contains("No message changes in sandbox: no preview written to plan-preview"), "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: harness.file("plan-preview").path))

        // A preview from an earlier commit of the pull request would show changes that are gone.
        try Self.editMessages(harness)
        #expect(await Self.plan(harness, into: "plan-preview").code == .success)
        #expect(FileManager.default.fileExists(atPath: harness.file("plan-preview/index.html").path))
        try Self.revertMessages(harness)
        let reverted = await Self.plan(harness, into: "plan-preview")
        #expect(reverted.code == .success, "\(reverted.stderr)")
        #expect(reverted.stderr.contains("no preview written to plan-preview (the previous preview there was removed)"), "\(reverted.stderr)")
        #expect(!FileManager.default.fileExists(atPath: harness.file("plan-preview").path))

        try FileManager.default.createDirectory(at: harness.file("mine"), withIntermediateDirectories: true)
        try Data("notes".utf8).write(to: harness.file("mine/notes.txt"))
        #expect(await Self.plan(harness, into: "mine").code == .success)
        #expect(try String(contentsOf: harness.file("mine/notes.txt"), encoding: .utf8) == "notes")
    }

    @Test("the same plan writes byte-identical previews")
    func sameBytesTwice() async throws {
        let harness = try await Self.appliedSandbox()
        try Self.editMessages(harness)
        #expect(await Self.plan(harness, into: "first").code == .success)
        #expect(await Self.plan(harness, into: "second").code == .success)
        let first = try Self.tree(harness.file("first")), second = try Self.tree(harness.file("second"))
        #expect(first.keys.sorted() == [".retention-sync-preview", "index.html", "messages/before-you-go.html", "messages/welcome-back.html"])
        #expect(first == second)
    }

    /// Every file below `folder` by relative path.
    static func tree(_ folder: URL) throws -> [String: Data] {
        var files: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(atPath: folder.path)
        while let path = enumerator?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            let url = folder.appendingPathComponent(path)
            if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue {
                files[path] = try Data(contentsOf: url)
            }
        }
        return files
    }
}
