import Basics
import Foundation
import HTTPCore
import RetentionMessagingModels
import Runtime
import StateLocations
import StateStore
import TestSupport
@testable import EngineTestSupport
import Testing

/// One suite every registered backend passes, run once per scheme: the document with conditional
/// writes, its history, side documents and plain objects. A new backend adds its harness below (the
/// switch will not compile without it) and gets the whole suite; what only one backend does (a
/// bucket's object versions, the words of an HTTP 412) stays in that backend's own tests.
@Suite("Every state backend")
struct StateBackendConformanceTests {
    typealias Support = StateStoreTestSupport

    /// A fresh, empty place of one backend, reachable with `environment` through `transport`.
    struct Harness: Sendable {
        var root: StateLocation
        var environment: [String: String]
        var transport: any HTTPTransport
        var stop: @Sendable () -> Void

        var backend: any StateBackend { StateStores.backend(for: root) }

        func store(_ owner: StateOwner = Support.production) throws -> any CompleteStateStore {
            try StateStores.open(root, owner: owner, environment: environment, transport: transport)
        }

        func objects() throws -> any ObjectStore {
            try backend.objectStore(at: root, environment: environment, transport: { transport })
        }

        static func start(_ scheme: StateLocation.Scheme, versioning: Bool = false) async throws -> Harness {
            switch scheme {
            case .file:
                let directory = try Support.temporaryDirectory()
                return Harness(root: .file(path: directory.path), environment: [:], transport: MotoServer.client,
                               stop: { try? FileManager.default.removeItem(at: directory) })
            case .s3:
                let server = try await MotoServer.start(versioning: versioning)
                return Harness(root: .s3(bucket: server.bucket, key: "retention-sync"), environment: server.environment(server.writer),
                               transport: MotoServer.client, stop: { server.stop() })
            }
        }
    }

    static func ci(_ run: Int) -> StateWriter {
        StateWriter(run: "GitHub Actions run \(run), acme/app", url: "https://github.com/acme/app/actions/runs/\(run)")
    }

    /// What an apply does to the document it read: its changes, the next serial and its name.
    static func applied(_ read: StateRead, by writer: StateWriter, at time: UTCTime,
                        _ change: (inout StateDocument) throws -> Void) rethrows -> StateDocument {
        var document = read.document ?? StateDocument(owner: Support.production)
        try change(&document)
        document.serial = (read.document?.serial ?? 0) + 1
        document.writtenBy = writer
        document.updatedAt = time
        return document
    }

    /// The documents of four runs, the second of which loses a race to the third.
    struct ScriptedApplies {
        var first: StateDocument
        var third: StateDocument
        var fourth: StateDocument
        var refused: StateStoreError?
    }

    /// Run 1 publishes everything; runs 2 and 3 read the same version and run 3 writes first, so
    /// run 2 loses; run 4 records a review decision.
    static func scriptedApplies(_ store: any CompleteStateStore) async throws -> ScriptedApplies {
        let t0 = Support.uploaded
        let first = try applied(try await store.read(), by: ci(1), at: t0) { document in
            document = try Support.document(for: Support.production)
        }
        _ = try await store.write(first, condition: .createOnly)
        let shared = try await store.read()
        let third = try applied(shared, by: ci(3), at: t0.adding(seconds: 60)) { document in
            document.snapshot = try Support.snapshot(for: Support.production, message: "stay")
        }
        let second = applied(shared, by: ci(2), at: t0.adding(seconds: 61)) { document in
            document.observeReviewState("REJECTED", of: "6f1c2d3e-0000-5000-8000-000000000001", at: t0)
        }
        _ = try await store.write(third, condition: shared.writeCondition)
        let refused = await #expect(throws: StateStoreError.self) { _ = try await store.write(second, condition: shared.writeCondition) }
        let now = try await store.read()
        let fourth = applied(now, by: ci(4), at: t0.adding(seconds: 120)) { document in
            document.observeReviewState("PENDING", of: "0a1b2c3d-0000-5000-8000-000000000002", at: t0)
        }
        _ = try await store.write(fourth, condition: now.writeCondition)
        return ScriptedApplies(first: first, third: third, fourth: fourth, refused: refused)
    }

    /// What every backend's history says after `scriptedApplies`.
    static func expectHistory(of store: any CompleteStateStore, after runs: ScriptedApplies) async throws {
        let t0 = Support.uploaded
        let entries = StateHistoryEntry.entries(try await store.versions())
        #expect(entries.map(\.number) == [1, 2, 3])
        #expect(entries.map(\.current) == [false, false, true])
        #expect(entries.map { $0.writer?.url } == [1, 3, 4].map { "https://github.com/acme/app/actions/runs/\($0)" })
        #expect(entries.map(\.writtenAt) == [t0, t0.adding(seconds: 60), t0.adding(seconds: 120)])
        let published = try #require(runs.third.snapshot?.digest)
        let firstDigest = try #require(runs.first.snapshot?.digest)
        #expect(entries.map(\.summary) == ["first version: published \(firstDigest.prefix(19))",
                                           "published \(published.prefix(19))", "1 now PENDING"])
        #expect(entries.map(\.digest) == [try runs.first.sealed().digest, try runs.third.sealed().digest,
                                          try runs.fourth.sealed().digest])
    }

    @Test("every registered backend has a harness here", arguments: StateStores.all.map(\.scheme))
    func everyBackendIsCovered(scheme: StateLocation.Scheme) async throws {
        let harness = try await Harness.start(scheme)
        defer { harness.stop() }
        #expect(harness.backend.scheme == scheme)
    }

    @Test("a fresh store reads as empty; the first write happens once; a writer that read an older version loses",
          arguments: StateLocation.Scheme.allCases)
    func conditionalWrites(scheme: StateLocation.Scheme) async throws {
        let harness = try await Harness.start(scheme)
        defer { harness.stop() }
        let store = try harness.store()
        #expect(store.location == harness.root.document(for: .production))
        let empty = try await store.read()
        #expect(empty.isEmpty)
        let document = try Support.document(for: Support.production)
        let version = try await store.write(document, condition: .createOnly)
        let again = await #expect(throws: StateStoreError.self) { _ = try await store.write(document, condition: .createOnly) }
        #expect(again?.kind == .conflict)
        let read = try await store.read()
        #expect(read.version == version)
        #expect(read.document?.snapshot == document.snapshot)
        #expect(try await store.poll(since: version) == .unchanged)
    }

    @Test("history lists every write of a sequence of applies, and the loser of a race is told who won",
          arguments: StateLocation.Scheme.allCases)
    func history(scheme: StateLocation.Scheme) async throws {
        let harness = try await Harness.start(scheme)
        defer { harness.stop() }
        let store = try harness.store()
        let runs = try await Self.scriptedApplies(store)
        #expect(runs.refused?.kind == .conflict)
        #expect(runs.refused?.message.hasPrefix("another writer (https://github.com/acme/app/actions/runs/3) changed the state document since it was read") == true)
        try await Self.expectHistory(of: store, after: runs)
    }

    @Test("the history keeps only the newest historyLimit versions", arguments: StateLocation.Scheme.allCases)
    func boundedHistory(scheme: StateLocation.Scheme) async throws {
        let harness = try await Harness.start(scheme)
        defer { harness.stop() }
        var store = try harness.store()
        store.historyLimit = 2
        for run in 1...5 {
            let read = try await store.read()
            let document = Self.applied(read, by: Self.ci(run), at: Support.uploaded.adding(seconds: Double(run))) { document in
                document.defaultsRefreshCursor = run
            }
            _ = try await store.write(document, condition: read.writeCondition)
        }
        #expect(try await store.versions().map(\.number) == [3, 4, 5])
    }

    @Test("a side document is absent until written, then reads back whole beside the state", arguments: StateLocation.Scheme.allCases)
    func sideDocuments(scheme: StateLocation.Scheme) async throws {
        let harness = try await Harness.start(scheme)
        defer { harness.stop() }
        let store = try harness.store()
        #expect(try await store.readSide("notifications.json") == nil)
        let bytes = Data(#"{"told":["a","b"]}"#.utf8)
        try await store.writeSide("notifications.json", bytes)
        #expect(try await store.readSide("notifications.json") == bytes)
        #expect(store.sideLocation("notifications.json").hasSuffix("production.notifications.json"))
        // The state document itself is untouched by a side document.
        #expect(try await store.read().isEmpty)
    }

    @Test("plain objects beside the state: put whole, get, list by prefix in byte order", arguments: StateLocation.Scheme.allCases)
    func plainObjects(scheme: StateLocation.Scheme) async throws {
        let harness = try await Harness.start(scheme)
        defer { harness.stop() }
        let objects = try harness.objects()
        #expect(try await objects.get("events/none.ndjson") == nil)
        for key in ["events/b/2.ndjson", "events/a/1.ndjson", "other/x.ndjson"] {
            try await objects.put(key, Array("line of \(key)\n".utf8))
        }
        #expect(try await objects.list(prefix: "events/") == ["events/a/1.ndjson", "events/b/2.ndjson"])
        #expect(try await objects.get("events/a/1.ndjson") == Data("line of events/a/1.ndjson\n".utf8))
        // Where a backend keeps the objects in a folder here, readers use it directly; else they copy.
        if let folder = harness.backend.localFolder(of: harness.root) {
            #expect(FileManager.default.contents(atPath: folder.appendingPathComponent("events/b/2.ndjson").path)
                    == Data("line of events/b/2.ndjson\n".utf8))
        }
    }
}
