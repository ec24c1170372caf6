/// An array kept in chunks of a fixed size: growing adds one chunk instead of moving every element into
/// a buffer twice as large, so the memory it holds stays within a chunk of its count, and no moment
/// holds two copies of it. Elements are only appended and overwritten, never removed.
struct ChunkedArray<Element> {
    private static var chunkShift: Int { 14 }
    private static var chunkSize: Int { 1 << chunkShift }
    private var chunks: [[Element]] = []
    private(set) var count = 0

    subscript(index: Int32) -> Element {
        get {
            let index = Int(index)
            return chunks[index >> Self.chunkShift][index & (Self.chunkSize - 1)]
        }
        set {
            let index = Int(index)
            chunks[index >> Self.chunkShift][index & (Self.chunkSize - 1)] = newValue
        }
    }

    /// Changes the element at `index` in place.
    mutating func update(_ index: Int32, _ body: (inout Element) -> Void) {
        let index = Int(index)
        body(&chunks[index >> Self.chunkShift][index & (Self.chunkSize - 1)])
    }

    /// Appends `element` and returns its index.
    mutating func append(_ element: Element) -> Int32 {
        if count & (Self.chunkSize - 1) == 0 {
            var chunk: [Element] = []
            chunk.reserveCapacity(Self.chunkSize)
            chunks.append(chunk)
        }
        chunks[chunks.count - 1].append(element)
        count += 1
        return Int32(count - 1)
    }
}
