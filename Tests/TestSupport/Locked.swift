import Synchronization

/// A value that a test shares with the threads of a server, a handler or a transport, behind a
/// lock: the one box for what tests record across threads, so no test class has to claim an
/// unchecked Sendable conformance.
public final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    public init(_ value: Value) {
        mutex = Mutex(value)
    }

    /// Reads or changes the value while holding the lock; the body should neither block nor wait.
    public func withLock<Result: Sendable, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        try mutex.withLock { (value: inout Value) throws(Failure) -> Result in try body(&value) }
    }

    /// A copy of the value as it is now.
    public var value: Value {
        withLock { $0 }
    }

    public func set(_ value: Value) {
        withLock { $0 = value }
    }
}

extension Locked where Value: RangeReplaceableCollection {
    /// An empty collection.
    public convenience init() {
        self.init(Value())
    }

    public func append(_ element: Value.Element) {
        withLock { $0.append(element) }
    }
}

/// Lines a log sink received, in order.
public typealias LogLines = Locked<[String]>

