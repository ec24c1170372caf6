import Basics
import Foundation
import Synchronization

/// One segment to read: which stream it is, and whether the report only looks at it for outcomes
/// dated after its clock.
struct SegmentWork: Sendable {
    var segment: EventSegment
    var isOutcome: Bool
    var inspectOnly: Bool
}

/// A segment read and parsed away from the joining thread: its events in order, their strings
/// numbered by the segment's own interner, or the first line it refused.
struct ParsedSegment: Sendable {
    var events: [Event] = []
    var parser = EventLineParser()
    var failure: (any Error & Sendable)?

    /// Reads `work` with a parser of its own.
    static func read(_ work: SegmentWork, from source: any EventSource) -> ParsedSegment {
        var parsed = ParsedSegment()
        do {
            try SegmentLines.read(work.segment, from: source) { line, number in
                do throws(EventLineParser.Refusal) {
                    if let event = try parsed.parser.parse(line, isOutcome: work.isOutcome) { parsed.events.append(event) }
                } catch {
                    throw EventReadError(location: work.segment.location, line: number, reason: error.reason)
                }
            }
        } catch {
            parsed.failure = error
        }
        return parsed
    }

    /// The events with their strings numbered as `interner` numbers them (new strings are added to
    /// it in the order this segment first used them, as reading it on the joining thread would).
    mutating func events(renumberedFor interner: inout Interner) -> [Event] {
        var map: [Int32] = [Interner.null]
        map.reserveCapacity(parser.interner.count)
        parser.interner.forEachString(from: 1) { map.append(interner.intern($0)) }
        map.withUnsafeBufferPointer { map in
            for index in events.indices { events[index].renumber(map) }
        }
        return events
    }
}

/// Splits a segment's bytes into lines, numbered from 1.
enum SegmentLines {
    static func read(_ segment: EventSegment, from source: any EventSource,
                     _ handle: (UnsafeBufferPointer<UInt8>, Int) throws -> Void) throws {
        var carry: [UInt8] = []
        var lineNumber = 0
        try source.read(segment) { chunk in
            let bytes = chunk.bindMemory(to: UInt8.self)
            guard let base = bytes.baseAddress else { return }
            var start = 0
            // memchr finds line ends at memory speed; most lines lie whole inside one chunk.
            while start < bytes.count, let found = memchr(base + start, 0x0A, bytes.count - start) {
                let newline = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
                lineNumber += 1
                if carry.isEmpty {
                    try handle(UnsafeBufferPointer(start: base + start, count: newline - start), lineNumber)
                } else {
                    carry.append(contentsOf: UnsafeBufferPointer(start: base + start, count: newline - start))
                    try carry.withUnsafeBufferPointer { try handle($0, lineNumber) }
                    carry.removeAll(keepingCapacity: true)
                }
                start = newline + 1
            }
            if start < bytes.count {
                carry.append(contentsOf: UnsafeBufferPointer(start: base + start, count: bytes.count - start))
            }
        }
        if !carry.isEmpty {
            // The contract ends every line with a newline; a last line without one is still read.
            lineNumber += 1
            try carry.withUnsafeBufferPointer { try handle($0, lineNumber) }
        }
    }
}

/// Reads and parses segments on `readers` threads of its own, ahead of the one thread that joins
/// them, which takes them strictly in the order given: the join sees exactly the events, in exactly
/// the order, that reading one segment after another would give it. At most `window` segments are
/// read ahead of the join, so memory is bounded by the segments in flight, not by how many there are.
final class SegmentReadAhead: Sendable {
    private let work: [SegmentWork]
    private let source: any EventSource
    private let next = Atomic(0)
    private let stopped = Atomic(false)
    private let room: DispatchSemaphore
    private let ready: [DispatchSemaphore]
    private let slots: Mutex<[Int: ParsedSegment]> = Mutex([:])
    private let readers: Int

    init(_ work: [SegmentWork], from source: any EventSource, readers: Int, window: Int) {
        self.work = work
        self.source = source
        self.readers = readers
        // Made at 0 and raised: a semaphore freed below the value it was made with traps, and a join
        // that stops early leaves tokens with segments it never took.
        room = DispatchSemaphore(value: 0)
        for _ in 0 ..< max(1, window) { room.signal() }
        ready = work.map { _ in DispatchSemaphore(value: 0) }
    }

    func start() {
        for index in 0 ..< min(readers, work.count) {
            let thread = Thread { [self] in
                ThreadName.setCurrent("rs-results-\(index)")
                // The join is the one thread every reader waits on in the end: it goes first.
                ThreadPriority.lowerCurrent(by: 5)
                readLoop()
            }
            thread.start()
        }
    }

    private func readLoop() {
        while true {
            room.wait()
            let index = next.add(1, ordering: .relaxed).oldValue
            guard index < work.count, !stopped.load(ordering: .relaxed) else {
                room.signal()
                return
            }
            let parsed = ParsedSegment.read(work[index], from: source)
            slots.withLock { $0[index] = parsed }
            ready[index].signal()
        }
    }

    /// The segment at `index`, once read; each is taken once, in order.
    func take(_ index: Int) -> ParsedSegment {
        ready[index].wait()
        let parsed = slots.withLock { $0.removeValue(forKey: index) } ?? ParsedSegment()
        room.signal()
        return parsed
    }

    /// Lets the readers end after the segment each is reading (the join stopped early).
    func stop() {
        stopped.store(true, ordering: .relaxed)
        for _ in 0 ..< readers { room.signal() }
    }
}
