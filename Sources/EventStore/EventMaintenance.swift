import Crypto
public import EventContract
import Foundation
public import StateStore

/// Rewrites event segments in place, safely for readers that run meanwhile: a new segment is stored
/// whole before the ones it replaces are removed, so a reader sees the old segments, the new one, or
/// both — and both only repeats events, which every reader drops by `eventId`. Two jobs use it:
/// `compact` merges a closed hour's many small segments into one (serve writes one per flush, and a
/// warehouse pays per file), and `erase` removes a customer's lines from every segment.
public enum EventMaintenance {
    /// What a run did, per stream and in all.
    public struct Summary: Sendable, Equatable {
        public var partitions = 0
        public var segmentsRead = 0
        public var segmentsWritten = 0
        public var segmentsRemoved = 0
        public var lines = 0
        /// Lines dropped because an earlier line had the same `keyId` and `eventId` (a retried upload, push and pull).
        public var duplicates = 0
        public var erased = 0
        public var bytesBefore = 0
        public var bytesAfter = 0

        public init() {}
    }

    /// The segment a compaction writes: `compacted-<digest>.ndjson`, named by its content.
    static let compactedPrefix = "compacted-"

    /// Merges the segments of every partition of `environment` whose hour ended at least `lateness`
    /// before `now` (no writer still files events there, except a late one whose new segment the next
    /// run merges) into one segment per partition: each event once, lines in byte order, so the same
    /// events give the same segment. A partition already one compacted segment is left alone.
    public static func compact(_ store: any ObjectStore, environment: String, now: Int64,
                               lateness: Int64 = 2 * EventTime.hour) async throws(StateStoreError) -> Summary {
        var summary = Summary()
        for stream in EventStream.allCases {
            for (folder, segments) in try await partitions(store, stream: stream, environment: environment) {
                guard let start = partitionStart(folder), start + EventTime.hour + lateness <= now else { continue }
                if segments.count == 1, let only = segments.first, name(only).hasPrefix(compactedPrefix) { continue }
                var seen: Set<String> = []
                var kept: [Substring] = []
                var texts: [String] = []
                for key in segments {
                    guard let data = try await store.get(key) else { continue }
                    summary.segmentsRead += 1
                    summary.bytesBefore += data.count
                    texts.append(String(decoding: data, as: UTF8.self))
                }
                for text in texts {
                    for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
                        // One event per pseudonym key: during a rotation a notification is recorded under both keys.
                        if let id = eventId(line), !seen.insert((stringMember("keyId", line) ?? "") + "/" + id).inserted {
                            summary.duplicates += 1
                            continue
                        }
                        kept.append(line)
                    }
                }
                kept.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
                let bytes = Array((kept.joined(separator: "\n") + (kept.isEmpty ? "" : "\n")).utf8)
                let merged = folder + "/" + compactedPrefix + String(Digest.sha256Hex(bytes).prefix(16)) + ".ndjson"
                summary.partitions += 1
                summary.lines += kept.count
                if !kept.isEmpty {
                    try await store.put(merged, bytes)
                    summary.segmentsWritten += 1
                    summary.bytesAfter += bytes.count
                }
                for key in segments where key != merged {
                    try await store.delete(key)
                    summary.segmentsRemoved += 1
                }
            }
        }
        return summary
    }

    /// Removes every line whose `customer` is one of `customers` (pseudonyms) from every segment of
    /// `environment`, both streams: each segment holding one is replaced by a segment without them
    /// (named after it and its new content), or removed when nothing is left.
    public static func erase(_ customers: Set<String>, from store: any ObjectStore, environment: String) async throws(StateStoreError) -> Summary {
        var summary = Summary()
        guard !customers.isEmpty else { return summary }
        for stream in EventStream.allCases {
            for (_, segments) in try await partitions(store, stream: stream, environment: environment) {
                var touched = false
                for key in segments {
                    guard let data = try await store.get(key) else { continue }
                    summary.segmentsRead += 1
                    let text = String(decoding: data, as: UTF8.self)
                    // Most segments hold none of them: a plain search says so before any line is parsed.
                    guard customers.contains(where: { text.contains($0) }) else { continue }
                    var kept: [Substring] = []
                    var erased = 0
                    for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
                        if let customer = customer(line), customers.contains(customer) { erased += 1 } else { kept.append(line) }
                    }
                    guard erased > 0 else { continue }
                    touched = true
                    summary.erased += erased
                    summary.bytesBefore += data.count
                    if !kept.isEmpty {
                        let bytes = Array((kept.joined(separator: "\n") + "\n").utf8)
                        let stem = key.hasSuffix(".ndjson") ? String(key.dropLast(".ndjson".count)) : key
                        try await store.put(stem + "-e" + String(Digest.sha256Hex(bytes).prefix(12)) + ".ndjson", bytes)
                        summary.segmentsWritten += 1
                        summary.bytesAfter += bytes.count
                        summary.lines += kept.count
                    }
                    try await store.delete(key)
                    summary.segmentsRemoved += 1
                }
                if touched { summary.partitions += 1 }
            }
        }
        return summary
    }

    /// Every partition folder of one stream and environment, with its segments in byte order.
    static func partitions(_ store: any ObjectStore, stream: EventStream, environment: String) async throws(StateStoreError) -> [(String, [String])] {
        let prefix = "events/v1/\(stream.rawValue)/environment=\(environment)/"
        var folders: [String: [String]] = [:]
        for key in try await store.list(prefix: prefix) where key.hasSuffix(".ndjson") {
            guard let slash = key.lastIndex(of: "/"), !name(key).hasPrefix(".") else { continue }
            folders[String(key[..<slash]), default: []].append(key)
        }
        return folders.keys.sorted().map { ($0, folders[$0]!.sorted()) }
    }

    static func name(_ key: String) -> Substring {
        key.lastIndex(of: "/").map { key[key.index(after: $0)...] } ?? Substring(key)
    }

    /// The start of a partition folder's hour (`…/date=2026-11-20/hour=10`), or nil for another layout.
    static func partitionStart(_ folder: String) -> Int64? {
        let parts = folder.split(separator: "/")
        guard parts.count >= 2, parts[parts.count - 2].hasPrefix("date="), parts[parts.count - 1].hasPrefix("hour="),
              let hour = Int(parts[parts.count - 1].dropFirst(5)), (0 ..< 24).contains(hour),
              let midnight = EventTime.parse(String(parts[parts.count - 2].dropFirst(5)) + "T00:00:00Z") else { return nil }
        return midnight + Int64(hour) * EventTime.hour
    }

    /// The line's `eventId`, as written (the contract's lines are canonical JSON: `"eventId":"…"`).
    static func eventId(_ line: Substring) -> Substring? {
        stringMember("eventId", line)
    }

    /// The line's `customer`: read by parsing the line, since missing one would leave a customer's data behind.
    static func customer(_ line: Substring) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
        return object["customer"] as? String
    }

    private static func stringMember(_ name: String, _ line: Substring) -> Substring? {
        guard let key = line.range(of: "\"\(name)\":\"") else { return nil }
        let rest = line[key.upperBound...]
        guard let end = rest.firstIndex(of: "\"") else { return nil }
        return rest[..<end]
    }
}
