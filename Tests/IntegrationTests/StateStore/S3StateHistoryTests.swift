import Foundation
import RetentionMessagingModels
import Runtime
import StateStore
import TestSupport
@testable import EngineTestSupport
import Testing

@Suite("State history in an S3-compatible store (moto)")
struct S3StateHistoryTests {
    typealias Support = StateStoreTestSupport

    func store(_ server: MotoServer) throws -> S3StateStore {
        let configuration = try S3Configuration.fromEnvironment(server.environment(server.writer), store: "test")
        return S3StateStore(bucket: server.bucket, key: "retention-sync/production.json", owner: Support.production,
                            configuration: configuration, transport: MotoServer.client)
    }

    typealias Conformance = StateBackendConformanceTests

    func expectThreeVersions(_ store: S3StateStore, after runs: Conformance.ScriptedApplies) async throws {
        try await Conformance.expectHistory(of: store, after: runs)
    }

    @Test("without bucket versioning, each write keeps the replaced version under a history prefix; the loser of a race is told who won")
    func historyPrefix() async throws {
        let server = try await MotoServer.start()
        defer { server.stop() }
        let store = try store(server)
        #expect(try await store.bucketKeepsVersions() == false)
        let runs = try await Conformance.scriptedApplies(store)
        #expect(runs.refused?.kind == .conflict)
        #expect(runs.refused?.message == "another writer (https://github.com/acme/app/actions/runs/3) changed the state document since it was read first (HTTP 412); read it again and re-plan")
        try await expectThreeVersions(store, after: runs)
    }

    @Test("with bucket versioning, the history is the object's own versions")
    func objectVersions() async throws {
        let server = try await MotoServer.start(versioning: true)
        defer { server.stop() }
        let store = try store(server)
        #expect(try await store.bucketKeepsVersions() == true)
        let runs = try await Conformance.scriptedApplies(store)
        try await expectThreeVersions(store, after: runs)
    }
}
