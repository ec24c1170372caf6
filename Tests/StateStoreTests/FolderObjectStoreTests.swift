import Foundation
import StateStore
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("Event segments in a folder")
struct FolderObjectStoreTests {
    @Test("listing a prefix gives every key under it in byte order, however deep, and leaves out hidden files and other folders")
    func listingAPrefix() async throws {
        let base = try temporaryFolder("folder-object-store-list")
        defer { try? FileManager.default.removeItem(at: base) }
        let store = FolderObjectStore(root: base)
        for key in ["facts/v1/environment=sandbox/table-b.rsfacts", "facts/v1/environment=sandbox/table-a.rsfacts",
                    "facts/v1/environment=sandbox/current.json", "facts/v1/environment=sandbox/.table-c.tmp",
                    "facts/v1/environment=production/table-z.rsfacts", "events/v1/decisions/environment=sandbox/date=2026-11-20/hour=10/s.ndjson",
                    "events/v1/decisions/environment=sandbox/date=2026-11-20/hour=11/t.ndjson", "top.json"] {
            try await store.put(key, Array(key.utf8))
        }
        #expect(try await store.list(prefix: "facts/v1/environment=sandbox/table-")
                == ["facts/v1/environment=sandbox/table-a.rsfacts", "facts/v1/environment=sandbox/table-b.rsfacts"])
        #expect(try await store.list(prefix: "events/v1/")
                == ["events/v1/decisions/environment=sandbox/date=2026-11-20/hour=10/s.ndjson",
                    "events/v1/decisions/environment=sandbox/date=2026-11-20/hour=11/t.ndjson"])
        #expect(try await store.list(prefix: "facts/v1/environment=").count == 4)
        #expect(try await store.list(prefix: "").count == 8 - 1)
        #expect(try await store.list(prefix: "missing/folder/").isEmpty)
        try await store.delete("facts/v1/environment=sandbox/table-a.rsfacts")
        try await store.delete("facts/v1/environment=sandbox/table-a.rsfacts")
        #expect(try await store.list(prefix: "facts/v1/environment=sandbox/table-") == ["facts/v1/environment=sandbox/table-b.rsfacts"])
    }

    #if os(Linux)
    /// How many of the file's pages the system holds in its cache right now (mincore on a mapping).
    static func residentPages(_ path: String) throws -> Int {
        let descriptor = open(path, O_RDONLY)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        var status = stat()
        try #require(fstat(descriptor, &status) == 0)
        let length = Int(status.st_size)
        let mapping = try #require(mmap(nil, length, PROT_READ, MAP_SHARED, descriptor, 0))
        try #require(mapping != MAP_FAILED)
        defer { munmap(mapping, length) }
        let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
        var vector = [UInt8](repeating: 0, count: (length + pageSize - 1) / pageSize)
        try #require(mincore(mapping, length, &vector) == 0)
        return vector.filter { $0 & 1 == 1 }.count
    }

    @Test("a segment serve's recorder stored is on disk and whole, and not left in the system's page cache")
    func recorderSegmentLeavesThePageCache() throws {
        let base = try temporaryFolder("folder-object-store")
        defer { try? FileManager.default.removeItem(at: base) }
        let store = FolderObjectStore(root: base)
        let line = Array(#"{"type":"decision","note":"a line of about a hundred bytes, as many times as fill four megabytes"}"#.utf8) + [0x0A]
        let bytes = Array([[UInt8]](repeating: line, count: 4 * 1024 * 1024 / line.count).joined())
        try store.putWaiting("events/v1/decisions/segment.ndjson", bytes)
        let path = base.appendingPathComponent("events/v1/decisions/segment.ndjson").path
        #expect(try Self.residentPages(path) < 16)
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: path))) == bytes)
        // The same bytes written as any other file stay cached: the check above can see a difference.
        let other = base.appendingPathComponent("other.ndjson")
        try Data(bytes).write(to: other)
        #expect(try Self.residentPages(other.path) > 512)
    }
    #endif
}
