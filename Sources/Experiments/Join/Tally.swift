/// The counts of one report row, added up as customers' outcome windows close.
struct Tally {
    var exposed = 0
    var kept = 0
    var notKept = 0
    var keptPending = 0
    var offered = 0
    var took = 0
    /// Offered, not taken yet, and the renewal deadline not passed.
    var tookPending = 0
    var renewed = 0
    var notRenewed = 0
    var renewedPending = 0
    /// Currency (interned) → milliunits.
    var discountGiven: [Int32: Int64] = [:]
    var revenueRetained: [Int32: Int64] = [:]
    /// Exposures whose answer took longer than Apple waits (700 ms): the customer saw Apple's fallback.
    var answeredLate = 0
    /// Customers who redeemed an App Store Connect retention offer (`offerType` 5) after the answer,
    /// before their renewal deadline.
    var storeOffers = 0
    /// Customers whose paid horizon and its lag have passed, and those still inside them.
    var paidDecided = 0
    var paidPending = 0
    /// Currency (interned) → what the decided customers who paid in it paid.
    var paid: [Int32: PaidSums] = [:]
    /// Payments in a currency other than the customer's first within the horizon: not counted.
    var otherCurrencyPayments = 0
    /// Per combination of pre-exposure facts (`ResultsJoin.factCells`): the decided outcomes.
    var byFacts: [UInt16: FactOutcomes] = [:]
}

/// What serve knew of a customer when it first answered them (interned; null when unknown).
struct FactCell: Hashable {
    static let overflow = UInt16.max

    var storefront: Int32
    var tenureBand: Int32
    var offerWithin90Days: Int32
    var billing: Int32
}

/// The decided outcomes of one row's customers who share one combination of facts.
struct FactOutcomes {
    var kept = 0
    var notKept = 0
    var renewed = 0
    var notRenewed = 0
    /// Customers whose paid horizon and lag have passed, and per currency (interned) what those who
    /// paid in it paid: Σx and Σx², milliunits.
    var paidDecided = 0
    var paid: [Int32: (total: Double, squares: Double)] = [:]
}

/// The sums behind a mean paid per customer and its variance, in one currency.
struct PaidSums {
    var total: Int64 = 0
    /// Σ paid², as a double: a squared price in milliunits overflows 64 bits at a few thousand customers.
    var squares: Double = 0
    var payments = 0
    var longPayments = 0

    mutating func add(_ x: OpenExposure) {
        total += x.paid
        squares += Double(x.paid) * Double(x.paid)
        payments += Int(x.payments)
        longPayments += Int(x.longPayments)
    }
}

/// A report row's identity: the snapshot rule `<flow>/<rule>` (the arm is the rule in its split group),
/// and for an arm the layout of its group when the customer was first exposed: each configuration
/// of a group is a period of its own.
struct ArmKey: Hashable, Comparable {
    var flow: Int32
    var rule: Int32
    /// The interned `splitLayout`; 0 outside a group, or for decisions recorded before layouts were.
    var layout: Int32 = 0

    static func < (lhs: ArmKey, rhs: ArmKey) -> Bool {
        (lhs.flow, lhs.rule, lhs.layout) < (rhs.flow, rhs.rule, rhs.layout)
    }
}

/// What the decisions say about a rule: its split group, arm, control mark (from its latest exposure)
/// and every answer it gave.
struct ArmInfo {
    var splitGroup: Int32 = 0
    var arm: Int32 = 0
    var splitControl = false
    var answers: Set<UInt8> = []
    /// The first exposure counted for this row.
    var firstExposure = Int64.max
}

/// One customer's first exposure to one rule, open while outcomes can still change its counts.
///
/// The join holds one per customer whose window is open (hundreds of thousands at ten million decisions),
/// so the fields are ordered to leave no padding, the outcome marks share a byte, and the customer is
/// kept as the hash their entry in the join's `CustomerTable` is found by (8 bytes, not the 36 of the
/// key): 104 bytes.
struct OpenExposure {
    /// `CustomerTable.hash` of the customer.
    var customerHash: Int
    var dimension: Int32
    var time: Int64
    /// The end of the renewal window: the expiry current at exposure plus the grace period, or the cap.
    var deadline: Int64
    var discount: Int64 = Event.absent
    var renewedPrice: Int64 = Event.absent
    var arm: ArmKey
    /// What taking the answer means: the offer of a promotional offer, the product of an alternate
    /// product; null for every other answer.
    var offered: Int32
    /// What the customer paid within the horizon (in `paidCurrency`, the first payment's), and the
    /// latest charge counted (the exposure's own time until one is).
    var paid: Int64 = 0
    var lastPaid: Int64 = 0
    var discountCurrency: Int32 = 0
    var renewedCurrency: Int32 = 0
    var paidCurrency: Int32 = 0
    /// The next open exposure of the same customer, or -1.
    var next: Int32 = -1
    var answer: Answer
    private var marks: UInt8 = 0
    var payments: UInt8 = 0
    /// Payments for a period longer than the horizon (a yearly plan), counted whole.
    var longPayments: UInt8 = 0
    var otherCurrencyPayments: UInt8 = 0
    /// The customer's combination of pre-exposure facts (`ResultsJoin.factCells`).
    var facts: UInt16 = 0

    init(customerHash: Int, arm: ArmKey, dimension: Int32, time: Int64, deadline: Int64, answer: Answer, offered: Int32) {
        self.customerHash = customerHash
        self.arm = arm
        self.dimension = dimension
        self.time = time
        self.deadline = deadline
        self.answer = answer
        self.offered = offered
    }

    var turnedOff: Bool {
        get { mark(0) }
        set { setMark(0, newValue) }
    }

    var took: Bool {
        get { mark(1) }
        set { setMark(1, newValue) }
    }

    var renewed: Bool {
        get { mark(2) }
        set { setMark(2, newValue) }
    }

    var expired: Bool {
        get { mark(3) }
        set { setMark(3, newValue) }
    }

    var answeredLate: Bool {
        get { mark(4) }
        set { setMark(4, newValue) }
    }

    var tookStoreOffer: Bool {
        get { mark(5) }
        set { setMark(5, newValue) }
    }

    /// Whether the answer had something to take: an offer, or an alternate product.
    var isOffered: Bool {
        (answer == .promotionalOffer || answer == .alternateProduct) && offered != Interner.null
    }

    private func mark(_ bit: UInt8) -> Bool {
        marks & (1 << bit) != 0
    }

    private mutating func setMark(_ bit: UInt8, _ value: Bool) {
        if value { marks |= 1 << bit } else { marks &= ~(1 << bit) }
    }
}

/// One customer's first exposure to one row, followed until they are no longer subscribed or the
/// report's `now`.
struct SurvivalWatch {
    var time: Int64
    /// The row's place in the join's list of watched rows (16 bytes a watch, not 24 with the key itself).
    var arm: Int32
    /// The customer's next watch, or -1.
    var next: Int32
}

/// A row's customers, by whole hours from their first exposure to when they were lost or last seen
/// subscribed (censored): what the retention curve is made of.
struct SurvivalCounts {
    var lost: [Int32: Int] = [:]
    var censored: [Int32: Int] = [:]

    mutating func add(_ hours: Int32, lost isLost: Bool) {
        if isLost { lost[hours, default: 0] += 1 } else { censored[hours, default: 0] += 1 }
    }
}
