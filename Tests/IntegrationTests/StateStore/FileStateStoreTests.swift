import Foundation
import RetentionMessagingModels
import Runtime
import StateLocations
import StateStore
import TestSupport
@testable import EngineTestSupport
import Testing

@Suite("File state store")
struct FileStateStoreTests {
    typealias Support = StateStoreTestSupport

    func withDirectory(_ body: (URL) async throws -> Void) async throws {
        let directory = try Support.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await body(directory)
    }

    func store(_ directory: URL, _ location: String = ".retention-sync", owner: StateOwner = Support.sandbox) throws -> any StateDocumentStore {
        let parsed = try StateLocation.parse(location, relativeTo: directory, confinedTo: directory)
        return try StateStores.open(parsed, owner: owner, environment: [:], transport: MotoServer.client)
    }

    @Test("the first apply on a fresh checkout creates the folder and the document, with no setup")
    func roundTrip() async throws {
        try await withDirectory { directory in
            let store = try store(directory)
            #expect(store.location == .file(path: directory.path + "/.retention-sync/sandbox.json"))
            #expect(try await store.read() == .empty)
            let document = try Support.document(for: Support.sandbox)
            let version = try await store.write(document, condition: .createOnly)
            let read = try await store.read()
            #expect(read.document == (try document.sealed()))
            #expect(read.version == version)
            let bytes = try Data(contentsOf: URL(fileURLWithPath: directory.path + "/.retention-sync/sandbox.json"))
            #expect(bytes == (try document.encoded()))
            // Only the document and its lock file are left behind, no temporary file.
            let names = try FileManager.default.contentsOfDirectory(atPath: directory.path + "/.retention-sync").sorted()
            #expect(names == [".sandbox.json.lock", "sandbox.json"])
        }
    }

    @Test("of eight applies racing from the same version exactly one writes; the others get a conflict")
    func racingWriters() async throws {
        try await withDirectory { directory in
            let store = try store(directory)
            let base = try await store.write(try Support.document(for: Support.sandbox, message: "base"), condition: .createOnly)
            let outcomes = try await withThrowingTaskGroup(of: (String, StateStoreError.Kind?).self) { group in
                for index in 0..<8 {
                    group.addTask {
                        let document = try Support.document(for: Support.sandbox, message: "writer\(index)")
                        do {
                            _ = try await store.write(document, condition: .ifMatch(base))
                            return ("writer\(index)", nil)
                        } catch let error as StateStoreError {
                            return ("writer\(index)", error.kind)
                        }
                    }
                }
                return try await group.reduce(into: [(String, StateStoreError.Kind?)]()) { $0.append($1) }
            }
            let winners = outcomes.filter { $0.1 == nil }.map(\.0)
            #expect(winners.count == 1)
            #expect(outcomes.filter { $0.1 == .conflict }.count == 7)
            #expect(try await store.read().document?.snapshot?.rules.first?.response.message == winners.first)
        }
    }

    @Test("two first applies racing on an empty store: one creates, the other gets a conflict")
    func racingCreators() async throws {
        try await withDirectory { directory in
            let store = try store(directory)
            async let first: StateStoreError.Kind? = attempt(store, "first")
            async let second: StateStoreError.Kind? = attempt(store, "second")
            let results = await [first, second]
            #expect(results.filter { $0 == nil }.count == 1)
            #expect(results.filter { $0 == .conflict }.count == 1)
        }
    }

    func attempt(_ store: any StateDocumentStore, _ message: String) async -> StateStoreError.Kind? {
        do {
            _ = try await store.write(try Support.document(for: Support.sandbox, message: message), condition: .createOnly)
            return nil
        } catch let error as StateStoreError {
            return error.kind
        } catch {
            return .io
        }
    }

    @Test("a corrupt file and a digest mismatch are errors naming the file; neither is overwritten")
    func corruptAndEdited() async throws {
        try await withDirectory { directory in
            let store = try store(directory, "state/sandbox.json")
            let path = directory.path + "/state/sandbox.json"
            try FileManager.default.createDirectory(atPath: directory.path + "/state", withIntermediateDirectories: true)
            try Data("not json".utf8).write(to: URL(fileURLWithPath: path))
            let corrupt = await #expect(throws: StateStoreError.self) { try await store.read() }
            #expect(corrupt?.kind == .corrupt)
            #expect(corrupt?.description.hasPrefix("state store \(path): the state document does not parse") == true)
            let overwrite = await #expect(throws: StateStoreError.self) {
                try await store.write(try Support.document(for: Support.sandbox), condition: .createOnly)
            }
            #expect(overwrite?.kind == .conflict)
            #expect(try String(contentsOfFile: path, encoding: .utf8) == "not json")

            let text = String(decoding: try Support.document(for: Support.sandbox).encoded(), as: UTF8.self)
            try Data(text.replacingOccurrences(of: "Before you go", with: "Before you leave").utf8).write(to: URL(fileURLWithPath: path))
            let edited = await #expect(throws: StateStoreError.self) { try await store.read() }
            #expect(edited?.kind == .digestMismatch)
        }
    }

    @Test("a newer format_version is refused with a hint to upgrade")
    func newerFormat() async throws {
        try await withDirectory { directory in
            let store = try store(directory, "sandbox.json")
            try Data(#"{"format_version": "2.0"}"#.utf8).write(to: directory.appendingPathComponent("sandbox.json"))
            let error = await #expect(throws: StateStoreError.self) { try await store.read() }
            #expect(error?.kind == .unsupportedFormatVersion)
            #expect(error?.message.contains("upgrade retention-sync") == true)
        }
    }

    @Test("two environments pointed at one file: the other environment's document is refused, never replaced")
    func anotherEnvironmentsDocument() async throws {
        try await withDirectory { directory in
            let production = try store(directory, "shared.json", owner: Support.production)
            _ = try await production.write(try Support.document(for: Support.production), condition: .createOnly)
            let sandbox = try store(directory, "shared.json", owner: Support.sandbox)
            let error = await #expect(throws: StateStoreError.self) { try await sandbox.read() }
            #expect(error?.kind == .wrongOwner)
            let write = await #expect(throws: StateStoreError.self) {
                try await sandbox.write(try Support.document(for: Support.production), condition: .createOnly)
            }
            #expect(write?.kind == .wrongOwner)
            #expect(try await production.read().document?.environment == .production)

            let otherAppleId = StateOwner(bundleId: "com.example.app", appAppleId: 42, environment: .production)
            let refused = await #expect(throws: StateStoreError.self) { try await store(directory, "shared.json", owner: otherAppleId).read() }
            #expect(refused?.kind == .wrongOwner)
        }
    }

    @Test("today's snapshot file at the store path is read as a migrated document and replaced on the next write")
    func migrationInPlace() async throws {
        try await withDirectory { directory in
            let snapshot = try Support.snapshot(for: Support.sandbox)
            try FileManager.default.createDirectory(atPath: directory.path + "/.retention-sync", withIntermediateDirectories: true)
            try snapshot.encoded().write(to: directory.appendingPathComponent(".retention-sync/sandbox-snapshot.json"))

            let store = try store(directory, ".retention-sync/sandbox-snapshot.json")
            let read = try await store.read()
            #expect(read.migratedFrom == directory.path + "/.retention-sync/sandbox-snapshot.json")
            #expect(read.document?.snapshot == snapshot)
            #expect(read.document?.app == StateApp(bundleId: "com.example.app", appAppleId: 1_234_567_890))
            #expect(read.version != nil)
            _ = try await store.write(try #require(read.document), condition: read.writeCondition)
            let after = try await store.read()
            #expect(after.migratedFrom == nil)
            #expect(after.document?.snapshot == snapshot)
        }
    }

    @Test("a legacy snapshot of another environment is refused, not migrated")
    func legacySnapshotOfAnotherEnvironment() async throws {
        try await withDirectory { directory in
            try Support.snapshot(for: Support.production).encoded().write(to: directory.appendingPathComponent("snapshot.json"))
            let error = await #expect(throws: StateStoreError.self) { try await store(directory, "snapshot.json").read() }
            #expect(error?.kind == .wrongOwner)
        }
    }

    @Test("a server polling the file sees 'unchanged' until the next publish")
    func polling() async throws {
        try await withDirectory { directory in
            let store = try store(directory)
            let first = try await store.write(try Support.document(for: Support.sandbox, message: "one"), condition: .createOnly)
            #expect(try await store.poll(since: first) == .unchanged)
            let second = try await store.write(try Support.document(for: Support.sandbox, message: "two"), condition: .ifMatch(first))
            guard case .changed(let read) = try await store.poll(since: first) else {
                Issue.record("the poll did not see the new publish")
                return
            }
            #expect(read.version == second)
        }
    }

    @Test("a folder where the state file should be is an error, never an empty state")
    func folderInsteadOfFile() async throws {
        try await withDirectory { directory in
            try FileManager.default.createDirectory(atPath: directory.path + "/state/sandbox.json", withIntermediateDirectories: true)
            let store = try store(directory, "state")
            let error = await #expect(throws: StateStoreError.self) { try await store.read() }
            #expect(error?.kind == .io)
            #expect(error?.message.contains("not a regular file") == true)
        }
    }
}
