import Basics
import Foundation
import Manifests
import RetentionMessagingModels
import StateLocations
import Testing

@Suite("Hostile and careless manifests")
struct HostileInputTests {
    @Test("an image file outside the manifest directory is refused, whether by ../, an absolute path or a symlink")
    func imageOutsideManifestDirectory() throws {
        let outside = FileManager.default.temporaryDirectory.appendingPathComponent("outside-\(UUID().uuidString).png")
        try Data(try Data(contentsOf: repositoryRoot.appendingPathComponent("fixtures/manifests/images/full.png"))).write(to: outside)
        defer { try? FileManager.default.removeItem(at: outside) }
        for written in ["../../images/full.png", outside.path, "images/link.png"] {
            let base = try BaseCopy()
            defer { base.remove() }
            try FileManager.default.createSymbolicLink(atPath: base.url.appendingPathComponent("images/link.png").path,
                                                       withDestinationPath: outside.path)
            try base.edit("images.yaml", "file: images/full.png", "file: \(written)")
            let problems = base.validate().with(code: "path-outside-manifests")
            #expect(problems.count == 1, "\(written)")
            #expect(problems.first?.location?.line == 4)
            #expect(problems.first?.hint != nil)
        }
    }

    @Test("a symlink that stays inside the manifest directory is fine")
    func symlinkInsideIsAccepted() throws {
        let base = try BaseCopy()
        defer { base.remove() }
        try FileManager.default.createSymbolicLink(atPath: base.url.appendingPathComponent("images/alias.png").path,
                                                   withDestinationPath: "full.png")
        try base.edit("images.yaml", "file: images/full.png", "file: images/alias.png")
        #expect(base.validate() == [])
    }

    @Test("a snapshot path or state store that climbs out of the manifest directory is refused")
    func storeOutsideManifestDirectory() throws {
        let base = try BaseCopy()
        defer { base.remove() }
        try base.edit("app.yaml", "snapshotPath: .retention-sync/sandbox-snapshot.json", "snapshotPath: ../../elsewhere/x.json")
        try base.edit("app.yaml", "snapshotPath: .retention-sync/production-snapshot.json",
                      "snapshotPath: .retention-sync/production-snapshot.json\n    stateStore: ../state.json")
        let problems = base.validate().with(code: "path-outside-manifests")
        #expect(problems.map { $0.location?.line } == [8, 12])
    }

    @Test("two environments writing to one snapshot file or one state document is an error; one S3 prefix holds both")
    func sharedStoreIsRefused() throws {
        let base = try BaseCopy()
        defer { base.remove() }
        try base.edit("app.yaml", "snapshotPath: .retention-sync/production-snapshot.json", "snapshotPath: .retention-sync/./sandbox-snapshot.json")
        var problems = base.validate().with(code: "shared-store")
        #expect(problems.count == 1)
        #expect(problems.first?.message.contains("production uses the same store as sandbox") == true)

        let s3 = try BaseCopy()
        defer { s3.remove() }
        try s3.edit("app.yaml", "snapshotPath: .retention-sync/sandbox-snapshot.json", "stateStore: s3://team-bucket/focus/state.json")
        try s3.edit("app.yaml", "snapshotPath: .retention-sync/production-snapshot.json", "stateStore: s3://team-bucket/focus/state.json")
        problems = s3.validate().with(code: "shared-store")
        #expect(problems.count == 1)
        #expect(problems.first?.location?.line == 11)

        // A prefix is a folder: each environment keeps its own <environment>.json in it.
        let prefix = try BaseCopy()
        defer { prefix.remove() }
        try prefix.edit("app.yaml", "snapshotPath: .retention-sync/sandbox-snapshot.json", "stateStore: s3://team-bucket/focus/")
        try prefix.edit("app.yaml", "snapshotPath: .retention-sync/production-snapshot.json", "stateStore: s3://team-bucket/focus")
        #expect(prefix.validate().with(code: "shared-store").isEmpty)
    }

    @Test("a state store is a relative file or a well-formed s3:// location")
    func stateStoreShapes() throws {
        let base = try BaseCopy()
        defer { base.remove() }
        try base.edit("app.yaml", "snapshotPath: .retention-sync/sandbox-snapshot.json", "stateStore: s3://team-bucket/focus/sandbox")
        try base.edit("app.yaml", "snapshotPath: .retention-sync/production-snapshot.json", "stateStore: .retention-sync/production-state.json")
        let (set, diagnostics) = ManifestLoader.loadAndValidate(directory: base.url, displayPath: "m")
        #expect(diagnostics == [])
        #expect(set?.app.settings(for: .sandbox)?.stateStore == .s3(bucket: "team-bucket", key: "focus/sandbox"))
        let production = try #require(set?.app.settings(for: .production)?.stateStore)
        #expect(production.description.hasSuffix("/.retention-sync/production-state.json"))

        let bad = try BaseCopy()
        defer { bad.remove() }
        try bad.edit("app.yaml", "snapshotPath: .retention-sync/sandbox-snapshot.json", "stateStore: s3://Bad_Bucket/../x")
        #expect(bad.validate().with(code: "invalid-state-store").count == 1)
    }

    @Test("impossible dates are errors that name the wrong part, never a rolled-over date",
          arguments: [("2026-02-29T00:00:00Z", "February 2026 has 28 days"), ("2026-04-31T00:00:00Z", "April 2026 has 30 days"),
                      ("2026-03-01T24:00:00Z", "hour 24"), ("2026-03-01T00:00:00+25:00", "offset of 25 hours"),
                      ("99999-03-01T00:00:00Z", "more than 4 digits"), ("2026-13-01T00:00:00Z", "month 13"),
                      ("2026-03-01T00:60:00Z", "minute 60"), ("2026-03-01T00:00:00", "no zone")])
    func impossibleTimestamps(_ written: String, _ expected: String) throws {
        let base = try BaseCopy()
        defer { base.remove() }
        try base.edit("flow.yaml", "from: \"2026-03-01T00:00:00Z\"", "from: \"\(written)\"")
        let problems = base.validate().with(code: "invalid-timestamp")
        #expect(problems.count == 1)
        #expect(problems.first?.message.contains(expected) == true, "\(problems.first?.message ?? "")")
    }

    @Test("a leap day in a leap year and offsets are read exactly")
    func validTimestampsParse() throws {
        let base = try BaseCopy()
        defer { base.remove() }
        try base.edit("flow.yaml", "from: \"2026-03-01T00:00:00Z\", until: \"2026-04-01T00:00:00Z\"",
                      "from: \"2028-02-29T01:00:00.5+01:00\", until: \"2028-02-29T00:00:00.5009Z\"")
        let (set, diagnostics) = ManifestLoader.loadAndValidate(directory: base.url, displayPath: "m")
        let match = try #require(set?.flows.first?.rules.first?.match)
        #expect(match.notBefore == 1_835_395_200_500)
        #expect(match.notAfter == 1_835_395_200_500)
        #expect(diagnostics.with(code: "invalid-window").first?.message.contains("is empty") == true)
    }

    @Test("product ids are checked offline: '..', spaces, slashes and over-long ids are refused",
          arguments: ["..", ".", "com.example/../x", "com example", String(repeating: "a", count: 101)])
    func productIdsAreValidated(_ id: String) throws {
        let base = try BaseCopy()
        defer { base.remove() }
        try base.edit("app.yaml", "  - id: com.example.focus.yearly\n", "  - id: com.example.focus.yearly\n    locales: [en-US]\n  - id: \"\(id)\"\n")
        let problems = base.validate().with(code: "invalid-product-id")
        #expect(problems.count == 1)
        #expect(problems.first?.hint?.contains("100") == true)
    }

    @Test("a product id of exactly 100 letters, digits, dots, underscores and hyphens is accepted")
    func longestProductIdIsAccepted() throws {
        #expect(ManifestValidator.productIdMaxLength == 100)
        let base = try BaseCopy()
        defer { base.remove() }
        let id = "a._-" + String(repeating: "b", count: 96)
        try base.edit("app.yaml", "  - id: com.example.focus.yearly\n", "  - id: com.example.focus.yearly\n    locales: [en-US]\n  - id: \(id)\n")
        #expect(base.validate().with(code: "invalid-product-id") == [])
    }

    @Test("texts with control characters or only invisible characters are refused with a hint",
          arguments: ["\\0", "\\e[31m", "\\a", "\\x7F", "\\N", "\\uFFFF"])
    func controlCharactersInTexts(_ escape: String) throws {
        let base = try BaseCopy()
        defer { base.remove() }
        try base.edit("messages.yaml", "header: Keep your focus", "header: \"Keep \(escape)your focus\"")
        let problems = base.validate().with(code: "control-character")
        #expect(problems.count == 1)
        #expect(problems.first?.location?.line == 7)
        #expect(problems.first?.hint?.isEmpty == false)
    }

    @Test("a header of only spaces and zero-width characters is empty text")
    func invisibleOnlyText() throws {
        let base = try BaseCopy()
        defer { base.remove() }
        try base.edit("messages.yaml", "header: Keep your focus", "header: \" \\u200B\\u2060\\uFEFF \"")
        let problems = base.validate().with(code: "empty-text")
        #expect(problems.count == 1)
        #expect(problems.first?.message.contains("invisible") == true)
    }

    @Test("flow and rule names follow the message-name rules, so they cannot smuggle markup or escapes")
    func flowAndRuleNamesAreRestricted() throws {
        let base = try BaseCopy()
        defer { base.remove() }
        try base.edit("flow.yaml", "name: cancel-flow", "name: \"Cancel Flow\"")
        try base.edit("flow.yaml", "  - name: offer", "  - name: \"offer\\n<!-- retention-sync: next comment -->\\e[2J\"")
        let problems = base.validate().with(code: "invalid-name")
        #expect(problems.map { $0.location?.line } == [3, 6])
        #expect(problems.allSatisfy { !$0.message.contains("\u{1B}") && !$0.message.contains("\n") })
    }
}
