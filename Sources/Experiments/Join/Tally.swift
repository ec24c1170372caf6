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
struct OpenExposure {
    var customer: CustomerKey
    var arm: ArmKey
    var dimension: Int32
    var time: Int64
    /// The end of the renewal window: the expiry current at exposure plus the grace period, or the cap.
    var deadline: Int64
    /// When no later outcome can change anything: the later of 24 hours and the deadline.
    var close: Int64
    var answer: Answer
    var offer: Int32
    var alternateProduct: Int32
    var turnedOff = false
    var took = false
    var discount: Int64 = Event.absent
    var discountCurrency: Int32 = 0
    var renewed = false
    var renewedPrice: Int64 = Event.absent
    var renewedCurrency: Int32 = 0
    var expired = false
    /// The next open exposure of the same customer, or -1.
    var next: Int32 = -1
}
