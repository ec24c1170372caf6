import Basics
import Dispatch
public import Foundation
public import HTTPCore
import RetentionMessaging
import RetentionMessagingModels
import Runtime
import Synchronization

/// How `serve` looks up a customer it has no facts for (off unless configured).
public struct LiveLookupSettings: Sendable {
    /// Seconds from the request's arrival after which the customer is answered as unknown, whether
    /// or not Apple has answered the lookup.
    public var deadline: Double
    /// Lookups per second this replica may send; nil: Apple's limit for the environment. Apple's
    /// limit is per App, so replicas share it: give each its share.
    public var perSecond: Double?
    /// The App Store Server API's base URL; nil: Apple's host for the environment.
    public var base: URL?
    public var transport: any HTTPTransport
    /// Seconds a customer's looked-up facts are used before they are looked up again.
    public var keepFound: Double
    /// Seconds a customer Apple did not know, or whose lookup failed or came late, stays unknown
    /// before the next lookup: a retried cancellation does not spend the budget twice.
    public var keepMissed: Double
    /// Lookups in flight at once; past it a customer is answered as unknown without one.
    public var maxInFlight: Int

    public static let defaultDeadline = 0.3
    public static let deadlineRange = 0.01...0.6

    public init(deadline: Double = defaultDeadline, perSecond: Double? = nil, base: URL? = nil, transport: any HTTPTransport,
                keepFound: Double = 3600, keepMissed: Double = 300, maxInFlight: Int = 64) {
        self.deadline = deadline
        self.perSecond = perSecond
        self.base = base
        self.transport = transport
        self.keepFound = keepFound
        self.keepMissed = keepMissed
        self.maxInFlight = maxInFlight
    }
}

/// One environment's live lookups: Get All Subscription Statuses for the customer being answered,
/// verified like a notification, paced to Apple's limit without ever waiting for budget, cached by
/// pseudonym (never by transaction id), and never waited for past the deadline.
final class CustomerLookup: Sendable {
    let environment: Environment
    private let settings: LiveLookupSettings
    private let client: SubscriptionStatusClient
    private let key: OfferSigningKey
    private let clock: any RetentionClock
    private let metrics: RealtimeMetrics
    /// Lookups per second this replica sends at most.
    let perSecond: Double

    private struct Remembered {
        var facts: CustomerFacts?
        var until: Double
    }
    private struct State {
        var bucket: TokenBucket
        /// Apple's 429 said the budget is spent until then (clock seconds).
        var pausedUntil: Double = 0
        var inFlight = 0
        var remembered: [String: Remembered] = [:]
    }
    private let state: Mutex<State>

    /// Seconds past the deadline a lookup may still take, to be kept for the customer's next request.
    static let lateGrace = 2.0

    /// The most customers remembered at once; past it, the expired go, then the soonest to expire.
    static let rememberedLimit = 200_000

    init(environment: Environment, settings: LiveLookupSettings, key: OfferSigningKey, clock: any RetentionClock, metrics: RealtimeMetrics) {
        self.environment = environment
        self.settings = settings
        self.key = key
        self.clock = clock
        self.metrics = metrics
        client = SubscriptionStatusClient(environment: environment, transport: settings.transport, base: settings.base, clock: clock)
        // Apple enforces its per-second limit over an hour: a minute's burst, refilled a little
        // below the rate, never spends more than the hour's budget.
        let rate = settings.perSecond ?? RateLimits.apple.perSecond(.subscriptionStatus, in: environment)
        perSecond = rate
        state = Mutex(State(bucket: TokenBucket(capacity: max(1, rate * 60), rate: rate * 59 / 60, now: clock.now())))
    }

    /// Lookups sent to Apple so far.
    var requestsSent: Int { client.requestsSent }

    /// What an earlier lookup found for the customer (`facts` nil: Apple did not know them, or the
    /// lookup failed); nil when there is nothing fresh to go by.
    func remembered(_ pseudonym: String) -> (facts: CustomerFacts?, found: Bool)? {
        let now = clock.now()
        return state.withLock { state in
            guard let entry = state.remembered[pseudonym], entry.until > now else { return nil }
            return (entry.facts, entry.facts != nil)
        }
    }

    enum Start {
        /// The lookup was sent: `completion` is called once, by the deadline at the latest.
        case started
        /// No lookup could be sent (no budget, paused by Apple, too many in flight): answer as unknown now.
        case unknownNow
    }

    /// Looks the customer up, within the deadline counted from the request's arrival. Only when a lookup
    /// is sent is `completion` asked for: what it returns gets the facts (nil: unknown) on another thread,
    /// by the deadline.
    func start(transactionId: String, pseudonym: String, bundleId: String, verifier: NotificationVerifier, arrived: ContinuousClock.Instant,
               completion: () -> @Sendable (CustomerFacts?) -> Void) -> Start {
        let remaining = arrived + .milliseconds(Int64((settings.deadline * 1000).rounded())) - .now
        guard remaining > .milliseconds(1) else {
            metrics.lookup(environment: environment.rawValue, result: "late")
            return .unknownNow
        }
        let now = clock.now()
        let admitted = state.withLock { state -> Bool in
            guard now >= state.pausedUntil, state.inFlight < settings.maxInFlight, state.bucket.take(now: now) == nil else { return false }
            state.inFlight += 1
            return true
        }
        guard admitted else {
            metrics.lookup(environment: environment.rawValue, result: "paced")
            return .unknownNow
        }
        let once = Once(completion())
        let seconds = Double(remaining.components.seconds) + Double(remaining.components.attoseconds) / 1e18
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [metrics, environment] in
            once.call(nil) { metrics.lookup(environment: environment.rawValue, result: "late") }
        }
        let credentials = Credentials(keyId: key.keyId, issuerId: key.issuerId, bundleId: bundleId, privateKey: key.privateKey)
        // On a thread of its own: neither Swift's shared pool (a busy pool must not hold a lookup back)
        // nor Dispatch's (a lookup waiting there could delay the deadline's timer). Apple is given a
        // little longer than the deadline, so an answer that comes late is still kept for next time.
        let thread = Thread { [self] in
            let answer = CurrentThreadExecutor.run { [client] in
                await client.statuses(transactionId: transactionId, credentials: credentials, timeout: seconds + Self.lateGrace)
            }
            let (facts, result) = interpret(answer, transactionId: transactionId, verifier: verifier)
            remember(pseudonym, facts: facts)
            state.withLock { $0.inFlight -= 1 }
            once.call(facts) { metrics.lookup(environment: environment.rawValue, result: result) }
        }
        thread.stackSize = 256 * 1024
        thread.start()
        return .started
    }

    /// The facts Apple signed about the subscription `transactionId` belongs to, and the result's name.
    private func interpret(_ answer: Result<StatusResponse, SubscriptionStatusClient.Failure>, transactionId: String,
                           verifier: NotificationVerifier) -> (CustomerFacts?, String) {
        switch answer {
        case .failure(.notFound):
            return (nil, "not_found")
        case .failure(.rateLimited(let retryAfter)):
            let now = clock.now()
            let until = max(retryAfter ?? now + 60, now + 1)
            state.withLock { state in
                state.pausedUntil = max(state.pausedUntil, until)
                state.bucket.drain(until: until, now: now)
            }
            return (nil, "rate_limited")
        case .failure:
            return (nil, "failed")
        case .success(let response):
            if let found = response.environment, found != environment.appleName { return (nil, "refused") }
            if let bundleId = verifier.bundleId, let found = response.bundleId, found != bundleId { return (nil, "refused") }
            for item in (response.data ?? []).flatMap({ $0.lastTransactions ?? [] }) where item.originalTransactionId == transactionId {
                guard let (transaction, renewal) = try? verifier.verify(item),
                      transaction?.originalTransactionId ?? renewal?.originalTransactionId == transactionId else { return (nil, "refused") }
                var facts = CustomerFacts()
                facts.fold(FactsObservation(signedDate: max(transaction?.signedDate ?? .min, renewal?.signedDate ?? .min),
                                            notification: "", transaction: transaction, renewal: renewal))
                facts.offerHistoryComplete = false
                return (facts, "found")
            }
            return (nil, "not_found")
        }
    }

    private func remember(_ pseudonym: String, facts: CustomerFacts?) {
        let now = clock.now()
        let until = now + (facts == nil ? settings.keepMissed : settings.keepFound)
        state.withLock { state in
            state.remembered[pseudonym] = Remembered(facts: facts, until: until)
            guard state.remembered.count > Self.rememberedLimit else { return }
            state.remembered = state.remembered.filter { $0.value.until > now }
            if state.remembered.count > Self.rememberedLimit * 3 / 4 {
                let cut = state.remembered.values.map(\.until).sorted()[state.remembered.count / 2]
                state.remembered = state.remembered.filter { $0.value.until > cut }
            }
        }
    }
}

/// Calls its closure once, whoever comes first: the answer or the deadline.
private final class Once: Sendable {
    private let done = Atomic<Bool>(false)
    private let body: @Sendable (CustomerFacts?) -> Void

    init(_ body: @escaping @Sendable (CustomerFacts?) -> Void) { self.body = body }

    /// Only the first call does anything; its `counted` runs before the body, so a lookup's result is
    /// in the metrics before its customer is answered.
    func call(_ facts: CustomerFacts?, counted: () -> Void) {
        guard !done.exchange(true, ordering: .acquiringAndReleasing) else { return }
        counted()
        body(facts)
    }
}
