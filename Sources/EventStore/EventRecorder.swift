import Experiments
public import Foundation
import Synchronization

/// Files events durably without ever making the caller wait.
///
/// `record` appends to a bounded in-memory queue (a lock held for an append). A thread of the
/// recorder's own wakes every `flushInterval`, cuts the queue into one segment per hour partition,
/// writes each segment to the local **spool** folder first and then stores what the spool holds, oldest
/// first, deleting each spooled segment once the store has it. While the store is slow or down, segments
/// wait in the spool and go up when it returns (also after a restart: a recorder starts by uploading what
/// an earlier one left). Nothing is dropped silently: a full queue or a full spool drops and counts
/// (`dropped`), and the notice handler hears of it once per episode.
///
/// `close` stores everything still queued or spooled (bounded by `closeTimeout`), so SIGTERM loses
/// nothing; `kill -9` loses what was queued since the last flush, at most `flushInterval` of events.
public final class EventRecorder: Sendable {
    public struct Settings: Sendable {
        /// Names this writer's segments (`<writerId>-<seq>.ndjson`); unique per process.
        public var writerId: String
        public var spool: URL
        public var flushInterval: Double
        /// Events waiting in memory at most; more are dropped and counted.
        public var queueLimit: Int
        /// Bytes the spool may hold; a segment that would pass it is dropped and counted.
        public var spoolLimitBytes: Int64
        /// How long `close` keeps trying to store what is spooled.
        public var closeTimeout: Double

        public static let defaultFlushInterval = 1.0
        public static let defaultQueueLimit = 200_000
        public static let defaultSpoolLimitBytes: Int64 = 512 << 20

        public init(writerId: String, spool: URL, flushInterval: Double = defaultFlushInterval, queueLimit: Int = defaultQueueLimit,
                    spoolLimitBytes: Int64 = defaultSpoolLimitBytes, closeTimeout: Double = 10) {
            self.writerId = writerId
            self.spool = spool
            self.flushInterval = flushInterval
            self.queueLimit = queueLimit
            self.spoolLimitBytes = spoolLimitBytes
            self.closeTimeout = closeTimeout
        }

        /// `<host>-<8 random hex>`: readable, and never the same for two processes.
        public static func defaultWriterId(host: String = ProcessInfo.processInfo.hostName) -> String {
            let cleaned = String(host.lowercased().map { $0.isLetter || $0.isNumber || $0 == "-" ? $0 : "-" }.prefix(40))
            return (cleaned.isEmpty ? "writer" : cleaned) + "-" + String(format: "%08x", UInt32.random(in: 0 ... .max))
        }
    }

    /// What the recorder has done, for `/metrics` and tests.
    public struct Counters: Sendable, Hashable {
        public var recorded: [String: Int] = [:]
        public var stored: [String: Int] = [:]
        public var dropped: [String: Int] = [:]
        public var storedSegments = 0
        public var storeFailures = 0
        public var queued = 0
        public var spooledSegments = 0
        public var spooledBytes: Int64 = 0
    }

    public let sink: any EventSink
    public let settings: Settings
    private let onNotice: @Sendable (String) -> Void

    private struct Queue {
        var records: [EventRecord] = []
        var closing = false
        var droppingSince: Bool = false
    }
    private let queue = Mutex(Queue())
    private let counters = Mutex(Counters())
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let closedOnce = DispatchSemaphore(value: 0)
    private let started = Atomic(false)

    public init(sink: any EventSink, settings: Settings, onNotice: @escaping @Sendable (String) -> Void = { _ in }) {
        self.sink = sink
        self.settings = settings
        self.onNotice = onNotice
    }

    public var snapshot: Counters {
        var copy = counters.withLock { $0 }
        copy.queued = queue.withLock { $0.records.count }
        return copy
    }

    /// Queues one event; never blocks on the store.
    public func record(_ record: EventRecord) {
        let accepted = queue.withLock { queue -> Bool? in
            guard !queue.closing else { return nil }
            guard queue.records.count < settings.queueLimit else {
                let first = !queue.droppingSince
                queue.droppingSince = true
                return first ? false : nil
            }
            queue.droppingSince = false
            queue.records.append(record)
            return true
        }
        switch accepted {
        case true?:
            counters.withLock { $0.recorded[record.stream.rawValue, default: 0] += 1 }
        case false?:
            counters.withLock { $0.dropped["queue_full", default: 0] += 1 }
            onNotice("the event queue is full (\(settings.queueLimit) events waiting for \(sink.location)); events are dropped and counted until it drains")
        case nil:
            counters.withLock { $0.dropped[queue.withLock { $0.closing } ? "closed" : "queue_full", default: 0] += 1 }
        }
    }

    /// Starts the flushing thread; it first stores what an earlier process left in the spool.
    public func start() {
        guard !started.exchange(true, ordering: .relaxed) else { return }
        let scan = Self.spooled(in: settings.spool)
        counters.withLock {
            $0.spooledSegments = scan.count
            $0.spooledBytes = scan.reduce(0) { $0 + $1.bytes }
        }
        let thread = Thread { [self] in
            var sequence = 0
            var outage = false
            // Leftovers of an earlier process, or of an outage, are read from disk; otherwise a flush
            // stores what it just wrote, from memory.
            var leftovers = true
            while true {
                _ = wake.wait(timeout: .now() + settings.flushInterval)
                let (records, closing) = queue.withLock { queue in
                    let taken = queue.records
                    queue.records.removeAll(keepingCapacity: true)
                    return (taken, queue.closing)
                }
                let fresh = spool(records, sequence: &sequence)
                if closing {
                    let deadline = Date().addingTimeInterval(settings.closeTimeout)
                    while !upload(outage: &outage, fresh: fresh, leftovers: true), Date() < deadline { Thread.sleep(forTimeInterval: 0.2) }
                    break
                }
                let stored = upload(outage: &outage, fresh: fresh, leftovers: leftovers)
                leftovers = !stored
            }
            finished.signal()
        }
        thread.name = "retention-sync.events"
        thread.start()
    }

    /// Stores everything queued and spooled, then stops. Returns what is still in the spool (zero
    /// unless the store stayed unreachable for `closeTimeout`; it goes up at the next start).
    @discardableResult
    public func close() -> Counters {
        let wasStarted = started.load(ordering: .relaxed)
        let first = queue.withLock { queue in
            defer { queue.closing = true }
            return !queue.closing
        }
        guard first else {
            // Closed already (or closing on another thread): wait for that, once, and report.
            closedOnce.wait()
            closedOnce.signal()
            return snapshot
        }
        if !wasStarted { start() }
        wake.signal()
        finished.wait()
        defer { closedOnce.signal() }
        let result = snapshot
        if result.spooledSegments > 0 {
            onNotice("\(result.spooledSegments) event segment(s) (\(result.spooledBytes) bytes) stay in \(settings.spool.path) because \(sink.location) cannot be reached; they are stored at the next start with the same spool")
        }
        return result
    }

    /// Awaits `close` on a thread of its own, so an async caller does not block the pool.
    public func close() async -> Counters {
        await withCheckedContinuation { continuation in
            let thread = Thread { [self] in continuation.resume(returning: close() as Counters) }
            thread.name = "retention-sync.events.close"
            thread.start()
        }
    }

    // MARK: The flushing thread

    private struct GroupKey: Hashable {
        var stream: EventStream
        var environment: String
        var hour: Int64
    }

    /// Writes one segment per (stream, environment, hour) to the spool and returns them, so the
    /// upload that follows needs not read back what was just written.
    private func spool(_ records: [EventRecord], sequence: inout Int) -> [Spooled] {
        guard !records.isEmpty else { return [] }
        var order: [GroupKey] = []
        var groups: [GroupKey: (bytes: [UInt8], count: Int, first: EventRecord)] = [:]
        for record in records {
            let key = GroupKey(stream: record.stream, environment: record.environment, hour: record.hourBucket)
            if groups[key] == nil {
                order.append(key)
                groups[key] = ([], 0, record)
                groups[key]!.bytes.reserveCapacity(records.count * (record.line.count + 1))
            }
            groups[key]!.bytes += record.line
            groups[key]!.bytes.append(0x0A)
            groups[key]!.count += 1
        }
        var written: [Spooled] = []
        for key in order {
            let group = groups[key]!
            let bytes = group.bytes
            sequence += 1
            let path = group.first.partitionPath + "/\(settings.writerId)-\(String(format: "%010d", sequence)).ndjson"
            let full = counters.withLock { $0.spooledBytes + Int64(bytes.count) > settings.spoolLimitBytes }
            if full {
                counters.withLock { $0.dropped["spool_full", default: 0] += group.count }
                onNotice("the event spool \(settings.spool.path) is full (\(settings.spoolLimitBytes) bytes waiting for \(sink.location)); \(group.count) events were dropped and counted")
                continue
            }
            do {
                // No fsync here: the spool outlives a killed process in the page cache; the store's
                // own write is the durable one.
                try AtomicFile.write(bytes, to: settings.spool.appendingPathComponent(path), sync: false)
                counters.withLock {
                    $0.spooledSegments += 1
                    $0.spooledBytes += Int64(bytes.count)
                }
                written.append(Spooled(url: settings.spool.appendingPathComponent(path), path: path, bytes: Int64(bytes.count),
                                       lines: group.count, stream: key.stream, contents: bytes))
            } catch {
                // The spool cannot be written: store the segment directly, or lose it (counted).
                do {
                    try sink.put(path, bytes)
                    counters.withLock {
                        $0.stored[key.stream.rawValue, default: 0] += group.count
                        $0.storedSegments += 1
                    }
                } catch let failure {
                    counters.withLock { $0.dropped["spool_unwritable", default: 0] += group.count }
                    onNotice("cannot write the event spool \(settings.spool.path) (\(error.description)) nor store at \(sink.location) (\(failure)); \(group.count) events were dropped and counted")
                }
            }
        }
        return written
    }

    /// Stores the spool's segments, oldest first: those `fresh` from this flush from memory, any
    /// others (left by an outage or an earlier process) read from disk. False when the store refused
    /// one (it stays spooled).
    private func upload(outage: inout Bool, fresh: [Spooled], leftovers: Bool) -> Bool {
        let segments = leftovers ? Self.spooled(in: settings.spool) : fresh
        let known = Dictionary(fresh.map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
        for listed in segments {
            var segment = known[listed.path] ?? listed
            if segment.contents == nil {
                guard let data = FileManager.default.contents(atPath: segment.url.path) else { continue }
                segment.contents = Array(data)
                segment.lines = data.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
                segment.stream = segment.path.hasPrefix("events/v1/outcomes/") ? .outcomes : .decisions
            }
            do {
                try sink.put(segment.path, segment.contents!)
            } catch {
                counters.withLock { $0.storeFailures += 1 }
                if !outage {
                    outage = true
                    onNotice("cannot store events at \(sink.location) (\(error.description)); they wait in the spool \(settings.spool.path) and are stored when it answers again")
                }
                return false
            }
            unlink(segment.url.path)
            counters.withLock {
                $0.stored[segment.stream.rawValue, default: 0] += segment.lines
                $0.storedSegments += 1
                $0.spooledSegments -= 1
                $0.spooledBytes -= Int64(segment.contents!.count)
            }
        }
        if outage {
            outage = false
            onNotice("\(sink.location) answers again; the spooled events are stored")
        }
        return true
    }

    struct Spooled {
        var url: URL
        var path: String
        var bytes: Int64
        var lines = 0
        var stream: EventStream = .decisions
        /// The bytes, when this flush wrote them (nil: read from disk when stored).
        var contents: [UInt8]?
    }

    /// The spool's finished segments, in the order they were written (partition, then name).
    static func spooled(in spool: URL) -> [Spooled] {
        let base = spool.standardizedFileURL.path
        guard let walker = FileManager.default.enumerator(atPath: base) else { return [] }
        var found: [Spooled] = []
        while let relative = walker.nextObject() as? String {
            let name = (relative as NSString).lastPathComponent
            guard name.hasSuffix(".ndjson"), !name.hasPrefix("."), relative.hasPrefix("events/") else { continue }
            let url = URL(fileURLWithPath: base).appendingPathComponent(relative)
            let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.int64Value ?? 0
            found.append(Spooled(url: url, path: relative, bytes: size))
        }
        return found.sorted { $0.path.utf8.lexicographicallyPrecedes($1.path.utf8) }
    }
}
