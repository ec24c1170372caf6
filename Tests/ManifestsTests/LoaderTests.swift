import Basics
import Foundation
import Manifests
import RetentionMessagingModels
import Testing
import YAML

@Suite("Loading a manifest directory")
struct LoaderTests {
    /// Writes files into a fresh temporary directory.
    private func directory(_ files: [String: String]) throws -> URL {
        let url = loaderScratchRoot.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        for (name, text) in files {
            let file = url.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: file)
        }
        return url
    }

    static let app = """
    apiVersion: retention-sync/v1
    kind: App
    bundleId: com.example.app
    environments: { sandbox: {} }
    products:
      - { id: b.yearly, locales: [ja, en-US] }
      - { id: a.monthly, locales: [en-US] }
    """

    static let message = """
    apiVersion: retention-sync/v1
    kind: Message
    name: %@
    localizations:
      ja: { header: こんにちは, body: また会いましょう }
      en-US: { header: Hello, body: See you soon }
    """

    @Test("reads every .yaml and .yml file of the directory, several documents each, but not subdirectories")
    func readsFilesAndDocuments() throws {
        let url = try directory([
            "app.yaml": Self.app,
            "messages.yml": String(format: Self.message, "zeta") + "\n---\n" + String(format: Self.message, "alpha"),
            "defaults.yaml": "apiVersion: retention-sync/v1\nkind: Defaults\ndefaults: [{ products: \"*\", locales: \"*\", message: alpha }]\n",
            "nested/ignored.yaml": "apiVersion: retention-sync/v1\nkind: Nonsense\n",
            "notes.txt": "not a manifest",
        ])
        let (set, diagnostics) = ManifestLoader.loadAndValidate(directory: url, displayPath: "m")
        #expect(diagnostics.map(\.code) == ["unused-message"])
        let loaded = try #require(set)
        #expect(loaded.messages.map(\.name) == ["alpha", "zeta"])
        #expect(loaded.messages[0].localizations.map(\.locale) == ["en-US", "ja"])
        #expect(loaded.app.products.map(\.id) == ["a.monthly", "b.yearly"])
        #expect(loaded.app.products[1].locales == ["en-US", "ja"])
    }

    @Test("Defaults with * expand to every declared product and locale, sorted by product then locale")
    func defaultsExpand() throws {
        let url = try directory([
            "app.yaml": Self.app,
            "messages.yaml": String(format: Self.message, "alpha"),
            "defaults.yaml": "apiVersion: retention-sync/v1\nkind: Defaults\ndefaults: [{ products: \"*\", locales: \"*\", message: alpha }]\n",
        ])
        let set = try #require(ManifestLoader.load(directory: url, displayPath: "m").set)
        #expect(set.defaults.map { "\($0.productId)/\($0.locale)" } == ["a.monthly/en-US", "b.yearly/en-US", "b.yearly/ja"])
        #expect(set.defaults.allSatisfy { $0.message == "alpha" && $0.location.file == "m/defaults.yaml" })
    }

    @Test("a product's en_US is reported once, where it is written, not again at a Defaults '*' that covers it")
    func misspeltLocaleReportedOnce() throws {
        let url = try directory([
            "app.yaml": Self.app.replacingOccurrences(of: "{ id: a.monthly, locales: [en-US] }", with: "{ id: a.monthly, locales: [en_US] }"),
            "messages.yaml": String(format: Self.message, "alpha"),
            "defaults.yaml": "apiVersion: retention-sync/v1\nkind: Defaults\ndefaults: [{ products: \"*\", locales: \"*\", message: alpha }]\n",
        ])
        let (_, diagnostics) = ManifestLoader.loadAndValidate(directory: url, displayPath: "m")
        #expect(diagnostics.map(\.code) == ["invalid-locale"])
        #expect(diagnostics.first?.location?.file == "m/app.yaml")
        #expect(diagnostics.first?.hint == "use en-US")
    }

    @Test("every problem is reported in one run: a YAML error in one file and a length error in another")
    func allProblemsInOneRun() throws {
        let long = String(repeating: "x", count: 67)
        let url = try directory([
            "app.yaml": Self.app,
            "broken.yaml": "apiVersion: retention-sync/v1\nkind: Image\nname: [unclosed\n",
            "messages.yaml": String(format: Self.message, "alpha").replacingOccurrences(of: "header: Hello", with: "header: \(long)"),
            "defaults.yaml": "apiVersion: retention-sync/v1\nkind: Defaults\ndefaults: [{ products: \"*\", locales: \"*\", message: alpha }]\n",
        ])
        let (_, diagnostics) = ManifestLoader.loadAndValidate(directory: url, displayPath: "m")
        #expect(diagnostics.map(\.code) == ["yaml-syntax", "header-too-long"])
        #expect(diagnostics.map { $0.location?.file } == ["m/broken.yaml", "m/messages.yaml"])
        #expect(diagnostics.last?.location == SourceLocation(file: "m/messages.yaml", line: 6, column: 20))
    }

    @Test("a directory that does not exist is one error without a place, and no set")
    func missingDirectory() {
        let (set, diagnostics) = ManifestLoader.load(directory: URL(fileURLWithPath: "/nonexistent/manifests"), displayPath: "manifests")
        #expect(set == nil)
        #expect(diagnostics.map(\.code) == ["manifest-directory-unreadable"])
        #expect(diagnostics.first?.location == nil)
    }

    @Test("diagnostics name files under the path as the user wrote it")
    func displayPaths() throws {
        let url = try directory(["app.yaml": Self.app.replacingOccurrences(of: "bundleId", with: "bundleID")])
        for (written, file) in [("manifests", "manifests/app.yaml"), ("manifests/", "manifests/app.yaml"), (".", "app.yaml")] {
            let (_, diagnostics) = ManifestLoader.load(directory: url, displayPath: written)
            #expect(diagnostics.first?.location?.file == file)
        }
    }

    @Test("field locations point at each value, so a reconciler can cite them")
    func fieldLocations() throws {
        let url = try directory(["app.yaml": Self.app, "messages.yaml": String(format: Self.message, "alpha")])
        let set = try #require(ManifestLoader.load(directory: url, displayPath: "m").set)
        let english = try #require(set.messages.first?.localization("en-US"))
        #expect(english.location(of: .header) == SourceLocation(file: "m/messages.yaml", line: 6, column: 20))
        #expect(english.location(of: .body) == SourceLocation(file: "m/messages.yaml", line: 6, column: 33))
        #expect(english.location == SourceLocation(file: "m/messages.yaml", line: 6, column: 3))
    }
}

/// One scratch directory per test process, removed when the process exits.
private let loaderScratchRoot: URL = {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("manifests-tests-\(getpid())")
    atexit {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("manifests-tests-\(getpid())").path
        try? FileManager.default.removeItem(atPath: path)
    }
    return url
}()
