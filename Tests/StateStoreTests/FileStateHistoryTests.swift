import Foundation
import RetentionMessagingModels
import Runtime
import StateStore
import Testing

@Suite("State history in the file store")
struct FileStateHistoryTests {
    typealias Support = StateStoreTestSupport

    static func ci(_ run: Int) -> StateWriter {
        StateWriter(run: "GitHub Actions run \(run), acme/app", url: "https://github.com/acme/app/actions/runs/\(run)")
    }

    /// What an apply does to the document it read: its changes, the next serial and its name.
    static func applied(_ read: StateRead, by writer: StateWriter, at time: Date,
                        _ change: (inout StateDocument) throws -> Void) rethrows -> StateDocument {
        var document = read.document ?? StateDocument(owner: Support.production)
        try change(&document)
        document.serial = (read.document?.serial ?? 0) + 1
        document.writtenBy = writer
        document.updatedAt = time
        return document
    }

    @Test("history lists every write of a sequence of applies, and the loser of a race is told who won")
    func scriptedApplies() async throws {
        let directory = try Support.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = FileStateStore(path: directory.path + "/production.json", owner: Support.production)
        let t0 = Support.uploaded

        // Run 1 publishes everything.
        let first = try Self.applied(try await store.read(), by: Self.ci(1), at: t0) { document in
            document = try Support.document(for: Support.production)
        }
        _ = try await store.write(first, condition: .createOnly)
        // Runs 2 and 3 read the same version; run 3 writes first, run 2 loses.
        let shared = try await store.read()
        let third = try Self.applied(shared, by: Self.ci(3), at: t0.addingTimeInterval(60)) { document in
            document.snapshot = try Support.snapshot(for: Support.production, message: "stay")
        }
        let second = Self.applied(shared, by: Self.ci(2), at: t0.addingTimeInterval(61)) { document in
            document.observeReviewState("REJECTED", of: "6f1c2d3e-0000-5000-8000-000000000001", at: t0)
        }
        _ = try await store.write(third, condition: shared.writeCondition)
        let refused = await #expect(throws: StateStoreError.self) { _ = try await store.write(second, condition: shared.writeCondition) }
        #expect(refused?.kind == .conflict)
        #expect(refused?.message == "another writer (https://github.com/acme/app/actions/runs/3) changed the state document since it was read; read it again and re-plan")
        // Run 4 records a review decision.
        let fourth = Self.applied(try await store.read(), by: Self.ci(4), at: t0.addingTimeInterval(120)) { document in
            document.observeReviewState("PENDING", of: "0a1b2c3d-0000-5000-8000-000000000002", at: t0)
        }
        _ = try await store.write(fourth, condition: try await store.read().writeCondition)

        let entries = StateHistoryEntry.entries(try await store.versions())
        #expect(entries.map(\.number) == [1, 2, 3])
        #expect(entries.map(\.current) == [false, false, true])
        #expect(entries.map { $0.writer?.url } == [1, 3, 4].map { "https://github.com/acme/app/actions/runs/\($0)" })
        #expect(entries.map(\.writtenAt) == [t0, t0.addingTimeInterval(60), t0.addingTimeInterval(120)])
        let published = try #require(third.snapshot?.digest)
        #expect(entries.map(\.summary) == ["first version: published \(first.snapshot!.digest.prefix(19))",
                                           "published \(published.prefix(19))", "1 now PENDING"])
        #expect(entries.map(\.digest) == [try first.sealed().digest, try third.sealed().digest, try fourth.sealed().digest])
        let kept = try FileManager.default.contentsOfDirectory(atPath: directory.path + "/production.history").sorted()
        #expect(kept == ["000001.json", "000002.json"])
    }

    @Test("the history folder keeps only the newest versions")
    func boundedRetention() async throws {
        let directory = try Support.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var store = FileStateStore(path: directory.path + "/production.json", owner: Support.production)
        store.historyLimit = 2
        for run in 1...5 {
            let read = try await store.read()
            let document = Self.applied(read, by: Self.ci(run), at: Support.uploaded.addingTimeInterval(Double(run))) { document in
                document.defaultsRefreshCursor = run
            }
            _ = try await store.write(document, condition: read.writeCondition)
        }
        #expect(try await store.versions().map(\.number) == [3, 4, 5])
    }
}
