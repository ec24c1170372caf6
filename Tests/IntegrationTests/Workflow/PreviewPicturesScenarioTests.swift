import Foundation
import Testing
import TestSupport
import YAML

/// The plan preview's pages in the pull request: the step that draws the changed sheets with the
/// runner's browser, and the comment's link to them, run as the runner runs them with stand-ins for
/// the browser and gh.
@Suite("Previewing the changed messages in a pull request")
struct PreviewPicturesScenarioTests {
    static let preview = "examples/github-actions/plan-preview.yml"

    /// What `plan --preview preview-production` leaves: an index and one page per changed message,
    /// with `sections[name]` localizations each.
    static func site(_ s: Scenario, sections: [String: Int]) throws {
        try s.write("<!DOCTYPE html><title>index</title>\n", to: "preview-production/index.html")
        for (name, count) in sections {
            let body = String(repeating: "<section class=\"localization\" id=\"loc-x\">\n</section>\n", count: count)
            try s.write("<!DOCTYPE html>\n\(body)", to: "preview-production/messages/\(name).html")
        }
    }

    static func environment(_ s: Scenario, _ extra: [String: String] = [:]) -> [String: String] {
        ["RS_APP": "manifests", "RS_ENV": "production", "FAKE_LOG": s.url("calls").path].merging(extra) { $1 }
    }

    @Test("with a browser on the runner, every changed message's page becomes a picture tall enough for its localizations")
    func picturesWithBrowser() async throws {
        let s = try Scenario("preview-pictures")
        defer { s.finish() }
        try Self.site(s, sections: ["before-you-go": 2, "welcome-back": 1])
        // google-chrome stand-in: logs its arguments and writes a file where --screenshot says.
        try s.fake("google-chrome", #"""
            echo "$*" >> "$FAKE_LOG"
            for argument in "$@"; do
              case "$argument" in --screenshot=*) printf 'PNG' > "${argument#--screenshot=}" ;; esac
            done
            """#)
        let script = try WorkflowFile.script(Self.preview, step: "Draw the changed sheets")
        let result = try await s.runStep(script, environment: Self.environment(s))
        #expect(result.status == 0, "\(result.all)")
        #expect(s.outputs["pictures"] == "2")
        #expect(s.read("sheets-production/before-you-go.png") == "PNG" && s.read("sheets-production/welcome-back.png") == "PNG")
        let calls = s.read("calls").split(separator: "\n")
        #expect(calls.count == 2, "one browser run per page: \(calls)")
        let folder = s.folder.path
        #expect(calls.contains { $0.hasPrefix("--headless ") && $0.contains("--window-size=1400,2400")
            && $0.hasSuffix("file://\(folder)/preview-production/messages/before-you-go.html") }, "\(calls)")
        #expect(calls.contains { $0.contains("--window-size=1400,1400") && $0.hasSuffix("file://\(folder)/preview-production/messages/welcome-back.html") },
                "\(calls)")
    }

    @Test("without a browser on the runner the step says so and draws nothing; with no changed message it does nothing")
    func noBrowserNoPictures() async throws {
        let s = try Scenario("preview-no-browser")
        defer { s.finish() }
        try Self.site(s, sections: ["before-you-go": 1])
        // A runner with bash and nothing else on its PATH: no chromium, no google-chrome.
        let bare = s.url("bare-bin")
        try FileManager.default.createDirectory(at: bare, withIntermediateDirectories: true)
        let bash = try #require(["/bin/bash", "/usr/bin/bash"].first { FileManager.default.isExecutableFile(atPath: $0) })
        try FileManager.default.createSymbolicLink(atPath: bare.appendingPathComponent("bash").path, withDestinationPath: bash)
        let script = try WorkflowFile.script(Self.preview, step: "Draw the changed sheets")
        let result = try await s.runStep(script, environment: Self.environment(s, ["PATH": bare.path]))
        #expect(result.status == 0, "\(result.all)")
        #expect(result.stdout.contains("::notice title=retention-sync manifests production::no browser on this runner; the comment links the HTML preview only"))
        #expect(s.outputs["pictures"] == nil)
        #expect(!FileManager.default.fileExists(atPath: s.url("sheets-production").path))

        let nothing = try Scenario("preview-nothing-changed")
        defer { nothing.finish() }
        try nothing.fake("google-chrome", #"echo "$*" >> "$FAKE_LOG""#)
        let quiet = try await nothing.runStep(script, environment: Self.environment(nothing))
        #expect(quiet.status == 0 && quiet.all.isEmpty, "\(quiet.all)")
        #expect(nothing.read("calls").isEmpty && nothing.outputs["pictures"] == nil)
    }

    /// Runs the comment step with a gh stand-in that finds no earlier comment; the body it posted.
    func comment(_ s: Scenario, _ extra: [String: String]) async throws -> String {
        try s.write("Plan (production): 1 to upload, 0 to set, 0 blocked, 0 to delete\n", to: "plan.md")
        try s.fake("gh", #"""
            echo "$*" >> "$FAKE_LOG"
            case "$1 $2" in
              "api --paginate") ;;
              "api --method") cp body.md posted.md ;;
              *) echo "unexpected gh $*" >&2; exit 1 ;;
            esac
            """#)
        let script = try WorkflowFile.script(Self.preview, step: "Comment on the pull request")
        let result = try await s.runStep(script, environment: Self.environment(s, [
            "GITHUB_REPOSITORY": "acme/daybreak", "PR_NUMBER": "12", "HEAD_SHA": "4e7a9c1d2b3f4a5b",
            "RUN_URL": "https://github.com/acme/daybreak/actions/runs/7",
        ].merging(extra) { $1 }))
        #expect(result.status == 0, "\(result.all)")
        #expect(s.read("calls").contains("api --method POST repos/acme/daybreak/issues/12/comments -F body=@body.md"))
        return s.read("posted.md")
    }

    @Test("the sticky comment says how many messages changed and links to them, and to their pictures when there are some")
    func commentLinksThePreview() async throws {
        let preview = "https://github.com/acme/daybreak/actions/runs/7/artifacts/101"
        let sheets = "https://github.com/acme/daybreak/actions/runs/7/artifacts/102"

        let s = try Scenario("comment-preview")
        defer { s.finish() }
        try Self.site(s, sections: ["before-you-go": 2, "welcome-back": 1, "everyday-calm": 1])
        let body = try await comment(s, ["PREVIEW_URL": preview, "SHEETS_URL": sheets])
        let lines = body.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.first == "<!-- retention-sync plan: manifests production -->")
        #expect(lines.contains("3 messages changed — [see them](\(preview)) (HTML: open index.html) · [pictures of the changed sheets](\(sheets))"), "\(body)")
        #expect(body.contains("Plan (production): 1 to upload"))

        let one = try Scenario("comment-preview-html-only")
        defer { one.finish() }
        try Self.site(one, sections: ["before-you-go": 1])
        let htmlOnly = try await comment(one, ["PREVIEW_URL": preview, "SHEETS_URL": ""])
        #expect(htmlOnly.split(separator: "\n").contains("1 message changed — [see them](\(preview)) (HTML: open index.html)"), "\(htmlOnly)")

        let none = try Scenario("comment-no-preview")
        defer { none.finish() }
        let plain = try await comment(none, ["PREVIEW_URL": "", "SHEETS_URL": ""])
        #expect(!plain.contains("changed —"), "\(plain)")
        #expect(plain.contains("Plan (production): 1 to upload"))
    }

    @Test("the preview is kept as an artifact only by a preview that succeeded, and the comment links the artifact the step uploaded")
    func stepsAgree() throws {
        let keep = try WorkflowFile.step(Self.preview, named: "Keep the preview of the changed messages")
        #expect(keep["id"]?.scalar?.text == "keep-preview")
        #expect(keep["if"]?.scalar?.text == "steps.plan.outcome == 'success'")
        #expect(keep["with"]?["path"]?.scalar?.text == "preview-${{ matrix.environment }}")
        #expect(keep["with"]?["name"]?.scalar?.text == "plan-preview-${{ steps.names.outputs.key }}-${{ matrix.environment }}")
        let pictures = try WorkflowFile.step(Self.preview, named: "Keep the pictures of the changed sheets")
        #expect(pictures["id"]?.scalar?.text == "keep-sheets")
        #expect(pictures["with"]?["path"]?.scalar?.text == "sheets-${{ matrix.environment }}")
        let comment = try WorkflowFile.step(Self.preview, named: "Comment on the pull request")
        #expect(comment["env"]?["PREVIEW_URL"]?.scalar?.text == "${{ steps.keep-preview.outputs.artifact-url }}")
        #expect(comment["env"]?["SHEETS_URL"]?.scalar?.text == "${{ steps.keep-sheets.outputs.artifact-url }}")
        #expect(try WorkflowFile.script(Self.preview, step: "Plan").contains(#"--preview "preview-$RS_ENV""#))
    }
}
