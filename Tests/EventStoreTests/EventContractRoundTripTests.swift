import EventContract
import EventStore
@testable import Experiments
import Foundation
import RetentionMessagingModels
import Testing

/// What the writer puts on a line, the reader takes off it: every member the contract declares is on
/// the line, JSON-decoded equal to the writer's value, and every member the results reader reads
/// comes back equal through its own parser.
@Suite("Event contract round trip")
struct EventContractRoundTripTests {
    static let decisions = [
        DecisionFacts(time: 1_795_000_000_123, environment: "production", requestIdentifier: "r-\"1\"\n", customer: String(repeating: "ab", count: 32),
                      keyId: "0badc0de", productId: "com.example.monthly", localeRequested: "de-AT", localeServed: "de-DE", flow: "cancel",
                      rule: "arm-a", splitGroup: "upsell", splitControl: true, answer: .promotionalOffer, messageIdentifier: "m\\1",
                      offerIdentifier: "half-price", alternateProductId: nil, snapshot: "sha256:00", latencyMicros: 812)
            .withLayout("arm-a*:0-4500,arm-b:4500-9000,holdout:9000-10000"),
        DecisionFacts(time: 0, environment: "sandbox", requestIdentifier: nil, customer: nil, keyId: "k", productId: nil,
                      localeRequested: nil, localeServed: nil, flow: nil, rule: nil, splitGroup: nil, splitControl: false,
                      answer: .refused, messageIdentifier: nil, offerIdentifier: nil, alternateProductId: nil, snapshot: nil, latencyMicros: 0),
        DecisionFacts(time: 1_700_000_000_999, environment: "production", requestIdentifier: "r", customer: String(repeating: "0f", count: 32),
                      keyId: "k", productId: "p", localeRequested: "ja", localeServed: "ja", flow: "f", rule: "r", splitGroup: nil,
                      splitControl: false, answer: .alternateProduct, messageIdentifier: "m", offerIdentifier: nil, alternateProductId: "é",
                      snapshot: "s", latencyMicros: 9_223_372_036_854_775_807),
        DecisionFacts(time: 1_795_000_000_500, environment: "production", requestIdentifier: "r2", customer: String(repeating: "1e", count: 32),
                      keyId: "k", productId: "p", localeRequested: "de-DE", localeServed: "de-DE", flow: "f", rule: "germany", splitGroup: nil,
                      splitControl: false, answer: .message, messageIdentifier: "m", offerIdentifier: nil, alternateProductId: nil,
                      snapshot: "s", latencyMicros: 700).withKnown(KnownFacts(source: .table, asOf: 1_794_000_000_000, storefront: "DEU",
                                                                             tenureBand: "3-12m", offerWithin90Days: true, billing: .grace)),
    ]

    static let outcomes = [
        OutcomeFacts(time: 1_795_000_100_000, environment: "production", notificationUUID: "3F2504E0-4F89-41D3-9A0C-0305E82C3301",
                     notificationType: NotificationType.offerRedeemed.rawValue, subtype: nil, customer: String(repeating: "ab", count: 32),
                     keyId: "0badc0de", productId: "com.example.monthly", autoRenewProductId: "com.example.yearly", autoRenewStatus: 1,
                     offerType: 2, offerIdentifier: "half-price", price: 4990, currency: "EUR", effectiveDate: 1_795_000_099_000,
                     expiresDate: 1_797_592_099_000, source: .push),
        OutcomeFacts(time: 1_795_000_200_000, environment: "sandbox", notificationUUID: "9b7d3c1e-0000-4000-8000-00000000abcd",
                     notificationType: NotificationType.didChangeRenewalStatus.rawValue, subtype: NotificationSubtype.autoRenewDisabled.rawValue,
                     customer: String(repeating: "c3", count: 32), keyId: "k", productId: nil, autoRenewProductId: nil,
                     autoRenewStatus: 0, offerType: nil, offerIdentifier: nil, price: nil, currency: nil, effectiveDate: nil,
                     expiresDate: nil, source: .pull),
    ]

    @Test("a decision line written by serve reads back equal, member by member")
    func decisionLinesRoundTrip() throws {
        for facts in Self.decisions {
            let eventId = EventLine.newEventId()
            try Self.check(facts.record(eventId: eventId), stream: .decisions, members: facts.members(eventId: eventId))
        }
    }

    @Test("an outcome line reads back equal, member by member")
    func outcomeLinesRoundTrip() throws {
        for facts in Self.outcomes {
            try Self.check(facts.record(), stream: .outcomes, members: facts.members)
        }
    }

    static func check(_ record: EventRecord, stream: EventStream, members: [EventField: EventValue]) throws {
        #expect(record.stream == stream)
        #expect(Set(members.keys) == Set(stream.fields))

        // Every declared member is on the line, with the writer's value.
        let object = try #require(try JSONSerialization.jsonObject(with: Data(record.line)) as? [String: Any])
        #expect(Set(object.keys) == Set(stream.fields.map(\.rawValue)))
        for field in stream.fields {
            #expect(decoded(object[field.rawValue], like: members[field]) == members[field], "\(stream.lineType) \(field.rawValue)")
        }

        // Every member the results reader reads comes back through its parser.
        var parser = EventLineParser()
        let event = try #require(try record.line.withUnsafeBufferPointer { try parser.parse($0, isOutcome: stream == .outcomes) })
        for field in EventLineParser.read where stream.fields.contains(field) {
            #expect(parsed(field, event, parser) == expected(field, members[field]!), "\(stream.lineType) \(field.rawValue)")
        }
    }

    /// A JSON-decoded value as an `EventValue`; Foundation gives booleans and integers as one number
    /// type, so the writer's value says which was meant.
    static func decoded(_ value: Any?, like written: EventValue?) -> EventValue? {
        switch (value, written) {
        case (is NSNull, _): .null
        case (let text as String, _): .string(text)
        case (let number as NSNumber, .bool?): .bool(number.boolValue)
        case (let number as NSNumber, _): .integer(number.int64Value)
        default: nil
        }
    }

    /// The writer's value as the parser keeps it: answers it does not count are `other`, ids are lowercase.
    static func expected(_ field: EventField, _ value: EventValue) -> EventValue {
        guard field == .answer, case .string(let text) = value else { return value }
        return .string(DecisionAnswer(rawValue: text).map { Answer($0).name } ?? "other")
    }

    static func parsed(_ field: EventField, _ event: Event, _ parser: EventLineParser) -> EventValue? {
        func text(_ id: Int32) -> EventValue { EventValue(parser.interner.string(id)) }
        func time(_ millis: Int64) -> EventValue { millis == Event.absent ? .null : .string(EventTime.format(millis)) }
        func number(_ value: Int64) -> EventValue { value == Event.absent ? .null : .integer(value) }
        func hex(_ value: UInt64, _ digits: Int) -> String {
            let text = String(value, radix: 16)
            return String(repeating: "0", count: digits - text.count) + text
        }
        switch field {
        case .answer: return .string(event.answer.name)
        case .arm: return text(event.arm)
        case .customer:
            guard event.hasCustomer else { return .null }
            let words = [event.customer.a, event.customer.b, event.customer.c, event.customer.d]
            return .string(words.map { hex($0, 16) }.joined())
        case .eventId:
            guard event.hasId else { return .null }
            let high = event.id.high, low = event.id.low
            return .string("\(hex(high >> 32, 8))-\(hex(high >> 16 & 0xFFFF, 4))-\(hex(high & 0xFFFF, 4))-"
                           + "\(hex(low >> 48, 4))-\(hex(low & 0xFFFF_FFFF_FFFF, 12))")
        case .flow: return text(event.flow)
        case .keyId: return text(event.customer.keyId)
        case .localeRequested: return text(event.locale)
        case .latencyMicros: return number(event.latencyMicros)
        case .purchaseDate: return time(event.purchaseDate)
        case .messageIdentifier: return text(event.message)
        case .offerIdentifier: return text(event.offer)
        case .alternateProductId: return text(event.alternateProduct)
        case .productId: return text(event.product)
        case .rule: return text(event.rule)
        case .splitControl: return .bool(event.splitControl)
        case .splitGroup: return text(event.splitGroup)
        case .splitLayout: return text(event.splitLayout)
        case .time: return time(event.time)
        case .autoRenewProductId: return text(event.autoRenewProduct)
        case .currency: return text(event.currency)
        case .effectiveDate: return time(event.effectiveDate)
        case .expiresDate: return time(event.expiresDate)
        case .notificationType: return text(event.notificationType)
        case .offerType: return number(event.offerType)
        case .price: return number(event.price)
        case .subtype: return text(event.subtype)
        case .storefront: return text(event.storefront)
        case .tenureBand: return text(event.tenureBand)
        case .billing: return text(event.billing)
        case .offerWithin90Days:
            let name = parser.interner.string(event.offerRecent)
            return name.map { .bool($0 == EventLineParser.offerRecentNames.yes) } ?? .null
        default: return nil
        }
    }
}

extension DecisionFacts {
    func withKnown(_ known: KnownFacts) -> DecisionFacts {
        var facts = self
        facts.known = known
        return facts
    }

    func withLayout(_ layout: String) -> DecisionFacts {
        var facts = self
        facts.splitLayout = layout
        return facts
    }
}
