import Foundation
import Manifests
import Testing
import TestSupport
import Views

/// Every directory under fixtures/manifests/invalid holds a manifest set with one fault and, in
/// expected.txt, the exact diagnostics `validate` prints for it. `UPDATE_GOLDEN=1` rewrites them (and fails).
@Suite("The invalid-manifest corpus")
struct InvalidCorpusTests {
    static let corpus = repositoryRoot.appendingPathComponent("fixtures/manifests/invalid")
    static let cases: [String] = ((try? FileManager.default.contentsOfDirectory(atPath: corpus.path)) ?? [])
        .filter { !$0.hasPrefix(".") }.sorted()

    @Test("the corpus covers at least 30 faults")
    func corpusIsLargeEnough() {
        #expect(Self.cases.count >= 30)
    }

    @Test("each invalid set gets exactly its golden diagnostics", arguments: cases)
    func goldenDiagnostics(_ name: String) throws {
        let displayPath = "fixtures/manifests/invalid/\(name)"
        let (_, diagnostics) = ManifestLoader.loadAndValidate(directory: Self.corpus.appendingPathComponent(name),
                                                              displayPath: displayPath)
        let rendered = DiagnosticRenderer.render(diagnostics, format: .text, color: false)
        // Recording (UPDATE_GOLDEN=1) fails the run, as every golden does, so it never passes unnoticed.
        Golden.expect(rendered, matches: "\(displayPath)/expected.txt")
        #expect(!diagnostics.isEmpty, "an invalid case must produce a diagnostic")
    }

    @Test("the base every case is copied from is clean")
    func baseIsValid() {
        let base = repositoryRoot.appendingPathComponent("fixtures/manifests/valid/base")
        let (set, diagnostics) = ManifestLoader.loadAndValidate(directory: base, displayPath: "fixtures/manifests/valid/base")
        #expect(set != nil)
        #expect(diagnostics == [])
    }
}
