import Basics
import EventContract
public import Foundation
import Synchronization

/// Files events durably without ever making the caller wait.
///
/// `record` appends to a bounded in-memory queue (a lock held for an append). A thread of the
/// recorder's own wakes every `flushInterval`, cuts the queue into one segment per hour partition and
/// stores each. When the store does not answer, segments go to the local **spool** folder instead and
/// wait there, oldest first, until it answers again (also across a restart: a recorder starts by storing
/// what an earlier one left in the same spool). Nothing is dropped silently: a full queue or a full spool drops and counts
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
        /// Why the store refused the last segment, while it does; nil once it takes one again (or
        /// before it was tried). The recorder is degraded while this is set: events wait in the spool.
        public var storeProblem: String?
    }

    public let sink: any EventSink
    public let settings: Settings
    private let onNotice: @Sendable (String) -> Void

    /// Events waiting for the next flush, already in their segments' form: one buffer of lines per
    /// (stream, environment, hour), in first-seen order. Each event is copied in once and freed by
    /// the thread that made it, so a busy server keeps no per-event allocation alive between flushes.
    private struct Queue {
        var pending: [Pending] = []
        /// The buffer the last event went to: events come in time order, so nearly always the next one's.
        var last = 0
        var events = 0
        var recorded: [EventStream: Int] = [:]
        /// Buffers the flushing thread emptied, with their room kept.
        var spare: [[UInt8]] = []
        var closing = false
        var droppingSince: Bool = false
    }

    private struct Pending {
        var stream: EventStream
        var environment: String
        var hour: Int64
        /// A time inside the hour, which names its partition.
        var time: Int64
        var bytes: [UInt8]
        var lines: Int

        func holds(_ record: EventRecord, hour: Int64) -> Bool {
            self.hour == hour && stream == record.stream && environment == record.environment
        }
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
        let (queued, recorded) = queue.withLock { ($0.events, $0.recorded) }
        copy.queued = queued
        for (stream, count) in recorded { copy.recorded[stream.rawValue] = count }
        return copy
    }

    /// Queues one event; never blocks on the store.
    public func record(_ record: EventRecord) {
        let accepted = queue.withLock { queue -> Bool? in
            guard !queue.closing else { return nil }
            guard queue.events < settings.queueLimit else {
                let first = !queue.droppingSince
                queue.droppingSince = true
                return first ? false : nil
            }
            queue.droppingSince = false
            let hour = record.hourBucket
            if queue.last >= queue.pending.count || !queue.pending[queue.last].holds(record, hour: hour) {
                if let index = queue.pending.firstIndex(where: { $0.holds(record, hour: hour) }) {
                    queue.last = index
                } else {
                    var bytes = queue.spare.popLast() ?? []
                    if bytes.capacity == 0 { bytes.reserveCapacity(64 * 1024) }
                    queue.pending.append(Pending(stream: record.stream, environment: record.environment, hour: hour,
                                                 time: record.time, bytes: bytes, lines: 0))
                    queue.last = queue.pending.count - 1
                }
            }
            queue.pending[queue.last].bytes += record.line
            queue.pending[queue.last].bytes.append(0x0A)
            queue.pending[queue.last].lines += 1
            queue.events += 1
            queue.recorded[record.stream, default: 0] += 1
            return true
        }
        switch accepted {
        case true?:
            break
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
            ThreadName.setCurrent("rs-events")
            var sequence = 0
            var outage = false
            // Whether the spool may hold segments: an earlier process's, or an outage's.
            var leftovers = true
            while true {
                _ = wake.wait(timeout: .now() + settings.flushInterval)
                var (pending, closing) = queue.withLock { queue in
                    let taken = queue.pending
                    queue.pending = []
                    queue.last = 0
                    queue.events = 0
                    return (taken, queue.closing)
                }
                // Oldest first: what waits in the spool, then this flush's segments, straight to the
                // store while it answers and into the spool once it does not.
                var storeAnswers = true
                if leftovers {
                    storeAnswers = uploadSpooled(outage: &outage)
                    leftovers = !storeAnswers
                }
                for index in pending.indices {
                    let segment = cut(pending[index], sequence: &sequence)
                    if storeAnswers, store(segment, outage: &outage) { continue }
                    storeAnswers = false
                    leftovers = true
                    spool(segment)
                }
                recycle(&pending)
                if !leftovers, outage {
                    outage = false
                    onNotice("\(sink.location) answers again; the spooled events are stored")
                }
                if closing {
                    // A deadline on the monotonic clock: a wall clock set back must not stretch the close.
                    let deadline = ContinuousClock.now + .milliseconds(Int64((settings.closeTimeout * 1000).rounded()))
                    while leftovers, ContinuousClock.now < deadline {
                        leftovers = !uploadSpooled(outage: &outage)
                        if leftovers { Thread.sleep(forTimeInterval: 0.2) }
                    }
                    break
                }
            }
            finished.signal()
        }
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
            let thread = Thread { [self] in
                ThreadName.setCurrent("rs-events-close")
                continuation.resume(returning: close() as Counters)
            }
            thread.start()
        }
    }

    // MARK: The flushing thread

    /// One segment: the events of one stream, environment and hour from one flush.
    struct Segment {
        var path: String
        var bytes: [UInt8]
        var lines: Int
        var stream: EventStream
    }

    /// A flush's buffer as a segment, named by its partition and this writer's next sequence number.
    private func cut(_ buffer: Pending, sequence: inout Int) -> Segment {
        sequence += 1
        let partition = EventRecord(stream: buffer.stream, environment: buffer.environment, time: buffer.time, line: []).partitionPath
        let path = partition + "/\(settings.writerId)-\(String(format: "%010d", sequence)).ndjson"
        return Segment(path: path, bytes: buffer.bytes, lines: buffer.lines, stream: buffer.stream)
    }

    /// Hands a flush's buffers back, emptied but with their room, for the next events: a buffer
    /// allocated afresh every flush would have the system zero its pages again each second.
    private func recycle(_ pending: inout [Pending]) {
        var emptied: [[UInt8]] = []
        for index in pending.indices {
            var bytes = pending[index].bytes
            pending[index].bytes = []
            bytes.removeAll(keepingCapacity: true)
            emptied.append(bytes)
        }
        queue.withLock { queue in
            queue.spare += emptied.prefix(max(0, Self.spareBuffers - queue.spare.count))
        }
    }

    /// Emptied buffers kept for reuse; a flush usually fills one (one partition), two at an hour's turn.
    private static let spareBuffers = 4

    /// Stores one segment; false (with one notice per outage) when the store does not take it.
    private func store(_ segment: Segment, outage: inout Bool) -> Bool {
        do {
            try sink.put(segment.path, segment.bytes)
        } catch {
            counters.withLock {
                $0.storeFailures += 1
                $0.storeProblem = error.description
            }
            if !outage {
                outage = true
                onNotice("cannot store events at \(sink.location) (\(error.description)); they wait in the spool \(settings.spool.path) and are stored when it answers again")
            }
            return false
        }
        counters.withLock {
            $0.stored[segment.stream.rawValue, default: 0] += segment.lines
            $0.storedSegments += 1
            $0.storeProblem = nil
        }
        return true
    }

    /// Keeps a segment the store did not take in the spool, or drops and counts it when the spool is full.
    private func spool(_ segment: Segment) {
        let full = counters.withLock { $0.spooledBytes + Int64(segment.bytes.count) > settings.spoolLimitBytes }
        if full {
            counters.withLock { $0.dropped["spool_full", default: 0] += segment.lines }
            onNotice("the event spool \(settings.spool.path) is full (\(settings.spoolLimitBytes) bytes waiting for \(sink.location)); \(segment.lines) events were dropped and counted")
            return
        }
        do {
            try AtomicFile.write(segment.bytes, to: settings.spool.appendingPathComponent(segment.path))
            counters.withLock {
                $0.spooledSegments += 1
                $0.spooledBytes += Int64(segment.bytes.count)
            }
        } catch {
            counters.withLock { $0.dropped["spool_unwritable", default: 0] += segment.lines }
            onNotice("cannot write the event spool \(settings.spool.path) (\(error.description)) while \(sink.location) does not answer; \(segment.lines) events were dropped and counted")
        }
    }

    /// Stores what the spool holds, oldest first, deleting each once stored; false when the store
    /// refused one (it and the rest stay spooled).
    private func uploadSpooled(outage: inout Bool) -> Bool {
        for listed in Self.spooled(in: settings.spool) {
            guard let data = FileManager.default.contents(atPath: listed.url.path) else { continue }
            let segment = Segment(path: listed.path, bytes: Array(data), lines: data.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) },
                                  stream: listed.path.hasPrefix("events/v1/outcomes/") ? .outcomes : .decisions)
            guard store(segment, outage: &outage) else { return false }
            unlink(listed.url.path)
            counters.withLock {
                $0.spooledSegments -= 1
                $0.spooledBytes -= Int64(data.count)
            }
        }
        return true
    }

    struct Spooled {
        var url: URL
        var path: String
        var bytes: Int64
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

extension EventRecorder.Counters {
    /// Why the recorder is degraded, for `/readyz`; nil while the store takes what it is given.
    public func degradation(store location: String, spool: URL) -> String? {
        guard let storeProblem else { return nil }
        return "events: the event store \(location) refuses segments (\(storeProblem)); \(spooledSegments) segment(s) "
            + "(\(spooledBytes) bytes) wait in the spool \(spool.path) and are stored when it takes them again"
    }

    /// One line for a person: what was recorded, stored, dropped (and why) and left in the spool.
    public var summary: String {
        let recorded = self.recorded.values.reduce(0, +)
        let stored = self.stored.values.reduce(0, +)
        let dropped = self.dropped.values.reduce(0, +)
        var text = "\(recorded) recorded, \(stored) stored"
        if dropped > 0 { text += ", \(dropped) dropped (\(self.dropped.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")))" }
        if spooledSegments > 0 { text += ", \(spooledSegments) segment(s) left in the spool for the next start" }
        return text
    }
}
