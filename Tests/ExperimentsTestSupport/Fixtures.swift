import Basics
import EventContract
@testable import Experiments
import Foundation
import TestSupport

/// Hand-written decision and outcome lines, and a source that files them as serve and outcomes pull
/// do: what the join's tests and the results page's tests build their stories from.
protocol JoinFixtures {}

/// The fixtures, for a test that is not itself a `JoinFixtures` suite.
enum Join: JoinFixtures {}

extension JoinFixtures {
    static var alice: String { String(repeating: "a1", count: 32) }
    static var bob: String { String(repeating: "b2", count: 32) }

    static func decision(_ customer: String, _ time: String, rule: String = "control", answer: String = "message", id: String = UUID().uuidString.lowercased(),
                         splitControl: Bool = false, group: String? = "g", offer: String? = nil, latency: Int? = nil) -> String {
        let groupValue = group.map { "\"\($0)\"" } ?? "null"
        let offerValue = offer.map { "\"\($0)\"" } ?? "null"
        return #"{"alternateProductId":null,"answer":"\#(answer)","arm":"\#(rule)","customer":"\#(customer)","environment":"production","eventId":"\#(id)","flow":"cancel-flow","keyId":"0badc0de","latencyMicros":\#(latency.map(String.init) ?? "null"),"localeServed":"en-US","messageIdentifier":"m","offerIdentifier":\#(offerValue),"productId":"p","rule":"\#(rule)","schema":1,"splitControl":\#(splitControl),"splitGroup":\#(groupValue),"time":"\#(time)","type":"decision"}"#
    }

    static func outcome(_ customer: String, _ time: String, _ type: String, subtype: String? = nil, effective: String? = nil,
                        expires: String? = nil, price: Int? = nil, offer: String? = nil, id: String = UUID().uuidString.lowercased(),
                        purchase: String? = nil, currency: String = "USD", offerType: Int? = nil) -> String {
        func text(_ value: String?) -> String { value.map { "\"\($0)\"" } ?? "null" }
        return #"{"autoRenewProductId":"p","currency":\#(price == nil ? "null" : "\"" + currency + "\""),"purchaseDate":\#(text(purchase)),"customer":"\#(customer)","effectiveDate":"\#(effective ?? time)","eventId":"\#(id)","expiresDate":\#(text(expires)),"keyId":"0badc0de","notificationType":"\#(type)","offerIdentifier":\#(text(offer)),"offerType":\#(offerType.map(String.init) ?? (offer == nil ? "null" : "2")),"price":\#(price.map(String.init) ?? "null"),"productId":"p","subtype":\#(text(subtype)),"time":"\#(time)","type":"outcome"}"#
    }

    /// Files each line in the partition of its own time, unless `hour` says otherwise.
    static func source(decisions: [String], outcomes: [String], misfiled: [(line: String, date: String, hour: String)] = []) -> MemoryEventSource {
        var files: [String: Data] = [:]
        func add(_ stream: String, _ line: String, date: String? = nil, hour: String? = nil) {
            let time = line.range(of: #""time":""#).map { String(line[$0.upperBound...].prefix(24)) }!
            let (d, h) = EventTime.partition(EventTime.parse(time)!)
            let path = "events/v1/\(stream)/environment=production/date=\(date ?? d)/hour=\(hour ?? h)/w-0000000001.ndjson"
            files[path, default: Data()].append(Data((line + "\n").utf8))
        }
        decisions.forEach { add("decisions", $0) }
        outcomes.forEach { add("outcomes", $0) }
        misfiled.forEach { add("outcomes", $0.line, date: $0.date, hour: $0.hour) }
        return MemoryEventSource(files: files)
    }

    static func report(_ source: MemoryEventSource, now: String) throws -> ResultsReport {
        try ResultsReport.compute(source: source, environment: "production",
                                  now: UTCTime(milliseconds: EventTime.parse(now)!))
    }
}

/// A split group re-weighted mid-experiment: its two layouts, the arm of a bucket under each, and a
/// decision line in either period.
protocol PeriodFixtures {}

enum Period: PeriodFixtures {}

extension PeriodFixtures {
    static var first: String { "keep-message*:0-5000,upsell-yearly:5000-10000" }
    static var second: String { "keep-message*:0-7000,upsell-yearly:7000-10000" }

    static func decision(_ customer: String, time: Int64, rule: String, layout: String, random: inout SplitMix64) -> String {
        #"{"alternateProductId":null,"answer":"message","arm":"\#(rule)","customer":"\#(customer)","environment":"production","eventId":"\#(random.hex(8))-\#(random.hex(4))-4\#(random.hex(3))-8\#(random.hex(3))-\#(random.hex(12))","flow":"cancel-flow","keyId":"0badc0de","localeServed":"en-US","messageIdentifier":"m-\#(rule)","offerIdentifier":null,"productId":"com.example.stillpoint.monthly","rule":"\#(rule)","schema":1,"splitControl":\#(rule == "keep-message"),"splitGroup":"yearly-upsell","splitLayout":"\#(layout)","time":"\#(EventTime.format(time))","type":"decision"}"#
    }

    /// The arm of a bucket under a layout, as serve assigns it.
    static func arm(_ bucket: Int, _ layout: String) -> String {
        bucket < (layout == first ? 5000 : 7000) ? "keep-message" : "upsell-yearly"
    }
}

/// The two arms the simulations compare: a control and a treatment ten points better.
protocol SimulationFixtures {}

enum Simulation: SimulationFixtures {}

extension SimulationFixtures {
    static var control: EventSimulator.Arm { EventSimulator.Arm(rule: "keep-message", keepRate: 0.30, splitControl: true) }
    static var treatment: EventSimulator.Arm { EventSimulator.Arm(rule: "upsell-yearly", keepRate: 0.40, answer: "promotionalOffer", offer: "yearly-half-price") }
}
