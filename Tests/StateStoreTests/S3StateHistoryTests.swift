import Foundation
import RetentionMessagingModels
import Runtime
import StateStore
import TestSupport
import Testing

@Suite("State history in an S3-compatible store (moto)")
struct S3StateHistoryTests {
    typealias Support = StateStoreTestSupport

    func store(_ server: MotoServer) throws -> S3StateStore {
        let configuration = try S3Configuration.fromEnvironment(server.environment(server.writer), store: "test")
        return S3StateStore(bucket: server.bucket, key: "retention-sync/production.json", owner: Support.production,
                            configuration: configuration, transport: MotoServer.client)
    }

    /// Four runs, the second of which loses a race to the third; returns the refused write's error.
    func scriptedApplies(_ store: S3StateStore) async throws -> StateStoreError? {
        let t0 = Support.uploaded
        let first = try FileStateHistoryTests.applied(try await store.read(), by: FileStateHistoryTests.ci(1), at: t0) { document in
            document = try Support.document(for: Support.production)
        }
        _ = try await store.write(first, condition: .createOnly)
        let shared = try await store.read()
        let third = try FileStateHistoryTests.applied(shared, by: FileStateHistoryTests.ci(3), at: t0.addingTimeInterval(60)) { document in
            document.snapshot = try Support.snapshot(for: Support.production, message: "stay")
        }
        let second = FileStateHistoryTests.applied(shared, by: FileStateHistoryTests.ci(2), at: t0.addingTimeInterval(61)) { document in
            document.observeReviewState("REJECTED", of: "6f1c2d3e-0000-5000-8000-000000000001", at: t0)
        }
        _ = try await store.write(third, condition: shared.writeCondition)
        let refused = await #expect(throws: StateStoreError.self) { _ = try await store.write(second, condition: shared.writeCondition) }
        let now = try await store.read()
        let fourth = FileStateHistoryTests.applied(now, by: FileStateHistoryTests.ci(4), at: t0.addingTimeInterval(120)) { document in
            document.observeReviewState("PENDING", of: "0a1b2c3d-0000-5000-8000-000000000002", at: t0)
        }
        _ = try await store.write(fourth, condition: now.writeCondition)
        return refused
    }

    func expectThreeVersions(_ store: S3StateStore) async throws {
        let entries = StateHistoryEntry.entries(try await store.versions())
        #expect(entries.map(\.number) == [1, 2, 3])
        #expect(entries.map(\.current) == [false, false, true])
        #expect(entries.map { $0.writer?.url } == [1, 3, 4].map { "https://github.com/acme/app/actions/runs/\($0)" })
        #expect(entries.last?.summary == "1 now PENDING")
    }

    @Test("without bucket versioning, each write keeps the replaced version under a history prefix; the loser of a race is told who won")
    func historyPrefix() async throws {
        let server = try await MotoServer.start()
        defer { server.stop() }
        let store = try store(server)
        #expect(try await store.bucketKeepsVersions() == false)
        let refused = try await scriptedApplies(store)
        #expect(refused?.kind == .conflict)
        #expect(refused?.message == "another writer (https://github.com/acme/app/actions/runs/3) changed the state document since it was read first (HTTP 412); read it again and re-plan")
        try await expectThreeVersions(store)
    }

    @Test("with bucket versioning, the history is the object's own versions")
    func objectVersions() async throws {
        let server = try await MotoServer.start(versioning: true)
        defer { server.stop() }
        let store = try store(server)
        #expect(try await store.bucketKeepsVersions() == true)
        _ = try await scriptedApplies(store)
        try await expectThreeVersions(store)
    }

    @Test("the history prefix is a ring: it keeps at most historyLimit versions")
    func boundedRing() async throws {
        let server = try await MotoServer.start()
        defer { server.stop() }
        var store = try store(server)
        store.historyLimit = 2
        for run in 1...5 {
            let read = try await store.read()
            let document = FileStateHistoryTests.applied(read, by: FileStateHistoryTests.ci(run), at: Support.uploaded.addingTimeInterval(Double(run))) { document in
                document.defaultsRefreshCursor = run
            }
            _ = try await store.write(document, condition: read.writeCondition)
        }
        #expect(try await store.versions().map(\.number) == [3, 4, 5])
    }
}
