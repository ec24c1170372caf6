public import Foundation
public import EventContract

/// One hour partition, `date=YYYY-MM-DD/hour=HH`. Orders by time.
public struct EventPartition: Sendable, Hashable, Comparable {
    public var date: String
    public var hour: Int
    /// The start of the hour, in milliseconds since 1970.
    public var start: Int64

    /// Nil when the names are not a date and an hour (the partition is then not the contract's).
    public init?(date: String, hour: String) {
        let bytes = Array(date.utf8)
        guard bytes.count == 10, let hourValue = Int(hour), (0..<24).contains(hourValue), hour.utf8.count == 2,
              let midnight = EventTime.parse(date + "T00:00:00Z") else { return nil }
        self.date = date
        self.hour = hourValue
        start = midnight + Int64(hourValue) * EventTime.hour
    }

    public var path: String {
        "date=\(date)/hour=\(hour < 10 ? "0" : "")\(hour)"
    }

    public static func < (lhs: EventPartition, rhs: EventPartition) -> Bool {
        lhs.start < rhs.start
    }
}

/// One immutable segment file (or object): where it is, for reading and for error messages.
public struct EventSegment: Sendable, Hashable {
    /// A path or URL a person can open (`/srv/state/events/v1/…/replica-a-0000000003.ndjson`).
    public var location: String

    public init(location: String) {
        self.location = location
    }
}

/// Where events are read from. `results` reads partitions oldest first and each partition's segments in
/// name order, so any store that can list and read (a folder, an S3 prefix) plugs in here.
public protocol EventSource: Sendable {
    /// Every hour partition that holds segments of `stream` in `environment`, oldest first.
    func partitions(of stream: EventStream, environment: String) throws -> [EventPartition]
    /// The segments of one partition, in name order.
    func segments(of stream: EventStream, environment: String, in partition: EventPartition) throws -> [EventSegment]
    /// Hands the segment's bytes to `body` in order, in chunks of any size (lines may span chunks).
    func read(_ segment: EventSegment, _ body: (UnsafeRawBufferPointer) throws -> Void) throws
}

/// Events in a folder: `<root>/events/v1/<stream>/environment=<E>/date=<D>/hour=<H>/*.ndjson`.
public struct FolderEventSource: EventSource {
    public var root: URL

    public init(root: URL) {
        self.root = root
    }

    public struct Unreadable: Error, CustomStringConvertible {
        public var description: String
    }

    func folder(_ stream: EventStream, _ environment: String) -> URL {
        root.appendingPathComponent("events/v1/\(stream.rawValue)/environment=\(environment)", isDirectory: true)
    }

    public func partitions(of stream: EventStream, environment: String) throws -> [EventPartition] {
        let base = folder(stream, environment)
        let manager = FileManager.default
        guard manager.fileExists(atPath: base.path) else { return [] }
        var found: [EventPartition] = []
        for dateName in try manager.contentsOfDirectory(atPath: base.path) where dateName.hasPrefix("date=") {
            let dateFolder = base.appendingPathComponent(dateName, isDirectory: true)
            for hourName in try manager.contentsOfDirectory(atPath: dateFolder.path) where hourName.hasPrefix("hour=") {
                guard let partition = EventPartition(date: String(dateName.dropFirst(5)), hour: String(hourName.dropFirst(5))) else {
                    throw Unreadable(description: "\(dateFolder.path)/\(hourName): not a partition of the event layout (expected date=YYYY-MM-DD/hour=HH); move or remove it")
                }
                found.append(partition)
            }
        }
        return found.sorted()
    }

    public func segments(of stream: EventStream, environment: String, in partition: EventPartition) throws -> [EventSegment] {
        let folder = folder(stream, environment).appendingPathComponent(partition.path, isDirectory: true)
        // Writers write under a temporary name and rename, so only finished `.ndjson` files are segments.
        return try FileManager.default.contentsOfDirectory(atPath: folder.path)
            .filter { $0.hasSuffix(".ndjson") && !$0.hasPrefix(".") }
            .sorted()
            .map { EventSegment(location: folder.appendingPathComponent($0).path) }
    }

    public func read(_ segment: EventSegment, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        guard let handle = FileHandle(forReadingAtPath: segment.location) else {
            throw Unreadable(description: "\(segment.location): cannot be opened for reading")
        }
        defer { try? handle.close() }
        while true {
            let chunk = try handle.read(upToCount: 1 << 20) ?? Data()
            if chunk.isEmpty { return }
            try chunk.withUnsafeBytes(body)
        }
    }
}
