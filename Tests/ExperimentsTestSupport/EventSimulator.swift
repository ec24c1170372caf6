import Foundation
import EventContract
import TestSupport
@testable import Experiments

/// Writes decision and outcome events by the event contract for simulated customers whose true
/// behaviour the test sets: each customer is exposed once (sometimes twice) to one arm, turns
/// auto-renew off within 24 hours with probability `1 − keepRate`, and if kept renews at the end of
/// the period with probability `renewRate`.
struct EventSimulator {
    struct Arm {
        var rule: String
        var keepRate: Double
        var renewRate: Double = 0.8
        var splitControl = false
        var answer = "message"
        var offer: String?
        /// For an arm answering `alternateProduct`: the product it offers, to which half its kept customers switch.
        var alternateProduct: String?
        /// The arm's share of customers, relative to the other arms' (nil for all: an even split).
        var weight: Double?
        /// Share of the arm's decisions serve answered later than Apple's 700 ms.
        var lateShare = 0.0
        /// The keep rate of the arm's customers in a storefront, where it differs from `keepRate`.
        var keepRateBy: [String: Double] = [:]
        /// When set, the arm's customers instead stay subscribed until a loss time drawn with this
        /// constant daily hazard (true share still subscribed d days after exposure: e^(−hazard·d)),
        /// and are lost then by one of the ways the App Store reports it (see `lossTimes`).
        var lossHazard: Double?
    }

    var flow = "cancel-flow"
    var splitGroup: String? = "yearly-upsell"
    var arms: [Arm]
    var customers: Int
    /// The first exposure's time; exposures spread evenly over `days`.
    var start: Int64 = EventTime.parse("2026-10-01T00:00:00.000Z")!
    var days: Int = 10
    var environment = "production"
    /// Share of lines written twice (a retried upload, or pull and push of one notification).
    var duplicateShare = 0.02
    /// Share of customers whose period's expiry was never seen before their exposure.
    var unknownExpiryShare = 0.1
    /// Added to every outcome's time: a clock that stamps outcomes differently from decisions.
    var outcomeClockOffset: Int64 = 0
    /// Added to every decision's time (the other direction of a clock mix-up).
    var decisionClockOffset: Int64 = 0
    /// The currencies customers pay in, one drawn per customer when there are several.
    var currencies = ["USD"]
    /// The storefronts customers come from (the decision's `storefront`), one drawn per customer; none by default.
    var storefronts: [String] = []
    /// The tenure bands customers come from (the decision's `tenureBand`), one drawn per customer with
    /// equal chances, and what each adds to every arm's `renewRate`: a fact known before the exposure
    /// that predicts renewing, while each arm's effect is the same for everyone. None by default, when
    /// it draws no random numbers, so every other simulation stays as it was.
    var tenureBands: [(band: String, renewShift: Double)] = []
    /// Every way a customer can take an offer, and the takings that do not count: kept customers of an
    /// offer arm who did not redeem it at once may get it with their renewal (a DID_RENEW carrying the
    /// offer), and renewed customers sometimes redeem the offer or switch product after renewing, which
    /// "took offer" must not count. Off by default, when it draws no random numbers, so every other
    /// simulation stays as it was.
    var takingPaths = false
    /// Every payment is notified once more two days later (an AUTO_RENEW_ENABLED carrying the same
    /// transaction), as Apple's notifications carry the latest transaction: money must count it once.
    /// Off by default, so other simulations stay as they were.
    var paymentEchoes = false
    /// Share of customers who do not renew at their expiry but, after the EXPIRED, renew within the
    /// grace period (a billing problem solved): "not renewed" at first, "renewed" later. Off by default,
    /// when it draws no random numbers, so every other simulation stays as it was.
    var recoveries = 0.0
    /// The alternate product is a yearly plan (59.99 for a year).
    static let alternatePrice: Int64 = 59990

    /// Every charge the simulated customers made, and each customer's first exposure: the truth the
    /// money figures are checked against.
    struct Payment {
        var customer: String
        var purchase: Int64
        var price: Int64
        var currency: String
    }
    private(set) var payments: [Payment] = []
    private(set) var firstExposures: [(customer: String, rule: String, time: Int64)] = []
    /// For the customers of arms with a `lossHazard`: when they were first exposed and when they were
    /// lost — the truth the retention curve is checked against.
    private(set) var lossTimes: [(rule: String, exposure: Int64, loss: Int64)] = []

    /// Per rule: the customers whose horizon and lag have passed at `now`, those who have not, and
    /// what the decided paid within the horizon, per currency — from the simulation's own ledger.
    func paidTruth(now: Int64, horizon: Int64, lag: Int64 = 7 * EventTime.day) -> [String: (decided: Int, pending: Int, paid: [String: Int64])] {
        var byCustomer: [String: [Payment]] = [:]
        for payment in payments { byCustomer[payment.customer, default: []].append(payment) }
        var truth: [String: (decided: Int, pending: Int, paid: [String: Int64])] = [:]
        for exposure in firstExposures {
            var row = truth[exposure.rule] ?? (0, 0, [:])
            if exposure.time + horizon + lag <= now {
                row.decided += 1
                for payment in byCustomer[exposure.customer] ?? [] where payment.purchase > exposure.time && payment.purchase <= exposure.time + horizon {
                    row.paid[payment.currency, default: 0] += payment.price
                }
            } else {
                row.pending += 1
            }
            truth[exposure.rule] = row
        }
        return truth
    }

    /// The layout serve records, when the test sets it apart from the arms' true weights (a split
    /// configured 50/50 whose customers arrive 48/52).
    var recordedLayout: String?

    /// The group's layout as serve records it: by default the arms' weights as consecutive bucket ranges.
    var layout: String {
        if let recordedLayout { return recordedLayout }
        let total = arms.reduce(0) { $0 + ($1.weight ?? 1) }
        var lower = 0
        return arms.enumerated().map { index, arm in
            let upper = index == arms.count - 1 ? 10_000 : lower + Int((10_000 * (arm.weight ?? 1) / total).rounded())
            defer { lower = upper }
            return "\(arm.rule)\(arm.splitControl ? "*" : ""):\(lower)-\(upper)"
        }.joined(separator: ",")
    }

    /// Lines per (stream, partition, writer).
    private(set) var segments: [String: [String]] = [:]

    static let keyId = "0badc0de"
    static let product = "com.example.stillpoint.monthly"

    mutating func run(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        segments = [:]
        payments = []
        firstExposures = []
        lossTimes = []
        for _ in 0 ..< customers {
            let customer = random.hex(64)
            let arm: Arm
            if arms.allSatisfy({ $0.weight == nil }) {
                arm = arms[Int(random.below(Int64(arms.count)))]
            } else {
                var draw = random.uniform() * arms.reduce(0) { $0 + ($1.weight ?? 1) }
                arm = arms.first { draw -= $0.weight ?? 1; return draw < 0 } ?? arms[arms.count - 1]
            }
            let exposure = start + random.below(Int64(days) * EventTime.day)
            let currency = currencies.count > 1 ? currencies[Int(random.below(Int64(currencies.count)))] : currencies[0]
            let storefront = storefronts.isEmpty ? nil : storefronts[Int(random.below(Int64(storefronts.count)))]
            let tenure = tenureBands.isEmpty ? nil : tenureBands[Int(random.below(Int64(tenureBands.count)))]
            if let hazard = arm.lossHazard {
                lose(&random, customer, arm, exposure: exposure, hazard: hazard, currency: currency)
                continue
            }
            let expiry: Int64
            if random.chance(unknownExpiryShare) {
                expiry = exposure + EventTime.day + random.below(28 * EventTime.day)
            } else {
                let renewedAt = exposure - EventTime.day - random.below(28 * EventTime.day)
                expiry = renewedAt + 30 * EventTime.day
                outcome(&random, customer, "DID_RENEW", nil, time: renewedAt + 300_000, effective: renewedAt, expires: expiry,
                        price: 9990, currency: currency, purchase: renewedAt)
            }
            // The transaction current at the exposure: what later notifications carry until a new charge.
            var current = (purchase: expiry - 30 * EventTime.day, price: Int64(9990), expires: expiry)
            firstExposures.append((customer, arm.rule, exposure))
            decision(&random, customer, arm, time: exposure, storefront: storefront, tenureBand: tenure?.band)
            if random.chance(0.2) {
                decision(&random, customer, arm, time: exposure + EventTime.hour + random.below(3 * EventTime.day), storefront: storefront,
                         tenureBand: tenure?.band)
            }
            let kept = random.chance(storefront.flatMap { arm.keepRateBy[$0] } ?? arm.keepRate)
            if !kept {
                outcome(&random, customer, "DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED",
                        time: exposure + 1 + random.below(24 * EventTime.hour - 1), effective: nil, expires: expiry,
                        price: paymentEchoes ? current.price : nil, currency: currency, purchase: paymentEchoes ? current.purchase : nil)
                outcome(&random, customer, "EXPIRED", "VOLUNTARY", time: expiry + 60_000, effective: nil, expires: expiry, price: nil)
                continue
            }
            var renewalOffer: String?
            if let offer = arm.offer, random.chance(0.5) {
                let redeemedAt = exposure + 60_000 + random.below(EventTime.hour)
                outcome(&random, customer, "OFFER_REDEEMED", nil, time: redeemedAt, effective: exposure,
                        expires: expiry, price: 4990, currency: currency, offer: offer, purchase: redeemedAt - 1000)
                pay(&random, customer, at: redeemedAt - 1000, price: 4990, currency: currency, expires: expiry, offer: offer)
                current = (redeemedAt - 1000, 4990, expiry)
            } else if takingPaths, let offer = arm.offer, random.chance(0.4) {
                renewalOffer = offer
            }
            // The renewal's productId and autoRenewProductId. A customer who switches does so in one of three
            // ways: a DID_CHANGE_RENEWAL_PREF, then a renewal into the product; with no notification seen,
            // a renewal into the product already set back for the period after; or a renewal of the old
            // product that sets the new one for the next. One who switched and does not renew expires set to it.
            var renewalProduct = Self.product
            var nextProduct = Self.product
            if let alternate = arm.alternateProduct, random.chance(0.5) {
                switch random.below(3) {
                case 0:
                    outcome(&random, customer, "DID_CHANGE_RENEWAL_PREF", nil, time: exposure + 60_000 + random.below(EventTime.hour),
                            effective: nil, expires: expiry, price: nil, autoRenewProduct: alternate)
                    (renewalProduct, nextProduct) = (alternate, alternate)
                case 1: renewalProduct = alternate
                default: nextProduct = alternate
                }
            }
            if random.chance(arm.renewRate + (tenure?.renewShift ?? 0)) {
                let price = renewalOffer != nil ? 4990 : renewalProduct == Self.product ? 9990 : Self.alternatePrice
                let renewedTo = expiry + (renewalProduct == Self.product ? 30 : 365) * EventTime.day
                outcome(&random, customer, "DID_RENEW", nil, time: expiry + 300_000, effective: expiry, expires: renewedTo,
                        price: price, currency: currency,
                        offer: renewalOffer, product: renewalProduct, autoRenewProduct: nextProduct, purchase: expiry)
                pay(&random, customer, at: expiry, price: price, currency: currency, expires: renewedTo, offer: renewalOffer, product: renewalProduct)
                if takingPaths, random.chance(0.3) {
                    if let offer = arm.offer {
                        outcome(&random, customer, "OFFER_REDEEMED", nil, time: expiry + EventTime.day, effective: expiry + EventTime.day,
                                expires: expiry + 30 * EventTime.day, price: 4990, currency: currency, offer: offer,
                                purchase: expiry + EventTime.day)
                        pay(&random, customer, at: expiry + EventTime.day, price: 4990, currency: currency, expires: expiry + 30 * EventTime.day,
                            offer: offer)
                    }
                    if let alternate = arm.alternateProduct, nextProduct != alternate {
                        outcome(&random, customer, "DID_CHANGE_RENEWAL_PREF", nil, time: expiry + EventTime.day, effective: nil,
                                expires: expiry + 30 * EventTime.day, price: nil, autoRenewProduct: alternate)
                    }
                }
            } else {
                outcome(&random, customer, "EXPIRED", "VOLUNTARY", time: expiry + 60_000, effective: nil, expires: expiry, price: nil,
                        autoRenewProduct: renewalProduct != Self.product ? renewalProduct : nextProduct)
                if recoveries > 0, random.chance(recoveries) {
                    let renewedAt = expiry + EventTime.day + random.below(5 * EventTime.day)
                    outcome(&random, customer, "DID_RENEW", "BILLING_RECOVERY", time: renewedAt + 300_000, effective: renewedAt,
                            expires: renewedAt + 30 * EventTime.day, price: 9990, currency: currency, purchase: renewedAt)
                    pay(&random, customer, at: renewedAt, price: 9990, currency: currency, expires: renewedAt + 30 * EventTime.day)
                }
            }
        }
    }

    /// A customer of an arm with a loss hazard: subscribed at the exposure, lost at a time drawn from
    /// the hazard — by a REFUND (20%), a REVOKE (10%), an EXPIRED at the end of their period (60%), or
    /// with no notification at all, their period simply ending unrenewed (10%).
    private mutating func lose(_ random: inout SplitMix64, _ customer: String, _ arm: Arm, exposure: Int64, hazard: Double, currency: String) {
        let days = -log(max(1e-12, 1 - random.uniform())) / hazard
        let loss = exposure + max(1, Int64(days * Double(EventTime.day)))
        let way = random.uniform()
        let renewedAt = exposure - EventTime.day - random.below(28 * EventTime.day)
        let expiry = way < 0.3 ? exposure + 400 * EventTime.day : loss
        outcome(&random, customer, "DID_RENEW", nil, time: renewedAt + 300_000, effective: renewedAt, expires: expiry,
                price: 9990, currency: currency, purchase: renewedAt)
        firstExposures.append((customer, arm.rule, exposure))
        lossTimes.append((arm.rule, exposure, loss))
        decision(&random, customer, arm, time: exposure)
        if way < 0.2 {
            outcome(&random, customer, "REFUND", nil, time: loss, effective: nil, expires: expiry, price: nil)
        } else if way < 0.3 {
            outcome(&random, customer, "REVOKE", nil, time: loss, effective: nil, expires: expiry, price: nil)
        } else if way < 0.9 {
            outcome(&random, customer, "EXPIRED", "VOLUNTARY", time: loss + 60_000, effective: nil, expires: loss, price: nil)
        }
    }

    /// Records a charge in the ledger and, with `paymentEchoes`, notifies its transaction once more.
    private mutating func pay(_ random: inout SplitMix64, _ customer: String, at purchase: Int64, price: Int64, currency: String,
                              expires: Int64, offer: String? = nil, product: String = Self.product) {
        payments.append(Payment(customer: customer, purchase: purchase, price: price, currency: currency))
        guard paymentEchoes else { return }
        outcome(&random, customer, "DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_ENABLED", time: purchase + 2 * EventTime.day, effective: nil,
                expires: expires, price: price, currency: currency, offer: offer, product: product, purchase: purchase)
    }

    private mutating func decision(_ random: inout SplitMix64, _ customer: String, _ arm: Arm, time: Int64, storefront: String? = nil,
                                   tenureBand: String? = nil) {
        var fields: [String: Field] = [
            "alternateProductId": arm.alternateProduct.map { .string($0) } ?? .null, "answer": .string(arm.answer), "arm": splitGroup == nil ? .null : .string(arm.rule),
            "customer": .string(customer), "environment": .string(environment), "eventId": .string(random.uuid()),
            "flow": .string(flow), "keyId": .string(Self.keyId),
            "latencyMicros": .integer(arm.lateShare > 0 && random.chance(arm.lateShare) ? 700_001 + random.below(300_000) : 800 + random.below(400)),
            "localeRequested": .string("en-GB"), "localeServed": .string(random.chance(0.5) ? "en-GB" : "en-US"),
            "messageIdentifier": arm.answer == "none" ? .null : .string("message-\(arm.rule)"),
            "offerIdentifier": arm.offer.map { .string($0) } ?? .null, "productId": .string(Self.product),
            "requestIdentifier": .string(random.uuid()), "rule": .string(arm.rule), "schema": .integer(1),
            "snapshot": .string("sha256:" + String(repeating: "ab", count: 32)), "splitControl": .bool(arm.splitControl),
            "splitGroup": splitGroup.map { .string($0) } ?? .null, "splitLayout": splitGroup == nil ? .null : .string(layout),
            "time": .string(EventTime.format(time + decisionClockOffset)),
            "type": .string("decision"), "storefront": storefront.map { .string($0) } ?? .null,
            "tenureBand": tenureBand.map { .string($0) } ?? .null,
        ]
        if arm.answer == "none" { fields["messageIdentifier"] = .null }
        write(&random, "decisions", time + decisionClockOffset, fields)
    }

    private mutating func outcome(_ random: inout SplitMix64, _ customer: String, _ type: String, _ subtype: String?, time: Int64,
                                  effective: Int64?, expires: Int64?, price: Int64?, currency: String = "USD", offer: String? = nil,
                                  product: String = Self.product, autoRenewProduct: String = Self.product, purchase: Int64? = nil) {
        let id = random.uuid()
        let time = time + outcomeClockOffset
        let effective = effective.map { $0 + outcomeClockOffset }
        let expires = expires.map { $0 + outcomeClockOffset }
        let fields: [String: Field] = [
            "autoRenewProductId": .string(autoRenewProduct), "autoRenewStatus": .integer(subtype == "AUTO_RENEW_DISABLED" ? 0 : 1),
            "currency": price == nil ? .null : .string(currency), "customer": .string(customer),
            "effectiveDate": .string(EventTime.format(effective ?? time)), "environment": .string(environment), "eventId": .string(id),
            "expiresDate": expires.map { .string(EventTime.format($0)) } ?? .null, "keyId": .string(Self.keyId),
            "notificationType": .string(type), "notificationUUID": .string(id), "offerIdentifier": offer.map { .string($0) } ?? .null,
            "offerType": offer == nil ? .null : .integer(2), "price": price.map { .integer($0) } ?? .null, "productId": .string(product),
            "purchaseDate": purchase.map { .string(EventTime.format($0 + outcomeClockOffset)) } ?? .null,
            "schema": .integer(1), "source": .string(random.chance(0.5) ? "pull" : "push"), "subtype": subtype.map { .string($0) } ?? .null,
            "time": .string(EventTime.format(time)), "type": .string("outcome"),
        ]
        write(&random, "outcomes", time, fields)
    }

    enum Field {
        case string(String)
        case integer(Int64)
        case bool(Bool)
        case null
    }

    /// Every line of a stream has the same keys, so their byte order is worked out once.
    /// Every line of a stream has the contract's keys, in the contract's order.
    static let decisionKeys = EventStream.decisions.fields.map(\.rawValue)
    static let outcomeKeys = EventStream.outcomes.fields.map(\.rawValue)

    private mutating func write(_ random: inout SplitMix64, _ stream: String, _ time: Int64, _ fields: [String: Field]) {
        var line = "{"
        let keys = stream == "decisions" ? Self.decisionKeys : Self.outcomeKeys
        for (index, key) in keys.enumerated() {
            if index > 0 { line += "," }
            line += "\"\(key)\":"
            // Members the simulation does not model (the customer facts) are null, as for a customer nothing is known of.
            switch fields[key] ?? .null {
            case .string(let text): line += "\"\(text)\""
            case .integer(let number): line += String(number)
            case .bool(let flag): line += flag ? "true" : "false"
            case .null: line += "null"
            }
        }
        line += "}"
        let (date, hour) = EventTime.partition(time)
        let folder = "events/v1/\(stream)/environment=\(environment)/date=\(date)/hour=\(hour)"
        let writer = random.chance(0.5) ? "replica-a" : "replica-b"
        segments["\(folder)/\(writer)-0000000001.ndjson", default: []].append(line)
        if random.chance(duplicateShare) {
            segments["\(folder)/pull-0000000007.ndjson", default: []].append(line)
        }
    }

    /// Writes every segment under `root` as the contract lays them out.
    func write(to root: URL) throws {
        for (path, lines) in segments {
            let url = root.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: url)
        }
    }

    var source: MemoryEventSource {
        MemoryEventSource(files: segments.mapValues { Data(($0.joined(separator: "\n") + "\n").utf8) })
    }
}

/// Segments held in memory under their contract paths, for tests that run many simulations.
struct MemoryEventSource: EventSource {
    var files: [String: Data] {
        didSet { folders = Self.index(files) }
    }
    private var folders: [String: [String]]

    init(files: [String: Data]) {
        self.files = files
        folders = Self.index(files)
    }

    private static func index(_ files: [String: Data]) -> [String: [String]] {
        var folders: [String: [String]] = [:]
        for path in files.keys {
            let folder = path[..<(path.lastIndex(of: "/") ?? path.endIndex)]
            folders[String(folder) + "/", default: []].append(path)
        }
        return folders.mapValues { $0.sorted() }
    }

    private func prefix(_ stream: EventStream, _ environment: String) -> String {
        "events/v1/\(stream.rawValue)/environment=\(environment)/"
    }

    func partitions(of stream: EventStream, environment: String) throws -> [EventPartition] {
        let base = prefix(stream, environment)
        var found: Set<EventPartition> = []
        for path in files.keys where path.hasPrefix(base) {
            let parts = path.dropFirst(base.count).split(separator: "/")
            if let partition = EventPartition(date: String(parts[0].dropFirst(5)), hour: String(parts[1].dropFirst(5))) {
                found.insert(partition)
            }
        }
        return found.sorted()
    }

    func segments(of stream: EventStream, environment: String, in partition: EventPartition) throws -> [EventSegment] {
        let folder = prefix(stream, environment) + partition.path + "/"
        return (folders[folder] ?? []).map { EventSegment(location: $0) }
    }

    func read(_ segment: EventSegment, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        // Small chunks, so lines span chunks as they do when reading large files.
        let data = files[segment.location] ?? Data()
        var offset = 0
        while offset < data.count {
            let end = min(data.count, offset + 4096)
            try data[offset ..< end].withUnsafeBytes(body)
            offset = end
        }
    }
}
