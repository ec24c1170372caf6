import Basics
import CLIKit
@testable import CommandTestSupport
import EventContract
import EventStore
@testable import Experiments
@testable import ExperimentsTestSupport
import Foundation
import HTTPClient
import StateLocations
import StateStore
import Testing
import TestSupport

/// `retention-sync events compact` on a folder and on a real S3-compatible server: one segment per
/// closed hour and stream, and the same report before and after.
@Suite("Compacting the event store", .serialized)
struct EventCompactionTests {
    static func simulation(customers: Int = 1200, days: Int = 6) -> EventSimulator {
        var simulator = EventSimulator(arms: [Simulation.control, Simulation.treatment], customers: customers)
        simulator.days = days
        simulator.paymentEchoes = true
        simulator.run(seed: 91)
        return simulator
    }

    static func report(_ root: URL, _ simulator: EventSimulator) throws -> ResultsReport {
        try ResultsReport.compute(source: FolderEventSource(root: root), environment: "production",
                                  now: UTCTime(milliseconds: simulator.start + 60 * EventTime.day), breakdown: .locale)
    }

    /// What must not change: every row, breakdown row and comparison, and the events counted.
    static func expectSameNumbers(_ before: ResultsReport, _ after: ResultsReport) {
        #expect(after.rows == before.rows)
        #expect(after.breakdownRows == before.breakdownRows)
        #expect(after.comparisons == before.comparisons)
        #expect(after.events.decisions == before.events.decisions && after.events.outcomes == before.events.outcomes)
    }

    static func segmentsPerPartition(_ root: URL) -> [String: Int] {
        let walker = FileManager.default.enumerator(at: root.appendingPathComponent("events/v1"), includingPropertiesForKeys: nil)
        var counts: [String: Int] = [:]
        for case let file as URL in walker?.allObjects ?? [] where file.pathExtension == "ndjson" {
            counts[file.deletingLastPathComponent().path, default: 0] += 1
        }
        return counts
    }

    @Test("compacting a folder leaves one segment per closed hour and stream, each event once, and results says exactly what it said before")
    func folder() async throws {
        let simulator = Self.simulation()
        let root = try temporaryFolder("compaction")
        defer { try? FileManager.default.removeItem(at: root) }
        try simulator.write(to: root)
        let before = try Self.report(root, simulator)
        let segmentsBefore = Self.segmentsPerPartition(root).values.reduce(0, +)
        #expect(before.events.duplicates > 0 && segmentsBefore > Self.segmentsPerPartition(root).count)

        let harness = try CommandHarness()
        // As of before the first event, no hour is closed yet: nothing is touched.
        let early = await harness.run(["events", "compact", "--env", "production", "--events", root.path,
                                       "--as-of", EventTime.format(simulator.start - 60 * EventTime.day)])
        #expect(early.code == .success && early.stdout.contains("0 hour(s) compacted"), "\(early.stdout)")
        let run = await harness.run(["events", "compact", "--env", "production", "--events", root.path])
        #expect(run.code == .success, "\(run.stderr)")
        let partitions = Self.segmentsPerPartition(root)
        #expect(partitions.values.allSatisfy { $0 == 1 }, "\(partitions.filter { $0.value != 1 })")
        #expect(run.stdout.contains("\(partitions.count) hour(s) compacted, \(segmentsBefore) segment(s) → \(partitions.count)"), "\(run.stdout)")
        let after = try Self.report(root, simulator)
        Self.expectSameNumbers(before, after)
        #expect(after.events.duplicates == 0)

        // Again: nothing to do, and not a byte changes.
        let files = try Self.contents(root)
        let again = await harness.run(["events", "compact", "--env", "production", "--events", root.path])
        #expect(again.stdout.contains("0 hour(s) compacted"), "\(again.stdout)")
        #expect(try Self.contents(root) == files)
    }

    @Test("on S3, compaction needs s3:DeleteObject, loses nothing without it, and the local copy results reads drops the segments that went")
    func s3() async throws {
        let server = try await MotoServer.start()
        defer { server.stop() }
        // Fewer customers over fewer days: every segment is a request to the server.
        let simulator = Self.simulation(customers: 150, days: 1)
        let location = StateLocation.s3(bucket: server.bucket, key: "apps/stillpoint")
        let upkeep = try S3StateBackend().objectStore(at: location, environment: server.environment(server.maintainer), transport: { CurlHTTPClient() })
        let apply = try S3StateBackend().objectStore(at: location, environment: server.environment(server.writer), transport: { CurlHTTPClient() })
        for (path, lines) in simulator.segments {
            try await apply.put(path, Array((lines.joined(separator: "\n") + "\n").utf8))
        }
        let copy = try temporaryFolder("compaction-copy")
        defer { try? FileManager.default.removeItem(at: copy) }
        try await EventMirror.update(copy, from: apply)
        let before = try Self.report(copy, simulator)
        let now = simulator.start + 60 * EventTime.day

        // Apply's identity may put, not delete: the merged segments are stored, the old ones stay, nothing is lost.
        await #expect(throws: StateStoreError.self) {
            _ = try await EventMaintenance.compact(apply, environment: "production", now: now)
        }
        try await EventMirror.update(copy, from: apply)
        Self.expectSameNumbers(before, try Self.report(copy, simulator))

        let summary = try await EventMaintenance.compact(upkeep, environment: "production", now: now)
        #expect(summary.partitions > 0 && summary.segmentsRemoved >= summary.partitions)
        try await EventMirror.update(copy, from: upkeep)
        #expect(Self.segmentsPerPartition(copy).values.allSatisfy { $0 == 1 })
        let keys = try await upkeep.list(prefix: "events/v1/")
        #expect(keys.count == Self.segmentsPerPartition(copy).count)
        Self.expectSameNumbers(before, try Self.report(copy, simulator))
    }

    static func contents(_ root: URL) throws -> [String: Data] {
        let walker = FileManager.default.enumerator(at: root.appendingPathComponent("events/v1"), includingPropertiesForKeys: nil)
        var files: [String: Data] = [:]
        for case let file as URL in walker?.allObjects ?? [] where file.pathExtension == "ndjson" {
            files[file.path] = try Data(contentsOf: file)
        }
        return files
    }
}
