public import EventContract
import Basics
import Foundation
import Crypto
import Synchronization
public import RetentionMessagingModels

/// One event, ready to be filed: its stream, its time (which hour partition it goes to) and its line.
public struct EventRecord: Sendable {
    public var stream: EventStream
    public var environment: String
    /// Milliseconds since 1970.
    public var time: Int64
    /// One line of canonical JSON (sorted keys), without the newline.
    public var line: [UInt8]

    public init(stream: EventStream, environment: String, time: Int64, line: [UInt8]) {
        self.stream = stream
        self.environment = environment
        self.time = time
        self.line = line
    }

    /// The UTC hour the record is filed under (milliseconds since 1970 divided by an hour, floored).
    public var hourBucket: Int64 {
        UTCTime.floorDivide(time, UTCTime.hour).quotient
    }

    /// The segment folder this record belongs to, relative to the store's root.
    public var partitionPath: String {
        let (date, hour) = EventTime.partition(time)
        return "events/v1/\(stream.rawValue)/environment=\(environment)/date=\(date)/hour=\(hour)"
    }
}

/// A value of one member of an event line.
public enum EventValue: Sendable, Hashable {
    case string(String)
    case integer(Int64)
    case bool(Bool)
    case null

    public init(_ text: String?) {
        self = text.map { .string($0) } ?? .null
    }

    public init(_ number: Int64?) {
        self = number.map { .integer($0) } ?? .null
    }
}

/// Writes event lines of the layout's version 1: every line of a stream has the same keys, in sorted
/// order, absent values as `null`, times as `YYYY-MM-DDTHH:MM:SS.mmmZ` (UTC).
public enum EventLine {
    public static let schema: Int64 = 1

    /// A fresh event id: a version-4 UUID, lowercase, unique to the event — 64 random bits drawn once
    /// per process, then a counter. Drawing 128 random bits for every event cost serve a microsecond
    /// per request; readers only need the id to tell a retried copy from another event.
    public static func newEventId() -> String {
        var bytes = [UInt8](repeating: 0, count: 16)
        let prefix = eventIdPrefix
        let count = eventIdCounter.add(1, ordering: .relaxed).newValue
        for index in 0..<8 {
            bytes[index] = UInt8(truncatingIfNeeded: prefix >> (56 - 8 * index))
            bytes[8 + index] = UInt8(truncatingIfNeeded: count >> (56 - 8 * index))
        }
        bytes[6] = (bytes[6] & 0x0f) | 0x40
        // The variant's two bits take the counter's top ones, which 2^62 events never reach.
        bytes[8] = (bytes[8] & 0x3f) | 0x80
        return bytes.withUnsafeBytes { UUIDBytes.lowercase($0) }
    }

    private static let eventIdPrefix: UInt64 = CryptoRandom.bytes(8).reduce(0) { $0 << 8 | UInt64($1) }
    private static let eventIdCounter = Atomic<UInt64>(0)

    public static func time(_ millis: Int64) -> EventValue {
        .string(EventTime.format(millis))
    }

    /// The line of `stream` with `members`: every field the contract declares for the stream, in its
    /// order; a declared member missing from `members` is a programming error, caught here.
    public static func encode(_ stream: EventStream, _ members: [EventField: EventValue]) -> [UInt8] {
        precondition(Set(members.keys) == Set(stream.fields), "a \(stream.lineType) line has exactly the contract's members")
        var writer = CanonicalJSONWriter(capacity: 640)
        writer.object { object in
            for field in stream.fields {
                let key = field.rawValue
                switch members[field]! {
                case .string(let text): object.member(key, string: text)
                case .integer(let number): object.member(key, integer: number)
                case .bool(let flag): object.member(key, literal: flag ? "true" : "false")
                case .null: object.member(key, literal: "null")
                }
            }
        }
        return writer.bytes
    }
}

/// What `serve` knows of one realtime request, to become a decision event.
public struct DecisionFacts: Sendable {
    public var time: Int64
    public var environment: String
    public var requestIdentifier: String?
    public var customer: String?
    public var keyId: String
    public var productId: String?
    public var localeRequested: String?
    public var localeServed: String?
    public var flow: String?
    public var rule: String?
    public var splitGroup: String?
    public var splitControl: Bool
    /// The arm's whole group as the snapshot laid it out (`RuntimeSnapshot.splitLayouts`).
    public var splitLayout: String?
    public var answer: DecisionAnswer
    public var messageIdentifier: String?
    public var offerIdentifier: String?
    public var alternateProductId: String?
    public var snapshot: String?
    public var latencyMicros: Int64
    /// What serve knew of the customer when it answered; nil when it keeps no facts.
    public var known: KnownFacts?

    public init(time: Int64, environment: String, requestIdentifier: String?, customer: String?, keyId: String,
                productId: String?, localeRequested: String?, localeServed: String?, flow: String?, rule: String?,
                splitGroup: String?, splitControl: Bool, answer: DecisionAnswer, messageIdentifier: String?, offerIdentifier: String?,
                alternateProductId: String?, snapshot: String?, latencyMicros: Int64) {
        self.time = time
        self.environment = environment
        self.requestIdentifier = requestIdentifier
        self.customer = customer
        self.keyId = keyId
        self.productId = productId
        self.localeRequested = localeRequested
        self.localeServed = localeServed
        self.flow = flow
        self.rule = rule
        self.splitGroup = splitGroup
        self.splitControl = splitControl
        self.answer = answer
        self.messageIdentifier = messageIdentifier
        self.offerIdentifier = offerIdentifier
        self.alternateProductId = alternateProductId
        self.snapshot = snapshot
        self.latencyMicros = latencyMicros
    }

    /// The decision line (`arm` is the rule's name when the rule belongs to a split group). Written on
    /// `serve`'s answering path: the keys, in sorted order, are constant bytes copied as they are, and
    /// only the values are escaped; a test holds it to `recordByDictionary`, which names every member
    /// through `EventField`.
    public func record(eventId: String = EventLine.newEventId()) -> EventRecord {
        var line = LineWriter(capacity: 768)
        line.raw("{\"alternateProductId\":")
        line.string(alternateProductId)
        line.raw(",\"answer\":")
        line.string(answer.rawValue)
        line.raw(",\"arm\":")
        line.string(splitGroup == nil ? nil : rule)
        line.raw(",\"billing\":")
        line.string(known?.billing?.rawValue)
        line.raw(",\"customer\":")
        line.string(customer)
        line.raw(",\"environment\":")
        line.string(environment)
        line.raw(",\"eventId\":")
        line.string(eventId)
        line.raw(",\"facts\":")
        line.string(known?.source.rawValue)
        line.raw(",\"factsAsOf\":")
        if let asOf = known?.asOf {
            line.raw("\"")
            line.bytes.append(contentsOf: EventTime.formatBytes(asOf))
            line.raw("\"")
        } else {
            line.raw("null")
        }
        line.raw(",\"flow\":")
        line.string(flow)
        line.raw(",\"keyId\":")
        line.string(keyId)
        line.raw(",\"latencyMicros\":")
        line.integer(latencyMicros)
        line.raw(",\"localeRequested\":")
        line.string(localeRequested)
        line.raw(",\"localeServed\":")
        line.string(localeServed)
        line.raw(",\"messageIdentifier\":")
        line.string(messageIdentifier)
        line.raw(",\"offerIdentifier\":")
        line.string(offerIdentifier)
        line.raw(",\"offerWithin90Days\":")
        line.raw(known?.offerWithin90Days == nil ? "null" : known?.offerWithin90Days == true ? "true" : "false")
        line.raw(",\"productId\":")
        line.string(productId)
        line.raw(",\"requestIdentifier\":")
        line.string(requestIdentifier)
        line.raw(",\"rule\":")
        line.string(rule)
        line.raw(",\"schema\":")
        line.integer(EventLine.schema)
        line.raw(",\"snapshot\":")
        line.string(snapshot)
        line.raw(splitControl ? ",\"splitControl\":true,\"splitGroup\":" : ",\"splitControl\":false,\"splitGroup\":")
        line.string(splitGroup)
        line.raw(",\"splitLayout\":")
        line.string(splitGroup == nil ? nil : splitLayout)
        line.raw(",\"storefront\":")
        line.string(known?.storefront)
        line.raw(",\"tenureBand\":")
        line.string(known?.tenureBand)
        line.raw(",\"time\":\"")
        line.bytes.append(contentsOf: EventTime.formatBytes(time))
        line.raw("\",\"type\":\"decision\"}")
        return EventRecord(stream: .decisions, environment: environment, time: time, line: line.bytes)
    }

    /// The same line through the generic encoder: what `record` must equal, byte for byte.
    public func recordByDictionary(eventId: String) -> EventRecord {
        EventRecord(stream: .decisions, environment: environment, time: time, line: EventLine.encode(.decisions, members(eventId: eventId)))
    }

    /// The decision line's members, each named by the contract.
    public func members(eventId: String) -> [EventField: EventValue] {
        [
            .alternateProductId: EventValue(alternateProductId), .answer: .string(answer.rawValue),
            .arm: splitGroup == nil ? .null : EventValue(rule), .customer: EventValue(customer),
            .environment: .string(environment), .eventId: .string(eventId), .flow: EventValue(flow),
            .keyId: .string(keyId), .latencyMicros: .integer(latencyMicros), .localeRequested: EventValue(localeRequested),
            .localeServed: EventValue(localeServed), .messageIdentifier: EventValue(messageIdentifier),
            .offerIdentifier: EventValue(offerIdentifier), .productId: EventValue(productId),
            .requestIdentifier: EventValue(requestIdentifier), .rule: EventValue(rule), .schema: .integer(EventLine.schema),
            .snapshot: EventValue(snapshot), .splitControl: .bool(splitControl), .splitGroup: EventValue(splitGroup),
            .splitLayout: splitGroup == nil ? .null : EventValue(splitLayout),
            .time: EventLine.time(time), .type: .string(EventStream.decisions.lineType),
            .billing: EventValue(known?.billing?.rawValue), .facts: EventValue(known?.source.rawValue),
            .factsAsOf: known?.asOf.map(EventLine.time) ?? .null, .offerWithin90Days: known?.offerWithin90Days.map(EventValue.bool) ?? .null,
            .storefront: EventValue(known?.storefront), .tenureBand: EventValue(known?.tenureBand),
        ]
    }
}

/// What a decision knew of its customer, as its event records it: where the facts came from and how
/// fresh they were, and the few a team slices results by — coarse on purpose (a tenure band, a flag
/// for a recent offer), so the events identify nobody better than the facts table does.
public struct KnownFacts: Sendable, Hashable {
    public var source: FactsSource
    /// The newest signed date among the facts used; nil when nothing was known.
    public var asOf: Int64?
    public var storefront: String?
    /// `0-1m`, `1-3m`, `3-12m` or `12m+`.
    public var tenureBand: String?
    /// Whether any offer was redeemed in the 90 days before the answer; nil when the history is unknown.
    public var offerWithin90Days: Bool?
    public var billing: BillingState?

    public init(source: FactsSource, asOf: Int64?, storefront: String?, tenureBand: String?, offerWithin90Days: Bool?, billing: BillingState?) {
        self.source = source
        self.asOf = asOf
        self.storefront = storefront
        self.tenureBand = tenureBand
        self.offerWithin90Days = offerWithin90Days
        self.billing = billing
    }

    /// What `facts` says at `time`; nil facts are `unknown`.
    public init(_ facts: CustomerFacts?, source: FactsSource, at time: Int64) {
        guard let facts else {
            self.init(source: .unknown, asOf: nil, storefront: nil, tenureBand: nil, offerWithin90Days: nil, billing: nil)
            return
        }
        var recent: Bool?
        if facts.transactionAsOf > .min {
            recent = facts.lastRedemption(of: []).map { !Self.recentOffer.hasPassed(from: $0, to: time) } ?? false
            // Facts that saw only the newest transaction cannot tell that no offer was redeemed.
            if recent == false && !facts.offerHistoryComplete { recent = nil }
        }
        self.init(source: source, asOf: facts.asOf > .min ? facts.asOf : nil, storefront: facts.storefront,
                  tenureBand: facts.tenureMonths(at: time).map { Self.band(months: $0) }, offerWithin90Days: recent, billing: facts.billing(at: time))
    }

    /// What `offerWithin90Days` means, as `offers: {redeemedWithin: 90d}` would.
    static let recentOffer = CustomerPeriod(count: 90, unit: .days)

    static func band(months: Int64) -> String {
        switch months {
        case ..<1: "0-1m"
        case ..<3: "1-3m"
        case ..<12: "3-12m"
        default: "12m+"
        }
    }
}

/// What one verified notification says about a customer, to become an outcome event.
public struct OutcomeFacts: Sendable {
    public var time: Int64
    public var environment: String
    public var notificationUUID: String
    public var notificationType: String
    public var subtype: String?
    public var customer: String
    public var keyId: String
    public var productId: String?
    public var autoRenewProductId: String?
    public var autoRenewStatus: Int64?
    public var offerType: Int64?
    public var offerIdentifier: String?
    public var price: Int64?
    public var currency: String?
    public var effectiveDate: Int64?
    public var expiresDate: Int64?
    /// Received by `serve`, or read from Notification History.
    public var source: OutcomeSource
    /// What the notification signed about the customer, for the facts table: the transaction's
    /// `storefront`, `originalPurchaseDate`, `inAppOwnershipType`, `purchaseDate` and `offerType`
    /// (the offer this transaction was bought under), and the renewal info's
    /// `isInBillingRetryPeriod`, `gracePeriodExpiresDate` and `priceIncreaseStatus`.
    public var storefront: String?
    public var originalPurchaseDate: Int64?
    public var ownership: String?
    public var purchaseDate: Int64?
    public var redeemedOfferType: Int64?
    public var billingRetry: Bool?
    public var gracePeriodExpiresDate: Int64?
    public var priceIncreaseStatus: Int64?

    public init(time: Int64, environment: String, notificationUUID: String, notificationType: String, subtype: String?,
                customer: String, keyId: String, productId: String?, autoRenewProductId: String?, autoRenewStatus: Int64?,
                offerType: Int64?, offerIdentifier: String?, price: Int64?, currency: String?, effectiveDate: Int64?,
                expiresDate: Int64?, source: OutcomeSource) {
        self.time = time
        self.environment = environment
        self.notificationUUID = notificationUUID
        self.notificationType = notificationType
        self.subtype = subtype
        self.customer = customer
        self.keyId = keyId
        self.productId = productId
        self.autoRenewProductId = autoRenewProductId
        self.autoRenewStatus = autoRenewStatus
        self.offerType = offerType
        self.offerIdentifier = offerIdentifier
        self.price = price
        self.currency = currency
        self.effectiveDate = effectiveDate
        self.expiresDate = expiresDate
        self.source = source
    }

    /// The outcome line. Its `eventId` is Apple's `notificationUUID`, so the same notification read by
    /// push and by pull (or retried by Apple) is one event to every reader.
    public func record() -> EventRecord {
        EventRecord(stream: .outcomes, environment: environment, time: time, line: EventLine.encode(.outcomes, members))
    }

    /// The outcome line's members, each named by the contract.
    public var members: [EventField: EventValue] {
        [
            .autoRenewProductId: EventValue(autoRenewProductId), .autoRenewStatus: EventValue(autoRenewStatus),
            .currency: EventValue(currency), .customer: .string(customer),
            .effectiveDate: effectiveDate.map(EventLine.time) ?? .null, .environment: .string(environment),
            .eventId: .string(notificationUUID.lowercased()), .expiresDate: expiresDate.map(EventLine.time) ?? .null,
            .keyId: .string(keyId), .notificationType: .string(notificationType),
            .notificationUUID: .string(notificationUUID.lowercased()), .offerIdentifier: EventValue(offerIdentifier),
            .offerType: EventValue(offerType), .price: EventValue(price), .productId: EventValue(productId),
            .schema: .integer(EventLine.schema), .source: .string(source.rawValue), .subtype: EventValue(subtype),
            .time: EventLine.time(time), .type: .string(EventStream.outcomes.lineType),
            .storefront: EventValue(storefront), .originalPurchaseDate: originalPurchaseDate.map(EventLine.time) ?? .null,
            .ownership: EventValue(ownership), .purchaseDate: purchaseDate.map(EventLine.time) ?? .null,
            .redeemedOfferType: EventValue(redeemedOfferType), .billingRetry: billingRetry.map(EventValue.bool) ?? .null,
            .gracePeriodExpiresDate: gracePeriodExpiresDate.map(EventLine.time) ?? .null,
            .priceIncreaseStatus: EventValue(priceIncreaseStatus),
        ]
    }
}

/// The bytes of one event line as `CanonicalJSONWriter` writes them, for the decision line written on
/// every realtime request: constant parts are copied as they are, and strings are escaped only where
/// a byte needs it.
struct LineWriter {
    private var json: CanonicalJSONWriter

    init(capacity: Int) {
        json = CanonicalJSONWriter(capacity: capacity)
    }

    var bytes: [UInt8] {
        get { json.bytes }
        set { json.bytes = newValue }
    }

    /// JSON the caller spelt out (keys with their quotes, commas and colons).
    mutating func raw(_ text: StaticString) {
        json.bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    mutating func string(_ value: String?) {
        guard let value else { return raw("null") }
        json.string(value)
    }

    mutating func integer(_ value: Int64) {
        json.integer(value)
    }
}
