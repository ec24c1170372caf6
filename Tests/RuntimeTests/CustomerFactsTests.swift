import RetentionMessagingModels
import Testing

/// The facts kept about a customer and the conditions rules put on them: a newer signed fact wins
/// whatever order notifications arrive in, and a fact nobody signed is unknown — a condition on it
/// does not hold unless the rule says `unknown: match`.
@Suite("Customer facts and conditions")
struct CustomerFactsTests {
    static let day: Int64 = 86_400_000
    /// 2026-11-28T00:00:00Z.
    static let now: Int64 = 1_795_824_000_000

    @Test("a notification signed earlier never overwrites what a later one said, in any order of arrival")
    func olderNotificationsNeverOverwriteNewer() {
        let observations = [
            FactsObservation(signedDate: Self.now - 40 * Self.day, hasTransaction: true, storefront: "USA", currency: "USD", price: 9_990,
                             originalPurchaseDate: Self.now - 400 * Self.day, ownership: .purchased, offerRedeemed: .introductory,
                             offerDate: Self.now - 400 * Self.day, hasRenewal: true, inBillingRetry: false),
            FactsObservation(signedDate: Self.now - 10 * Self.day, hasTransaction: true, storefront: "DEU", currency: "EUR", price: 4_990,
                             originalPurchaseDate: Self.now - 400 * Self.day, ownership: .familyShared, offerRedeemed: .promotional,
                             offerDate: Self.now - 10 * Self.day,
                             hasRenewal: true, inBillingRetry: true, gracePeriodExpires: Self.now + 3 * Self.day, priceIncreaseStatus: 0),
            FactsObservation(signedDate: Self.now - 20 * Self.day, hasTransaction: false, hasRenewal: true, inBillingRetry: false),
        ]
        var seen: Set<CustomerFacts> = []
        for order in [[0, 1, 2], [2, 1, 0], [1, 0, 2], [1, 2, 0], [0, 2, 1], [2, 0, 1]] {
            var facts = CustomerFacts()
            for index in order { facts.fold(observations[index]) }
            seen.insert(facts)
        }
        #expect(seen.count == 1)
        let facts = seen.first!
        #expect(facts.storefront == "DEU")
        #expect(facts.price == 4_990)
        #expect(facts.ownership == .familyShared)
        #expect(facts.billing(at: Self.now) == .grace)
        #expect(facts.billing(at: Self.now + 4 * Self.day) == .retry)
        #expect(facts.priceIncrease == .pending)
        #expect(facts.offersRedeemed == [.introductory: Self.now - 400 * Self.day, .promotional: Self.now - 10 * Self.day])
        #expect(facts.tenureDays(at: Self.now) == 400)
        #expect(facts.tenureMonths(at: Self.now) == 13)
    }

    @Test("tenure in months counts calendar months in UTC: from 31 January, 28 February is not yet a month")
    func tenureInCalendarMonths() {
        let january31: Int64 = 1_769_817_600_000 // 2026-01-31T00:00:00Z
        let facts = CustomerFacts(firstPurchase: january31)
        #expect(facts.tenureMonths(at: january31 + 28 * Self.day) == 0) // 2026-02-28
        #expect(facts.tenureMonths(at: january31 + 29 * Self.day) == 1) // 2026-03-01
        #expect(facts.tenureMonths(at: january31 + 365 * Self.day) == 12) // 2027-01-31
        #expect(facts.tenureMonths(at: january31 - 1) == nil)
    }

    @Test("a condition on an unknown fact does not hold, unless the rule says unknown: match")
    func unknownIsAValue() {
        let known = CustomerFacts(storefront: "DEU", firstPurchase: Self.now - 40 * Self.day, ownership: .familyShared,
                                  inBillingRetry: false, priceIncrease: PriceIncreaseState.none, transactionAsOf: Self.now - Self.day,
                                  renewalAsOf: Self.now - Self.day)
        let conditions: [CustomerConditions] = [
            CustomerConditions(storefronts: ["DEU"]),
            CustomerConditions(tenureAtLeast: CustomerPeriod(count: 30, unit: .days), tenureBelow: CustomerPeriod(count: 2, unit: .months)),
            CustomerConditions(noOfferRedeemedWithin: CustomerPeriod(count: 90, unit: .days)),
            CustomerConditions(billing: [.none]),
            CustomerConditions(priceIncrease: [.none]),
            CustomerConditions(ownership: [.familyShared]),
        ]
        for condition in conditions {
            #expect(condition.holds(for: known, at: Self.now), "\(condition.summary)")
            #expect(!condition.holds(for: nil, at: Self.now), "\(condition.summary) held for a customer nothing is known of")
            #expect(!condition.holds(for: CustomerFacts(), at: Self.now), "\(condition.summary) held with every fact unknown")
            var lenient = condition
            lenient.unknownMatches = true
            #expect(lenient.holds(for: nil, at: Self.now), "\(condition.summary) with unknown: match")
        }
        #expect(CustomerConditions(storefronts: ["USA"]).firstFailure(for: known, at: Self.now) == "storefront DEU not in [USA]")
        #expect(CustomerConditions(storefronts: ["USA"]).firstFailure(for: nil, at: Self.now) == "storefront unknown")
    }

    @Test("an offer redeemed within a period is told apart by type and by date")
    func offerHistoryByTypeAndDate() {
        let facts = CustomerFacts(offersRedeemed: [.promotional: Self.now - 20 * Self.day, .introductory: Self.now - 300 * Self.day],
                                  transactionAsOf: Self.now - Self.day)
        let within30 = CustomerPeriod(count: 30, unit: .days)
        #expect(CustomerConditions(offerRedeemedWithin: within30).holds(for: facts, at: Self.now))
        #expect(CustomerConditions(offerRedeemedWithin: within30, offerKinds: [.promotional]).holds(for: facts, at: Self.now))
        #expect(!CustomerConditions(offerRedeemedWithin: within30, offerKinds: [.retention, .winBack]).holds(for: facts, at: Self.now))
        #expect(!CustomerConditions(noOfferRedeemedWithin: within30).holds(for: facts, at: Self.now))
        #expect(CustomerConditions(noOfferRedeemedWithin: CustomerPeriod(count: 20, unit: .days)).holds(for: facts, at: Self.now))
        #expect(CustomerConditions(noOfferRedeemedWithin: within30, offerKinds: [.introductory]).holds(for: facts, at: Self.now))
    }

    @Test("periods are whole days or months; anything else is refused")
    func periodsParse() {
        #expect(CustomerPeriod(text: "30d") == CustomerPeriod(count: 30, unit: .days))
        #expect(CustomerPeriod(text: "6m") == CustomerPeriod(count: 6, unit: .months))
        for bad in ["", "d", "-3d", "3 d", "3w", "1.5m", "3D", "１d", "9999999d"] {
            #expect(CustomerPeriod(text: bad) == nil, "\(bad)")
        }
    }
}
