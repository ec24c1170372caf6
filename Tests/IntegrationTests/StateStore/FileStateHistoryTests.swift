import Foundation
import RetentionMessagingModels
import Runtime
import StateStore
@testable import EngineTestSupport
import Testing

/// What only the file store does with its history; `StateBackendConformanceTests` holds what every
/// backend does.
@Suite("State history in the file store")
struct FileStateHistoryTests {
    typealias Support = StateStoreTestSupport
    typealias Conformance = StateBackendConformanceTests

    @Test("the loser of a race reads who won, and replaced versions are files in a history folder beside the document")
    func historyFolder() async throws {
        let directory = try Support.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = FileStateStore(path: directory.path + "/production.json", owner: Support.production)
        let runs = try await Conformance.scriptedApplies(store)
        #expect(runs.refused?.kind == .conflict)
        #expect(runs.refused?.message == "another writer (https://github.com/acme/app/actions/runs/3) changed the state document since it was read; read it again and re-plan")
        try await Conformance.expectHistory(of: store, after: runs)
        let kept = try FileManager.default.contentsOfDirectory(atPath: directory.path + "/production.history").sorted()
        #expect(kept == ["000001.json", "000002.json"])
    }
}
