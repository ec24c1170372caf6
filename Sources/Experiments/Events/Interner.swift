import Foundation

/// Gives each distinct string (flow, rule, product, …) a small number, from its bytes, without making a
/// `String` per line: an open-addressing table over one byte arena. Number 0 stands for JSON `null`.
struct Interner {
    private var arena: [UInt8] = []
    private var spans: [(offset: Int, count: Int)] = [(0, 0)]
    private var strings: [String?] = [nil]
    private var slots: [Int32]
    private var hashes: [UInt64] = [0]

    init() {
        slots = Array(repeating: -1, count: 1024)
    }

    static let null: Int32 = 0

    var count: Int { spans.count }

    func string(_ id: Int32) -> String? {
        strings[Int(id)]
    }

    /// Hands the bytes of every string numbered from `first` on to `body`, in number order.
    func forEachString(from first: Int32, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        arena.withUnsafeBufferPointer { arena in
            var id = Int(first)
            while id < spans.count {
                let span = spans[id]
                body(UnsafeBufferPointer(rebasing: arena[span.offset ..< span.offset + span.count]))
                id += 1
            }
        }
    }

    mutating func intern(_ text: String) -> Int32 {
        Array(text.utf8).withUnsafeBufferPointer { intern($0) }
    }

    /// A hash of the bytes, eight at a time (a layout or a product id is dozens of bytes).
    static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var hash = HashMix.mix(UInt64(bytes.count))
        guard let base = bytes.baseAddress else { return hash }
        var index = 0
        while index + 8 <= bytes.count {
            hash = HashMix.mix(hash ^ UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self))
            index += 8
        }
        var tail: UInt64 = 0
        while index < bytes.count {
            tail = tail << 8 | UInt64(bytes[index])
            index += 1
        }
        return HashMix.mix(hash ^ tail)
    }

    /// Concrete bytes rather than a generic collection: this runs for most fields of every line.
    mutating func intern(_ bytes: UnsafeBufferPointer<UInt8>) -> Int32 {
        let hash = Self.hash(bytes)
        let mask = slots.count - 1
        var slot = Int(truncatingIfNeeded: hash) & mask
        while true {
            let id = slots[slot]
            if id < 0 { break }
            if hashes[Int(id)] == hash {
                let span = spans[Int(id)]
                if span.count == bytes.count, span.count == 0 || arena.withUnsafeBufferPointer({ stored in
                    memcmp(stored.baseAddress! + span.offset, bytes.baseAddress!, span.count) == 0
                }) { return id }
            }
            slot = (slot + 1) & mask
        }
        let id = Int32(spans.count)
        spans.append((arena.count, bytes.count))
        arena.append(contentsOf: bytes)
        hashes.append(hash)
        strings.append(String(decoding: bytes, as: UTF8.self))
        slots[slot] = id
        if spans.count * 2 > slots.count { grow() }
        return id
    }

    private mutating func grow() {
        slots = Array(repeating: -1, count: slots.count * 2)
        let mask = slots.count - 1
        for id in 1 ..< hashes.count {
            var slot = Int(truncatingIfNeeded: hashes[id]) & mask
            while slots[slot] >= 0 { slot = (slot + 1) & mask }
            slots[slot] = Int32(id)
        }
    }
}
