import Basics
import Foundation
public import EventStore
public import RetentionMessagingModels
import StateStore
import Synchronization

/// One environment's customer facts in `serve`: the table the reconcile job published (polled like
/// the snapshot: a small pointer each poll, the table only when the pointer changes), and on top of
/// it what the notifications this replica received since then say. A table that cannot be read or
/// does not match (digest, App, environment, pseudonym key) is refused, and the previous one keeps
/// serving.
public final class CustomerFactsStore: Sendable {
    public let environment: Environment
    private let store: (any ObjectStore)?
    private let bundleId: String?
    private let keyId: String
    private let clock: any RetentionClock
    private let log: RequestLog
    private let metrics: RealtimeMetrics?

    /// A class, so that reading the current table on the request path is one reference, not a copy.
    private final class Loaded: Sendable {
        let pointer: FactsPointer
        let table: FactsTable

        init(pointer: FactsPointer, table: FactsTable) {
            self.pointer = pointer
            self.table = table
        }
    }
    private let loaded = Mutex<Loaded?>(nil)
    /// Pseudonym → facts: the table's (if any), with every notification received since folded in.
    private let overlay = Mutex<[String: CustomerFacts]>([:])
    /// How many customers the overlay holds, read without its lock: most requests find it empty.
    private let overlaySize = Atomic<Int>(0)
    private let lastProblem = Mutex<String?>(nil)

    /// The most customers the overlay keeps between two tables; past it, the oldest half is dropped
    /// (those customers fall back to the table until the next one).
    public static let overlayLimit = 1_000_000

    /// `store`: the events' root, where `facts publish` writes; nil keeps only what notifications say.
    init(environment: Environment, store: (any ObjectStore)?, bundleId: String?, keyId: String,
         clock: any RetentionClock, log: RequestLog, metrics: RealtimeMetrics?) {
        self.environment = environment
        self.store = store
        self.bundleId = bundleId
        self.keyId = keyId
        self.clock = clock
        self.log = log
        self.metrics = metrics
    }

    /// What is known of the customer, and from where.
    public func facts(for pseudonym: String) -> (facts: CustomerFacts?, source: FactsSource) {
        if overlaySize.load(ordering: .relaxed) > 0, let noted = overlay.withLock({ $0[pseudonym] }) { return (noted, .notification) }
        if let found = loaded.withLock({ $0 })?.table.facts(for: pseudonym) { return (found, .table) }
        return (nil, .unknown)
    }

    /// Folds a verified notification's facts into the customer's.
    public func observe(_ observation: FactsObservation, pseudonym: String) {
        let table = loaded.withLock { $0 }?.table
        overlay.withLock { overlay in
            var facts = overlay[pseudonym] ?? table?.facts(for: pseudonym) ?? CustomerFacts()
            facts.fold(observation)
            overlay[pseudonym] = facts
            if overlay.count > Self.overlayLimit {
                let cut = overlay.values.map(\.asOf).sorted()[overlay.count / 2]
                overlay = overlay.filter { $0.value.asOf > cut }
            }
            overlaySize.store(overlay.count, ordering: .relaxed)
        }
    }

    /// The table being served: its pointer and count; nil before one is loaded.
    public var table: (pointer: FactsPointer, count: Int)? {
        loaded.withLock { $0 }.map { ($0.pointer, $0.table.count) }
    }

    /// Reads the pointer, and the table when it names another one. Called from serve's polling thread.
    public func reload() {
        guard let store else { return }
        let environment = environment.rawValue
        let known = loaded.withLock { $0 }?.pointer.digest
        let expected = (bundleId, environment, keyId)
        let outcome: Result<Loaded?, any Error> = CurrentThreadExecutor.run {
            do {
                return .success(try await FactsPointer.current(in: store, environment: environment, expecting: expected, unlessDigest: known)
                    .map { Loaded(pointer: $0.pointer, table: $0.table) })
            } catch {
                return .failure(error)
            }
        }
        switch outcome {
        case .success(nil):
            return
        case .success(let fresh?):
            loaded.withLock { $0 = fresh }
            // What the new table already holds no longer needs the overlay.
            overlay.withLock { overlay in
                overlay = overlay.filter { pseudonym, facts in
                    guard let tabled = fresh.table.facts(for: pseudonym) else { return true }
                    return facts.asOf / 1000 > tabled.asOf / 1000
                }
                overlaySize.store(overlay.count, ordering: .relaxed)
            }
            lastProblem.withLock { $0 = nil }
            metrics?.factsLoaded(environment: environment, customers: fresh.table.count, builtAt: fresh.pointer.builtAt)
            log.write(["event": "facts_loaded", "environment": .text(environment), "customers": .integer(Int64(fresh.table.count)),
                       "digest": .text(fresh.pointer.digest), "time": .text(UTCTime(now: clock).formatted())])
        case .failure(let error):
            let message = "the facts table in \(store.location) was refused: \(error)"
            let repeated = lastProblem.withLock { last in
                defer { last = message }
                return last == message
            }
            metrics?.factsRefused(environment: environment)
            if !repeated {
                let serving = loaded.withLock { $0 }.map { "still serving \($0.pointer.digest)" } ?? "no table is being served yet"
                log.write(["event": "facts_refused", "environment": .text(environment), "message": .text("\(message); \(serving)"),
                           "time": .text(UTCTime(now: clock).formatted())])
            }
        }
    }
}
