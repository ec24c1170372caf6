import Basics
import Foundation
@testable import ExperimentsTestSupport
import Testing
import EventContract
import TestSupport
@testable import Experiments
@testable import Views

/// `results` parses segments on threads of their own ahead of the one join; what it reports must not
/// depend on how many threads read.
@Suite struct ParallelReadingTests {
    static let control = EventSimulator.Arm(rule: "keep-message", keepRate: 0.30, splitControl: true)
    static let treatment = EventSimulator.Arm(rule: "upsell-yearly", keepRate: 0.40, answer: "promotionalOffer", offer: "yearly-half-price")
    static let third = EventSimulator.Arm(rule: "switch-monthly", keepRate: 0.35, answer: "alternateProduct")

    /// Two flows' events in one store, so strings reach the join in an order no single segment shows.
    static func source(seed: UInt64) -> (MemoryEventSource, UTCTime) {
        var first = EventSimulator(arms: [control, treatment, third], customers: 1500)
        first.run(seed: seed)
        var second = EventSimulator(arms: [control, treatment], customers: 900)
        second.flow = "winback"
        second.splitGroup = "winback-split"
        second.start += 3 * EventTime.day
        second.run(seed: seed &+ 1000)
        var files = first.source.files
        for (path, data) in second.source.files {
            // Same partition and writer: the second flow's lines follow the first's in one segment.
            files[path] = (files[path] ?? Data()) + data
        }
        return (MemoryEventSource(files: files), UTCTime(milliseconds: first.start + 40 * EventTime.day))
    }

    @Test("a report read on several threads is byte for byte the report read one segment after another", arguments: [3, 17, 101])
    func readersDoNotChangeTheReport(seed: UInt64) throws {
        let (source, now) = Self.source(seed: seed)
        let sequential = try ResultsReport.computeWithTimeline(source: source, environment: "production", now: now,
                                                               breakdown: .product, readers: 0)
        #expect(sequential.report.events.segments > 50)
        #expect(sequential.report.rows.count == 5)
        for readers in [1, 2, 5] {
            let parallel = try ResultsReport.computeWithTimeline(source: source, environment: "production", now: now,
                                                                 breakdown: .product, readers: readers)
            #expect(try parallel.report.jsonData() == sequential.report.jsonData(), "readers: \(readers)")
            #expect(parallel.report.html(timeline: parallel.timeline) == sequential.report.html(timeline: sequential.timeline),
                    "readers: \(readers)")
        }
    }

    @Test("a line that is not an event is reported with its segment and line number, however many threads read")
    func badLineIsNamedTheSameWay() throws {
        var (source, now) = Self.source(seed: 5)
        let paths = source.files.keys.filter { $0.contains("/decisions/") }.sorted()
        let broken = paths[paths.count / 2]
        var lines = String(decoding: source.files[broken]!, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        lines.insert("{\"time\": oops}", at: 1)
        source.files[broken] = Data(lines.joined(separator: "\n").utf8)
        var messages: [String] = []
        for readers in [0, 2, 4] {
            do {
                _ = try ResultsReport.compute(source: source, environment: "production", now: now, readers: readers)
                Issue.record("readers \(readers): the broken line was read")
            } catch let error as EventReadError {
                messages.append(error.description)
                #expect(error.line == 2)
                #expect(error.location.hasSuffix(broken))
            }
        }
        #expect(Set(messages).count == 1, "\(messages)")
    }
}
