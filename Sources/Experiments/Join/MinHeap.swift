/// A binary min-heap of (time, payload) pairs: which open exposure closes next, which expiry lapses next.
struct MinHeap<Payload> {
    private var items: [(time: Int64, index: Payload)] = []

    var count: Int { items.count }
    var top: (time: Int64, index: Payload)? { items.first }

    mutating func push(_ time: Int64, _ index: Payload) {
        items.append((time, index))
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard items[child].time < items[parent].time else { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    mutating func pop() -> (time: Int64, index: Payload)? {
        guard let first = items.first else { return nil }
        let last = items.removeLast()
        if !items.isEmpty {
            items[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1
                let right = left + 1
                var smallest = parent
                if left < items.count, items[left].time < items[smallest].time { smallest = left }
                if right < items.count, items[right].time < items[smallest].time { smallest = right }
                if smallest == parent { break }
                items.swapAt(parent, smallest)
                parent = smallest
            }
        }
        return first
    }
}
