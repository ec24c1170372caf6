@testable import EventStore
import EventContract
import Experiments
import Foundation
import TestSupport
import StateStore
import Synchronization
@testable import EngineTestSupport
import Testing

/// A sink that refuses while `down` is set, and counts what it stored.
final class FlakySink: EventSink {
    let inner: FolderEventSink
    let down = Atomic(false)
    let puts = Atomic(0)

    init(root: URL) {
        inner = FolderEventSink(root: root)
    }

    var location: String { "flaky:" + inner.location }

    func put(_ path: String, _ bytes: [UInt8]) throws(EventStoreError) {
        guard !down.load(ordering: .relaxed) else { throw EventStoreError("connection refused") }
        puts.add(1, ordering: .relaxed)
        try inner.put(path, bytes)
    }
}


@Suite("Recording events without making serve wait")
struct EventRecorderTests {
    static let hour: Int64 = 3_600_000
    static let start: Int64 = 1_795_000_000_000

    @Test("events land in hour partitions as NDJSON the results reader reads, and close stores the last ones")
    func eventsLandInPartitions() throws {
        let root = try temporaryFolder("retention-sync-events")
        defer { try? FileManager.default.removeItem(at: root) }
        let recorder = EventRecorder(sink: FolderEventSink(root: root),
                                     settings: .init(writerId: "replica-a", spool: root.appendingPathComponent(".spool"), flushInterval: 0.05))
        recorder.start()
        for index in 0..<500 { recorder.record(decision(index, at: Self.start + Int64(index) * 20_000)) }
        let counters = recorder.close()
        #expect(counters.recorded["decisions"] == 500)
        #expect(counters.stored["decisions"] == 500)
        #expect(counters.spooledSegments == 0 && counters.dropped.isEmpty)
        let lines = try storedLines(root)[.decisions] ?? []
        #expect(lines.count == 500)
        #expect(Set(lines.map { $0.components(separatedBy: "\"requestIdentifier\":\"")[1].prefix(while: { $0 != "\"" }) }).count == 500)
        let partitions = try FolderEventSource(root: root).partitions(of: .decisions, environment: "sandbox")
        #expect(partitions.count == 3) // 500 × 20 s spans 2.8 hours
        #expect(lines.allSatisfy { $0.hasPrefix("{\"alternateProductId\":null,\"answer\":\"message\",\"arm\":") && $0.hasSuffix("\"type\":\"decision\"}") })
    }

    @Test("one flush that mixes environments and hours files each event under its own partition, in the order recorded")
    func mixedFlushKeepsPartitionsApart() throws {
        let root = try temporaryFolder("retention-sync-events-mixed")
        defer { try? FileManager.default.removeItem(at: root) }
        // Never flushed before close: everything below is cut in one flush.
        let recorder = EventRecorder(sink: FolderEventSink(root: root),
                                     settings: .init(writerId: "replica-m", spool: root.appendingPathComponent(".spool"), flushInterval: 600))
        recorder.start()
        var expected: [String: [String]] = [:]
        for index in 0..<300 {
            // Runs of one partition, then another, then back: the cut must not lose its place.
            let environment = (index / 7) % 2 == 0 ? "sandbox" : "production"
            let time = Self.start + Int64((index / 5) % 3) * Self.hour
            let record = decision(index, at: time, environment: environment)
            recorder.record(record)
            expected[record.partitionPath, default: []].append("req-\(index)")
        }
        let counters = recorder.close()
        #expect(counters.stored["decisions"] == 300 && counters.storedSegments == expected.count)
        // Every segment, by the folder it is in (its partition, relative to the store's root).
        var found: [String: [String]] = [:]
        let walker = FileManager.default.enumerator(atPath: root.path)
        while let relative = walker?.nextObject() as? String {
            guard relative.hasSuffix(".ndjson"), !relative.hasPrefix(".spool") else { continue }
            let data = try Data(contentsOf: root.appendingPathComponent(relative))
            let partition = (relative as NSString).deletingLastPathComponent
            for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
                let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                found[partition, default: []].append(object["requestIdentifier"] as? String ?? "")
            }
        }
        #expect(expected.count == 6) // two environments × three hours
        #expect(found == expected)
    }

    @Test("while the store is down events wait in the spool, and go up once each when it answers again")
    func storeDownLosesNothing() throws {
        let root = try temporaryFolder("retention-sync-events-down")
        defer { try? FileManager.default.removeItem(at: root) }
        let sink = FlakySink(root: root.appendingPathComponent("store"))
        let notices = Mutex<[String]>([])
        let recorder = EventRecorder(sink: sink, settings: .init(writerId: "replica-b", spool: root.appendingPathComponent("spool"), flushInterval: 0.02),
                                     onNotice: { note in notices.withLock { $0.append(note) } })
        recorder.start()
        sink.down.store(true, ordering: .relaxed)
        for index in 0..<300 { recorder.record(decision(index, at: Self.start)) }
        try waitUntil { recorder.snapshot.spooledSegments > 0 && recorder.snapshot.queued == 0 }
        #expect(try storedLines(root.appendingPathComponent("store")).isEmpty)
        #expect(recorder.snapshot.storeFailures > 0)
        sink.down.store(false, ordering: .relaxed)
        try waitUntil { recorder.snapshot.spooledSegments == 0 }
        for index in 300..<400 { recorder.record(decision(index, at: Self.start)) }
        let counters = recorder.close()
        #expect(counters.stored["decisions"] == 400 && counters.dropped.isEmpty)
        #expect(try storedLines(root.appendingPathComponent("store"))[.decisions]?.count == 400)
        let said = notices.withLock { $0 }
        // One notice when the outage starts and one when it ends, not one per attempt.
        #expect(said.filter { $0.contains("cannot store events") }.count == 1)
        #expect(said.contains { $0.contains("answers again") })
    }

    @Test("what one process could not store is stored by the next one that starts with the same spool")
    func nextStartUploadsLeftovers() throws {
        let root = try temporaryFolder("retention-sync-events-restart")
        defer { try? FileManager.default.removeItem(at: root) }
        let sink = FlakySink(root: root.appendingPathComponent("store"))
        sink.down.store(true, ordering: .relaxed)
        let spool = root.appendingPathComponent("spool")
        let first = EventRecorder(sink: sink, settings: .init(writerId: "replica-c", spool: spool, flushInterval: 0.02, closeTimeout: 0.1))
        first.start()
        for index in 0..<50 { first.record(decision(index, at: Self.start)) }
        let left = first.close()
        #expect(left.spooledSegments > 0)
        sink.down.store(false, ordering: .relaxed)
        let second = EventRecorder(sink: sink, settings: .init(writerId: "replica-d", spool: spool, flushInterval: 0.02))
        second.start()
        let counters = second.close()
        #expect(counters.spooledSegments == 0)
        #expect(try storedLines(root.appendingPathComponent("store"))[.decisions]?.count == 50)
    }

    @Test("a full spool drops events and counts them, never silently")
    func fullSpoolCounts() throws {
        let root = try temporaryFolder("retention-sync-events-full")
        defer { try? FileManager.default.removeItem(at: root) }
        let sink = FlakySink(root: root.appendingPathComponent("store"))
        sink.down.store(true, ordering: .relaxed)
        let notices = Mutex<[String]>([])
        let recorder = EventRecorder(sink: sink, settings: .init(writerId: "replica-e", spool: root.appendingPathComponent("spool"), flushInterval: 0.02,
                                                                 spoolLimitBytes: 4_000, closeTimeout: 0.1),
                                     onNotice: { note in notices.withLock { $0.append(note) } })
        recorder.start()
        for round in 0..<10 {
            for index in 0..<5 { recorder.record(decision(round * 5 + index, at: Self.start)) }
            try waitUntil { recorder.snapshot.queued == 0 }
        }
        let counters = recorder.close()
        let dropped = counters.dropped["spool_full"] ?? 0
        #expect(dropped > 0)
        #expect(counters.spooledBytes <= 4_000)
        #expect((counters.recorded["decisions"] ?? 0) == 50)
        #expect(notices.withLock { $0 }.contains { $0.contains("spool") && $0.contains("dropped and counted") })
    }

    @Test("a full queue drops and counts instead of growing without bound")
    func fullQueueCounts() throws {
        let root = try temporaryFolder("retention-sync-events-queue")
        defer { try? FileManager.default.removeItem(at: root) }
        // Not started: nothing drains the queue.
        let recorder = EventRecorder(sink: FolderEventSink(root: root), settings: .init(writerId: "replica-f", spool: root.appendingPathComponent("spool"), queueLimit: 10))
        for index in 0..<25 { recorder.record(decision(index, at: Self.start)) }
        #expect(recorder.snapshot.queued == 10)
        #expect(recorder.snapshot.dropped["queue_full"] == 15)
        let counters = recorder.close()
        #expect(counters.stored["decisions"] == 10)
    }
}


@Suite("The event store's own words")
struct EventStoreWordingTests {
    @Test("a folder store under a regular file says which path is a file and what to do, never Foundation's error 512")
    func folderUnderAFile() async throws {
        let base = try temporaryFolder("event-store-wording")
        defer { try? FileManager.default.removeItem(at: base) }
        try Data("x".utf8).write(to: base.appendingPathComponent("file"))
        let sink = ObjectStoreEventSink(store: FolderObjectStore(root: base.appendingPathComponent("file/events")))
        var said = ""
        do {
            try sink.put("events/v1/decisions/segment.ndjson", Array("{}\n".utf8))
            Issue.record("a segment was written under a regular file")
        } catch {
            said = error.description
        }
        #expect(said.contains("\(base.appendingPathComponent("file").standardizedFileURL.path) is a file, not a folder"), "\(said)")
        #expect(said.contains("choose a location"), "\(said)")
        #expect(!said.contains("NSCocoaErrorDomain") && !said.contains("The operation could not be completed"), "\(said)")
    }
}
