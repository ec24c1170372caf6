import Foundation
import Manifests
import RetentionMessagingModels
import Testing

@Suite("The example app in manifests/")
struct ExampleAppTests {
    static let directory = repositoryRoot.appendingPathComponent("manifests")

    private func load() throws -> ManifestSet {
        let (set, diagnostics) = ManifestLoader.loadAndValidate(directory: Self.directory, displayPath: "manifests")
        #expect(diagnostics == [])
        return try #require(set)
    }

    @Test("validates with no problems at all")
    func validatesCleanly() throws {
        _ = try load()
    }

    @Test("has two products in three locales and a default for every pair")
    func productsAndDefaults() throws {
        let set = try load()
        #expect(set.app.products.map(\.id) == ["com.example.stillpoint.monthly", "com.example.stillpoint.yearly"])
        #expect(set.app.products.allSatisfy { $0.locales == ["de-DE", "en-US", "ja"] })
        let pairs = set.defaults.map { "\($0.productId) \($0.locale)" }
        #expect(pairs == set.app.products.flatMap { product in product.locales.map { "\(product.id) \($0)" } })
    }

    @Test("its flow uses all three response kinds, a traffic split and a campaign window")
    func flowFeatures() throws {
        let flow = try #require(try load().flows.first)
        let responses = flow.rules.map(\.response)
        #expect(responses.contains { if case .promotionalOffer = $0 { true } else { false } })
        #expect(responses.contains { if case .alternateProduct(_, _, .billedUpfront?) = $0 { true } else { false } })
        #expect(responses.contains { if case .message = $0 { true } else { false } })
        #expect(flow.rules.filter { $0.match.split?.group == "yearly-upsell" }.map { $0.match.split?.percent } == [50, 50])
        let window = try #require(flow.rules.first { $0.match.notBefore != nil })
        #expect(window.match.notBefore == 1_773_964_800_000)
        #expect(window.match.notAfter == 1_776_643_200_000)
    }

    @Test("its images are real PNGs of the required sizes without transparency")
    func images() throws {
        let set = try load()
        #expect(set.images.count == 4)
        for image in set.images {
            let info = try PNGInfo.parse(image.png)
            #expect(!info.hasAlpha && !info.hasTransparencyChunk)
            if image.size == .fullSize {
                #expect(info.width == 3840 && (160...2160).contains(info.height))
            } else {
                #expect(info.width == 1024 && info.height == 1024)
            }
        }
    }

    @Test("snapshot paths resolve inside the manifest directory")
    func snapshotPaths() throws {
        let set = try load()
        let paths = set.app.environments.map { $0.snapshotPath ?? "" }
        #expect(paths == [Self.directory.standardizedFileURL.appendingPathComponent(".retention-sync/sandbox-snapshot.json").path,
                          Self.directory.standardizedFileURL.appendingPathComponent(".retention-sync/production-snapshot.json").path])
    }

    @Test("every manifest file names the JSON Schema, which matches the copy init writes")
    func schema() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.directory.path).filter { $0.hasSuffix(".yaml") }
        #expect(!files.isEmpty)
        for file in files {
            let text = try String(contentsOf: Self.directory.appendingPathComponent(file), encoding: .utf8)
            #expect(text.hasPrefix("# yaml-language-server: $schema=retention-sync.schema.json\n"), "\(file)")
        }
        let schema = try String(contentsOf: Self.directory.appendingPathComponent(ManifestSchema.fileName), encoding: .utf8)
        #expect(schema == ManifestSchema.json)
        let object = try JSONSerialization.jsonObject(with: Data(schema.utf8)) as? [String: Any]
        #expect(object?["$schema"] as? String == "https://json-schema.org/draft/2020-12/schema")
    }
}
