// A rule's `match.customer` block: conditions on the facts Apple signed about the customer
// (`CustomerFacts`). Shared by the manifest, the snapshot and the decision engine, so all three read
// one meaning. A condition on a fact that is not known does not hold, unless the rule says
// `unknown: match`.

/// A length of time as a manifest writes it: `30d` (days) or `6m` (calendar months, UTC).
public struct CustomerPeriod: Sendable, Hashable, Codable, CustomStringConvertible, Comparable {
    public enum Unit: String, Sendable, Hashable, Codable { case days = "d", months = "m" }

    public var count: Int64
    public var unit: Unit

    public init(count: Int64, unit: Unit) {
        self.count = count
        self.unit = unit
    }

    /// `30d`, `6m`; nil for anything else (a negative count, another unit, spaces).
    public init?(text: String) {
        guard let last = text.last, let unit = Unit(rawValue: String(last)) else { return nil }
        let digits = text.dropLast()
        guard !digits.isEmpty, digits.count <= 6, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let count = Int64(digits) else { return nil }
        self.init(count: count, unit: unit)
    }

    public var description: String { "\(count)\(unit.rawValue)" }

    /// Roughly in days, to compare and bound periods (a month as 30.44 days).
    public var approximateDays: Double { unit == .days ? Double(count) : Double(count) * 30.436875 }

    public static func < (lhs: CustomerPeriod, rhs: CustomerPeriod) -> Bool { lhs.approximateDays < rhs.approximateDays }

    /// Whether at least this period has passed from `start` to `end`.
    public func hasPassed(from start: Int64, to end: Int64) -> Bool {
        guard end >= start else { return false }
        switch unit {
        case .days: return (end - start) / 86_400_000 >= count
        case .months: return CivilMonths.completed(from: start, to: end) >= count
        }
    }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let period = CustomerPeriod(text: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "'\(text)' is not a period like 30d or 6m"))
        }
        self = period
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// Every condition must hold; nil conditions are not checked.
public struct CustomerConditions: Sendable, Hashable, Codable {
    /// The customer's storefront is one of these (ISO 3166-1 alpha-3).
    public var storefronts: [String]?
    /// Subscribed at least this long (from the first purchase).
    public var tenureAtLeast: CustomerPeriod?
    /// Subscribed less than this long.
    public var tenureBelow: CustomerPeriod?
    /// Redeemed an offer of `offerKinds` (any kind when nil) less than this long ago.
    public var offerRedeemedWithin: CustomerPeriod?
    /// Redeemed no offer of `offerKinds` (any kind when nil) in this long.
    public var noOfferRedeemedWithin: CustomerPeriod?
    public var offerKinds: [OfferKind]?
    public var billing: [BillingState]?
    public var priceIncrease: [PriceIncreaseState]?
    public var ownership: [Ownership]?
    /// True: a condition whose fact is unknown holds. Absent: it does not.
    public var unknownMatches: Bool?

    public init(storefronts: [String]? = nil, tenureAtLeast: CustomerPeriod? = nil, tenureBelow: CustomerPeriod? = nil,
                offerRedeemedWithin: CustomerPeriod? = nil, noOfferRedeemedWithin: CustomerPeriod? = nil, offerKinds: [OfferKind]? = nil,
                billing: [BillingState]? = nil, priceIncrease: [PriceIncreaseState]? = nil, ownership: [Ownership]? = nil,
                unknownMatches: Bool? = nil) {
        self.storefronts = storefronts
        self.tenureAtLeast = tenureAtLeast
        self.tenureBelow = tenureBelow
        self.offerRedeemedWithin = offerRedeemedWithin
        self.noOfferRedeemedWithin = noOfferRedeemedWithin
        self.offerKinds = offerKinds
        self.billing = billing
        self.priceIncrease = priceIncrease
        self.ownership = ownership
        self.unknownMatches = unknownMatches == true ? true : nil
    }

    /// No condition at all.
    public var isEmpty: Bool {
        storefronts == nil && tenureAtLeast == nil && tenureBelow == nil && offerRedeemedWithin == nil
            && noOfferRedeemedWithin == nil && billing == nil && priceIncrease == nil && ownership == nil
    }

    /// Whether the customer meets every condition at `time` (the request's signed date). On the
    /// request path: nothing is formatted.
    public func holds(for facts: CustomerFacts?, at time: Int64) -> Bool {
        failure(for: facts, at: time) == nil
    }

    /// The first condition the customer does not meet, worded for explanations; nil when all hold.
    public func firstFailure(for facts: CustomerFacts?, at time: Int64) -> String? {
        guard let failure = failure(for: facts, at: time) else { return nil }
        let offer = (offerKinds ?? []).isEmpty ? "offer" : (offerKinds ?? []).map(\.name).joined(separator: " or ") + " offer"
        switch failure {
        case .unknown(let fact): return "\(fact) unknown"
        case .storefront(let storefront): return "storefront \(storefront) not in [\((storefronts ?? []).joined(separator: ", "))]"
        case .tenureBelow(let first):
            return "tenure \(Self.tenure(from: first, to: time)) is below \(tenureAtLeast?.description ?? "")"
        case .tenureNotBelow(let first):
            return "tenure \(Self.tenure(from: first, to: time)) is not below \(tenureBelow?.description ?? "")"
        case .noRecentOffer: return "no \(offer) redeemed within \(offerRedeemedWithin?.description ?? "")"
        case .recentOffer: return "\(offer) redeemed within \(noOfferRedeemedWithin?.description ?? "")"
        case .billing(let state):
            return "billing \(state.rawValue) not in [\((billing ?? []).map(\.rawValue).joined(separator: ", "))]"
        case .priceIncrease(let state):
            return "price increase \(state.rawValue) not in [\((priceIncrease ?? []).map(\.rawValue).joined(separator: ", "))]"
        case .ownership(let owned):
            return "ownership \(owned.rawValue) not in [\((ownership ?? []).map(\.rawValue).joined(separator: ", "))]"
        }
    }

    /// Why a condition does not hold, with what was known; worded only when explained.
    enum Failure: Equatable {
        case unknown(String)
        case storefront(String)
        case tenureBelow(firstPurchase: Int64), tenureNotBelow(firstPurchase: Int64)
        case noRecentOffer, recentOffer
        case billing(BillingState)
        case priceIncrease(PriceIncreaseState)
        case ownership(Ownership)
    }

    func failure(for facts: CustomerFacts?, at time: Int64) -> Failure? {
        let unknownHolds = unknownMatches == true
        if let storefronts {
            if let storefront = facts?.storefront {
                if !storefronts.contains(storefront) { return .storefront(storefront) }
            } else if !unknownHolds {
                return .unknown("storefront")
            }
        }
        if tenureAtLeast != nil || tenureBelow != nil {
            if let first = facts?.firstPurchase, time >= first {
                if let tenureAtLeast, !tenureAtLeast.hasPassed(from: first, to: time) { return .tenureBelow(firstPurchase: first) }
                if let tenureBelow, tenureBelow.hasPassed(from: first, to: time) { return .tenureNotBelow(firstPurchase: first) }
            } else if !unknownHolds {
                return .unknown("tenure")
            }
        }
        if offerRedeemedWithin != nil || noOfferRedeemedWithin != nil {
            if let facts, facts.transactionAsOf > .min {
                let last = facts.lastRedemption(of: offerKinds ?? [])
                // With only the newest transaction seen, a redemption seen decides; its absence does not.
                let absenceUnknown = !facts.offerHistoryComplete && !unknownHolds
                if let within = offerRedeemedWithin {
                    guard let last, !within.hasPassed(from: last, to: time) else {
                        return absenceUnknown ? .unknown("offer history") : .noRecentOffer
                    }
                }
                if let within = noOfferRedeemedWithin {
                    if let last, !within.hasPassed(from: last, to: time) { return .recentOffer }
                    if absenceUnknown { return .unknown("offer history") }
                }
            } else if !unknownHolds {
                return .unknown("offer history")
            }
        }
        if let billing {
            if let state = facts?.billing(at: time) {
                if !billing.contains(state) { return .billing(state) }
            } else if !unknownHolds {
                return .unknown("billing state")
            }
        }
        if let priceIncrease {
            if let state = facts?.priceIncrease {
                if !priceIncrease.contains(state) { return .priceIncrease(state) }
            } else if !unknownHolds {
                return .unknown("price increase")
            }
        }
        if let ownership {
            if let owned = facts?.ownership {
                if !ownership.contains(owned) { return .ownership(owned) }
            } else if !unknownHolds {
                return .unknown("ownership")
            }
        }
        return nil
    }

    /// `40d` under a month, else `3m`.
    static func tenure(from start: Int64, to end: Int64) -> String {
        let months = CivilMonths.completed(from: start, to: end)
        return months == 0 ? "\((end - start) / 86_400_000)d" : "\(months)m"
    }

    /// The conditions as one line people read, in the manifest's words.
    public var summary: String {
        var parts: [String] = []
        if let storefronts { parts.append("storefronts [\(storefronts.joined(separator: ", "))]") }
        if let tenureAtLeast { parts.append("tenure ≥ \(tenureAtLeast)") }
        if let tenureBelow { parts.append("tenure < \(tenureBelow)") }
        let kinds = offerKinds.map { " (" + $0.map(\.name).joined(separator: ", ") + ")" } ?? ""
        if let offerRedeemedWithin { parts.append("offer redeemed within \(offerRedeemedWithin)\(kinds)") }
        if let noOfferRedeemedWithin { parts.append("no offer redeemed within \(noOfferRedeemedWithin)\(kinds)") }
        if let billing { parts.append("billing [\(billing.map(\.rawValue).joined(separator: ", "))]") }
        if let priceIncrease { parts.append("price increase [\(priceIncrease.map(\.rawValue).joined(separator: ", "))]") }
        if let ownership { parts.append("ownership [\(ownership.map(\.rawValue).joined(separator: ", "))]") }
        if unknownMatches == true { parts.append("unknown facts match") }
        return parts.joined(separator: ", ")
    }
}
